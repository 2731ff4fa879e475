"""The survey's techniques: ACT, PonderNet, early exit (CALM), Mixture-of-Depths."""
