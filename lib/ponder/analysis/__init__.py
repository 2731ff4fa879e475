"""Analysis: what the figures and ledger rows read off trained runs.

Functions here compute quantities from a run's outputs (errors, distances, accuracies); they train
nothing, so no run's cache key depends on them and changing one re-judges without retraining.
"""
