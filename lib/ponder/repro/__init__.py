"""Reproduction: executing the notebooks, regression numbers, verify, provenance, the README's blocks."""
