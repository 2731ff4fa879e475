"""ACM (Adaptive Computation Modules, arXiv 2312.10193) on the digits and speech stand-ins: which runs
each ACM notebook trains (:func:`jobs`, :func:`upstream`).

:mod:`.phases` holds the data, the base model and the three phases; :mod:`.baselines` MoEfication,
A-ViT and ZTW; :mod:`.ablations` acm-8 and acm-10; :mod:`.tuning` each method's learning rate; what the
notebooks read off the runs, and the checks of the claims, are in :mod:`ponder.analysis.acm`.
:func:`ponder.experiments.train_all` trains :func:`jobs` without plotting.
"""

from functools import partial

from ... import parallel
from . import tuning
from .ablations import ABLATIONS, PRETRAINING, ablation, granularity, pretraining_variant
from .baselines import avit_depths, dense, early_exits, halting, moefied
from .phases import acm_model, budgets, gates_pretrained, seeds, settled_phase1, sizes


def jobs(profile: str, seed: int = 0) -> dict[str, list[parallel.Job]]:
    """The runs each ACM notebook trains, as jobs for :func:`ponder.parallel.prefetch`.

    No two jobs of a notebook share a run (N = 4 at equal cost and the "full" pre-training variant
    are the "all" ablation, so they are left out here) and each job's unshared upstream runs are its own.
    The judged comparisons train every seed of :func:`seeds`; acm-10's describing runs and acm-5's warm start the first.
    """
    every = seeds(profile, seed)
    return {
        "acm_vit": [
            job
            for s in every
            for job in [partial(acm_model, profile, b, s) for b in budgets(profile)]
            + [partial(moefied, profile, s), partial(early_exits, profile, s), partial(dense, profile, s)]
            + [partial(halting, profile, d, s) for d in avit_depths(profile)]
            + [partial(settled_phase1, profile, s)]
        ]
        + [partial(settled_phase1, profile, seed, warm_start=True)],  # acm-5's warm start, described on the first seed
        "acm_ablations": [partial(ablation, profile, name, s) for s in every for name in ABLATIONS]
        + [partial(granularity, profile, n, seed) for n in sizes(profile)["learner_counts"] if n != 4]
        + [partial(pretraining_variant, profile, v, seed) for v in PRETRAINING if v != "full"]
        + [partial(acm_model, profile, budgets(profile)[-1], seed)],
        "acm_speech": [
            job
            for s in every
            for job in [partial(acm_model, profile, b, s, task="speech") for b in budgets(profile, "speech")]
            + [partial(moefied, profile, s, task="speech"), partial(dense, profile, s, task="speech")]
        ],
    }


def upstream(profile: str, seed: int = 0) -> dict[str, list[parallel.Job]]:
    """The runs the jobs of each ACM notebook share: its task's base model and phases I-II, per seed, and the runs
    its methods' learning rates are chosen on (:func:`.tuning.tuning_jobs`; the ablations read ACM's)."""
    task = {"acm_speech": "speech"}
    chosen_on = {
        "acm_vit": tuning.tuning_jobs(profile),
        "acm_ablations": [job for job in tuning.tuning_jobs(profile) if job.func is acm_model],
        "acm_speech": tuning.tuning_jobs(profile, "speech"),
    }
    return {
        notebook: [
            partial(gates_pretrained, profile, s, task=task.get(notebook, "digits")) for s in seeds(profile, seed)
        ]
        + chosen_on[notebook]
        for notebook in jobs(profile, seed)
    }
