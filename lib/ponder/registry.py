"""The registry of runs: which runs each notebook trains ahead, and what those runs read first.

Per notebook, its **jobs**, declared runs (:mod:`ponder.specs`, planned from the run cache alone), cover every run
it reads, and its **upstream**,
where its jobs share work, the runs or training streams they read (ACM's base models and phases I-II,
the C-PVR streams, the runs learning rates are chosen on), made first. ``make figures`` trains the
jobs of every notebook in one pool before executing the notebooks (:func:`training`); a notebook calls
:func:`prefetch` and then the same functions, which find the runs in the cache.

No run imports this module, so it is in no run's cache key (:func:`ponder.runs.code_version`): moving a
run from one profile's list to another's, or adding a notebook, retrains nothing. What a profile trains
is read from its sizes (:mod:`ponder.sizes`). Under ``torchrun`` every run trains with
DistributedDataParallel::

    torchrun --nproc_per_node=8 -m ponder.experiments --profile paper
"""

import argparse
from collections.abc import Callable
from functools import partial

import torch.distributed as dist

from . import parallel
from .checks import check_choice
from .experiments import hyla, hyper_ut, hyper_ut_scratchpad, hyper_ut_vision, survey, survey_parity
from .experiments.acm import ablations, baselines, phases, tuning
from .profiles import PROFILES, by_profile, check_device

Jobs = dict[str, list[parallel.Job]]  # {notebook: jobs}


# -- Hyper-UT (arXiv 2310.08866) ---------------------------------------------------------------
def hyper_ut_jobs(profile: str, seed: int = 0) -> Jobs:
    """The C-PVR runs of hut-2 to hut-6 and hut-10, and the explorer's (hut-3's six kinds on the first seed)."""
    H = hyper_ut
    return {
        "hyper_ut": H.leading(H.generalization_runs(profile, seed)) + H.leading(H.halting_runs(profile, seed)),
        "hyper_ut_depth": H.leading(H.depth_runs(profile, seed)),
        "hyper_ut_modules": H.leading(H.pool_runs(profile, seed)),
        "hyper_ut_explorer": [H.cpvr_run(kind, profile, seed) for kind in H.KINDS],
    }


def hut3_upstream(profile: str, seed: int = 0) -> list[parallel.Job]:
    """What hut-3's six kinds read: the C-PVR training stream and the lr-grid runs their rates are chosen on."""
    tuned = hyper_ut.tuning_jobs(profile, seed, [(kind, None) for kind in hyper_ut.KINDS])
    return hyper_ut.stream_chunks(profile, seed) + tuned


def hyper_ut_upstream(profile: str, seed: int = 0) -> Jobs:
    """The training streams of the C-PVR notebooks (:func:`ponder.experiments.hyper_ut.stream_chunks`) and the
    lr-grid runs their learning rates are chosen on (:func:`ponder.experiments.hyper_ut.tuning_jobs`)."""
    H = hyper_ut
    main = H.stream_chunks(profile, seed)
    kinds = [(k, None) for k in H.KINDS] + [
        (k, {"tau": t}) for t in by_profile(H.SIZES, profile)["tau_sweep"] for k in H.ACT_KINDS
    ]
    return {
        "hyper_ut": main + H.tuning_jobs(profile, seed, kinds),
        "hyper_ut_depth": H.stream_chunks(profile, seed, depth_grid=True),
        "hyper_ut_modules": main
        + H.tuning_jobs(profile, seed, [("hyper_act", m) for m in H.pool_configs(profile).values()]),
        "hyper_ut_explorer": hut3_upstream(profile, seed),
    }


def scratchpad_jobs(profile: str, seed: int = 0) -> Jobs:
    """hut-7: every target and seed of the scratch-pad notebook."""
    S = hyper_ut_scratchpad
    seeds = by_profile(S.SIZES, profile)["seeds"]
    return {"hyper_ut_scratchpad": [S.seq2seq_run(t, profile, seed + s) for s in seeds for t in S.TARGETS]}


def vision_jobs(profile: str, seed: int = 0) -> Jobs:
    """hut-8: every model of :func:`ponder.experiments.hyper_ut_vision.models` on every seed."""
    V = hyper_ut_vision
    return {
        "hyper_ut_vision": [
            V.vision_run(kind, profile, seed + offset, depth)
            for offset in by_profile(V.SIZES, profile)["seeds"]
            for kind, depth in V.models(profile).values()
        ]
    }


# -- the survey --------------------------------------------------------------------------------
def survey_jobs(profile: str, seed: int = 0) -> Jobs:
    """The C-PVR runs of survey-2, -3 and -4 (the Hyper-UT models are hut-3's)."""
    sizes, knobs = by_profile(hyper_ut.SIZES, profile), by_profile(survey.SURVEY, profile)
    kinds = ("transformer", "ut", "ut_act", "hyper", "hyper_act")
    table = [hyper_ut.cpvr_run(kind, profile, seed) for kind in kinds]
    return {
        "survey_early_exit": [survey.early_exit_run(profile, seed + s) for s in sizes["seeds"]],
        "survey_mod": [survey.mod_run(profile, c, seed) for c in knobs["capacities"]] + table[:1],
        "survey_table": table
        + [
            survey.early_exit_run(profile, seed),
            survey.mod_run(profile, knobs["table_capacity"], seed),
            survey.pondernet_run(profile, seed),
        ],
    }


def survey_upstream(profile: str, seed: int = 0) -> Jobs:
    """The survey's C-PVR notebooks read hut-3's training stream and the lr-grid runs its models are tuned on."""
    return dict.fromkeys(survey_jobs(profile, seed), hut3_upstream(profile, seed))


def parity_jobs(profile: str, seed: int = 0) -> Jobs:
    """survey-1: every parity run."""
    P = survey_parity
    return {"survey_parity": [*P.grid_runs(profile, seed).values(), *P.control_runs(profile, seed).values()]}


# -- HYLA (arXiv 2406.05816) -------------------------------------------------------------------
def hyla_jobs(profile: str, seed: int = 0) -> Jobs:
    """The sraven, fuzzy-logic and language-model runs of the HYLA notebooks, each at the rate chosen for its kind
    (:func:`ponder.experiments.hyla.tuned`, on the runs of :func:`hyla_upstream`)."""
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
    point of the profile's grid, on seed :data:`~ponder.experiments.hyla.TUNE_SEED` (none without a grid)."""
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


# -- ACM (arXiv 2312.10193) --------------------------------------------------------------------
def acm_jobs(profile: str, seed: int = 0) -> Jobs:
    """The runs each ACM notebook trains (N = 4 at equal cost and the "full" pre-training variant are the "all"
    ablation, so they are left out). The judged comparisons train every seed of
    :func:`ponder.experiments.acm.phases.seeds`; acm-10's describing runs and acm-5's warm start (where the profile
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
    (:func:`ponder.experiments.acm.tuning.tuning_jobs`; the ablations read ACM's)."""
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


# -- the registry ------------------------------------------------------------------------------
Family = tuple[Callable[[str, int], Jobs], Callable[[str, int], Jobs] | None]
FAMILIES: dict[str, Family] = {
    "hyper_ut": (hyper_ut_jobs, hyper_ut_upstream),
    "hyper_ut_scratchpad": (scratchpad_jobs, None),
    "hyper_ut_vision": (vision_jobs, None),
    "survey": (survey_jobs, survey_upstream),
    "survey_parity": (parity_jobs, None),
    "hyla": (hyla_jobs, hyla_upstream),
    "acm": (acm_jobs, acm_upstream),
}  # name -> (its notebooks' jobs, what they read first); ``python -m ponder.experiments NAME`` trains one


def notebook_jobs(profile: str, seed: int = 0) -> Jobs:
    """``{notebook: the jobs that train its runs}`` for every notebook whose runs can be trained ahead."""
    return {notebook: js for jobs, _ in FAMILIES.values() for notebook, js in jobs(profile, seed).items()}


def upstream_jobs(profile: str, seed: int = 0) -> Jobs:
    """``{notebook: the shared runs or streams its jobs read}`` for the notebooks that have them."""
    return {nb: js for _, upstream in FAMILIES.values() if upstream for nb, js in upstream(profile, seed).items()}


def prefetch(profile: str, notebook: str, seed: int = 0) -> int:
    """Train a notebook's runs ahead, side by side, one per core (:func:`ponder.parallel.prefetch`):
    what they read first, then each job as soon as that is there. Returns how many were trained."""
    jobs = notebook_jobs(profile, seed)
    todo = jobs[check_choice("notebook", notebook, tuple(jobs))]
    shared = upstream_jobs(profile, seed).get(notebook)
    return parallel.prefetch([], after=[(shared, todo)]) if shared else parallel.prefetch(todo)


def training(profile: str, seed: int = 0, notebooks: list[str] | None = None) -> tuple[list, list, Jobs]:
    """The runs of the named notebooks (default: all that train ahead), for :func:`ponder.parallel.plan`:
    the independent jobs; the groups ``(shared upstream, jobs built on it)``, one per notebook with an
    upstream; and ``{notebook: every job it needs}``. ``make figures`` trains them in one pool over all
    the notebooks (:func:`ponder.notebooks.run`)."""
    todo, upstream = notebook_jobs(profile, seed), upstream_jobs(profile, seed)
    names = [n for n in (notebooks or todo) if n in todo]
    groups = [(upstream[n], todo[n]) for n in names if n in upstream]
    independent = [job for n in names if n not in upstream for job in todo[n]]
    needed = {n: todo[n] + upstream.get(n, []) for n in names}
    return independent, groups, needed


def train_all(profile: str, seed: int = 0, names: list[str] | None = None) -> None:
    """Train the runs of the named families (default: every one of :data:`FAMILIES`): each notebook's
    jobs side by side (:func:`prefetch`), then each loaded, or trained if a worker left it."""
    names = names or list(FAMILIES)
    for name in names:
        check_choice("experiment", name, tuple(FAMILIES))
    for name in names:
        print(f"[{profile}] training {name}", flush=True)
        jobs, _ = FAMILIES[name]
        parallel.train_notebooks(jobs(profile, seed), partial(prefetch, profile, seed=seed))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m ponder.experiments",
        description="Train every run of the named experiments (default: all) without plotting.",
    )
    parser.add_argument("names", nargs="*", help=f"experiments to train, of {', '.join(FAMILIES)} (default: all)")
    parser.add_argument("--profile", default="quick", choices=PROFILES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        check_device(args.profile)
    except ValueError as error:  # a GPU profile without a GPU
        parser.error(str(error))
    train_all(args.profile, args.seed, args.names)
    if dist.is_initialized():  # under torchrun: leave together, then release the process group
        dist.barrier()
        dist.destroy_process_group()
