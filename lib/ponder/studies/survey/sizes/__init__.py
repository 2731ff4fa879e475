"""How big each survey experiment is at each profile."""
