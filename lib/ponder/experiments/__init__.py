"""The runs of the papers' experiments, one module per experiment: each run's config, its model, its
training and the evaluation it stores (its metrics).

A run's cache key hashes the code of every module its defining module imports
(:func:`ponder.runs.code_version`), so what is here is exactly what computes a run. Which runs each
notebook trains, and the command that trains them without plotting (``python -m ponder.experiments``),
are in :mod:`ponder.registry`, which no run imports: editing what a notebook trains retrains nothing.
"""
