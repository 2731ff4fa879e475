"""Which runs of the HYLA notebooks train ahead and what they read first (the tuning runs their rates are chosen
on). No run imports this module, so editing a list retrains nothing."""

from ...profiles import by_profile
from ...runner import parallel
from . import experiments as hyla

Jobs = dict[str, list[parallel.Job]]  # {notebook: jobs}


def hyla_jobs(profile: str, seed: int = 0) -> Jobs:
    """The sraven, fuzzy-logic and language-model runs of the HYLA notebooks, each at the rate chosen for its kind
    (:func:`ponder.studies.hyla.experiments.tuned`, on the runs of :func:`hyla_upstream`)."""
    H, sw = hyla, hyla.sweeps(profile)

    def sr(setups, seed=seed):
        return [H.tuned("sraven", s, profile, seed) for s in setups]

    def fz(setups, seed=seed):
        return [H.tuned("fuzzy", s, profile, seed) for s in setups]

    every, kinds = H.seeds_of(profile, seed), H.MAIN_KINDS
    return {
        "hyla_ablations": [
            job
            for s in every
            for job in sr([H.sraven_setup(profile, kind=kind) for kind in sw["ablations"]], s)
            + fz([H.fuzzy_setup(profile, kind=kind) for kind in sw["ablations"]], s)
        ],
        "hyla_fuzzy": fz(H.fuzzy_grid(profile))
        + [job for s in every[1:] for job in fz(H.fuzzy_drop_setups(profile), s)],
        "hyla_latent": sr([H.heads_setup(profile, kind, h) for kind in kinds for h in sw["heads"]])
        + sr([H.sraven_setup(profile, kind=kind, k=k) for kind in kinds for k in sw["ks"]]),
        "hyla_lm": [H.text_run(H.text_setup(profile, kind=kind), profile, s) for s in every for kind in kinds],
        "hyla_sraven": sr([row["setup"] for row in H.scaling_setups(profile)])
        + sr([H.sraven_setup(profile, kind=kind, holdout=h) for kind in kinds for h in sw["holdouts"]]),
    }


def hyla_upstream(profile: str, seed: int = 0) -> Jobs:
    """The tuning runs the HYLA notebooks' rates are chosen on: each kind's base sraven and fuzzy-logic run at every
    point of the profile's grid, on seed :data:`~ponder.studies.hyla.experiments.TUNE_SEED` (none without a grid)."""
    H, kinds = hyla, hyla.sweeps(profile)["ablations"]
    if by_profile(H.TUNING, profile) is None:
        return {}
    tuning = [
        H.task_spec(task, c, profile, H.TUNE_SEED)
        for task, setup in H.SETUPS.items()
        for kind in kinds
        for c in H.candidates(setup(profile, kind=kind), profile, task)
    ]
    return dict.fromkeys(("hyla_ablations", "hyla_fuzzy", "hyla_latent", "hyla_sraven"), tuning)


FAMILIES = {"hyla": (hyla_jobs, hyla_upstream)}  # name -> (its notebooks' jobs, what they read first)
