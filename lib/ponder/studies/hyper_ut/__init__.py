"""Hyper-UT and C-PVR (arXiv 2310.08866)."""
