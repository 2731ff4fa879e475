"""Attention as a Hypernetwork (arXiv 2406.05816): HYLA on sraven, fuzzy logic and text."""
