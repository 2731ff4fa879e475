"""Methods of your own, beside the papers', trained on their tasks and judged by the same rule.

A method here is one module that holds the idea and nothing else of the harness:

* the model: for a new way to halt, a *depth* module (``forward(core, h) -> Pondered``, as
  :class:`ponder.models.classifier.FixedDepth` and ``ACTDepth``) swapped into a C-PVR model of
  :func:`ponder.models.kinds.build`;
* its runs: declared with :func:`ponder.studies.survey.cpvr.survey_spec` (a :class:`ponder.runner.specs.Spec`), given a
  ``recipe`` of the config that builds the model, and ``code=__name__``, so that the run's key hashes this module
  and everything it imports (an edit retrains it, and nothing else);
* its claims: :class:`ponder.ledger.verdicts.Claim` rows judged with ``verdicts.greater`` / ``above`` on
  per-seed values against the papers' models in the run cache (``experiments.hyper_ut.train_cpvr``), which
  :func:`ponder.ledger.rows.record` writes into the profile's ledger.

:mod:`ponder.studies.survey.methods.converged` is the worked example (``docs/development.md``, "Your own method"), and
``tests/test_methods.py`` runs it end to end.
"""
