"""Which runs of the ACM notebooks train ahead and what they read first (the base models, the runs the
learning rates are chosen on). No run imports this module, so editing a list retrains nothing."""

from ...runner import parallel
from . import ablations, baselines, phases, tuning

Jobs = dict[str, list[parallel.Job]]  # {notebook: jobs}


def acm_jobs(profile: str, seed: int = 0) -> Jobs:
    """The runs each ACM notebook trains (N = 4 at equal cost and the "full" pre-training variant are the "all"
    ablation, so they are left out). The judged comparisons train every seed of
    :func:`ponder.studies.acm.phases.seeds`; acm-10's describing runs and acm-5's warm start (where the profile
    counts it) the first."""
    every, budgets, sizes = phases.seeds(profile, seed), phases.budgets, phases.sizes(profile)
    return {
        "acm_vit": [
            job
            for s in every
            for job in [tuning.acm_run(profile, b, s) for b in budgets(profile)]
            + [tuning.moefied_run(profile, s), tuning.early_exits_run(profile, s)]
            + [tuning.dense_run(profile, s)]
            + [tuning.halting_run(profile, d, s) for d in baselines.avit_depths(profile)]
            + [phases.settled_run(profile, s)]
        ]
        + ([phases.settled_run(profile, seed, warm_start=True)] if sizes["warm_start_count"] else []),
        "acm_ablations": [ablations.ablation_run(profile, name, s) for s in every for name in ablations.ABLATIONS]
        + [ablations.granularity_run(profile, n, seed) for n in sizes["learner_counts"] if n != 4]
        + [ablations.variant_run(profile, v, seed) for v in ablations.variants(profile) if v != "full"]
        + [tuning.acm_run(profile, budgets(profile)[-1], seed)],
        "acm_speech": [
            job
            for s in every
            for job in [tuning.acm_run(profile, b, s, task="speech") for b in budgets(profile, "speech")]
            + [tuning.moefied_run(profile, s, task="speech")]
            + [tuning.dense_run(profile, s, task="speech")]
        ],
    }


def acm_upstream(profile: str, seed: int = 0) -> Jobs:
    """What the jobs of each ACM notebook share: its task's base models (per seed), so that they train first, on
    every core, and the runs its methods' learning rates are chosen on
    (:func:`ponder.studies.acm.tuning.tuning_jobs`; the ablations read ACM's)."""
    task = {"acm_speech": "speech"}
    chosen_on = {
        "acm_vit": tuning.tuning_jobs(profile),
        "acm_ablations": [job for job in tuning.tuning_jobs(profile) if job.name.startswith("acm/phase3-")],
        "acm_speech": tuning.tuning_jobs(profile, "speech"),
    }
    return {
        notebook: [phases.base_run(profile, s, task.get(notebook, "digits")) for s in phases.seeds(profile, seed)]
        + chosen_on[notebook]
        for notebook in chosen_on
    }


FAMILIES = {"acm": (acm_jobs, acm_upstream)}  # name -> (its notebooks' jobs, what they read first)
