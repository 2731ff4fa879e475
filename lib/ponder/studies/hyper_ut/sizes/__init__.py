"""How big each Hyper-UT experiment is at each profile."""
