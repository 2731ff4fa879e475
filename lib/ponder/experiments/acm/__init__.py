"""ACM (Adaptive Computation Modules, arXiv 2312.10193) on the digits and speech stand-ins.

:mod:`.phases` holds the data, the base model and the three phases; :mod:`.baselines` MoEfication,
A-ViT and ZTW; :mod:`.ablations` acm-8 and acm-10; :mod:`.tuning` each method's learning rate. Which runs
each ACM notebook trains is in :mod:`ponder.registry`; what the notebooks read off the runs, and the checks
of the claims, are in :mod:`ponder.analysis.acm`.
"""
