"""How big every experiment is at each profile: one module per experiment module, each a table
``{profile: sizes}`` read with :func:`ponder.profiles.by_profile`.

These modules are not part of any run's code version (:func:`ponder.runs.code_version` hashes every
module a run's experiment imports, except these): every entry of a row either enters the config of the
runs it shapes, or only picks which runs a figure trains (``seeds``, the grids). So re-sizing one
profile retrains that profile's runs and no other's; a change to what a run computes belongs in
the experiment module, whose code the run keys hash.
"""
