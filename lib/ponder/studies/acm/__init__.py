"""ACM (Adaptive Computation Modules, arXiv 2312.10193) on the digits and speech stand-ins.

:mod:`.phases` holds the data, the base model and the three phases; :mod:`.baselines` MoEfication,
A-ViT, ZTW and the dense fine-tuning, each declared at a given learning rate; :mod:`.tuning` each method at the
rate chosen for it on validation; :mod:`.ablations` acm-8 and acm-10. Which runs
each ACM notebook trains is in :mod:`ponder.repro.registry`; what the notebooks read off the runs, and the checks
of the claims, are in :mod:`ponder.studies.acm.analysis` (``methods``: acm-1 and acm-3 to acm-7; ``ablations``: acm-8
and acm-10; ``latency``: acm-9).
"""
