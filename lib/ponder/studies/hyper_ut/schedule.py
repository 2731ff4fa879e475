"""Which Hyper-UT runs each notebook trains ahead (its jobs) and what they read first (its upstream): hut-2 to
hut-10's C-PVR runs, the scratch-pad's and HyperU-ViT's. No run imports this module, so editing a list retrains
nothing."""

from ...profiles import by_profile
from ...runner import parallel
from . import cpvr as hyper_ut
from . import cpvr_targets as T
from . import scratchpad as hyper_ut_scratchpad
from . import vision as hyper_ut_vision

Jobs = dict[str, list[parallel.Job]]  # {notebook: jobs}


def hyper_ut_jobs(profile: str, seed: int = 0) -> Jobs:
    """The C-PVR runs of hut-2 to hut-6 and hut-10, and the explorer's (hut-3's six kinds on the first seed)."""
    H = hyper_ut
    return {
        "hyper_ut": H.leading(T.generalization_runs(profile, seed)) + H.leading(T.halting_runs(profile, seed)),
        "hyper_ut_depth": H.leading(T.depth_runs(profile, seed)),
        "hyper_ut_modules": H.leading(T.pool_runs(profile, seed)),
        "hyper_ut_explorer": [H.cpvr_run(kind, profile, seed) for kind in H.KINDS],
    }


def hut3_upstream(profile: str, seed: int = 0) -> list[parallel.Job]:
    """What hut-3's six kinds read: the C-PVR training stream and the lr-grid runs their rates are chosen on."""
    tuned = hyper_ut.tuning_jobs(profile, seed, [(kind, None) for kind in hyper_ut.KINDS])
    return hyper_ut.stream_chunks(profile, seed) + tuned


def hyper_ut_upstream(profile: str, seed: int = 0) -> Jobs:
    """The training streams of the C-PVR notebooks (:func:`ponder.studies.hyper_ut.cpvr.stream_chunks`) and the
    lr-grid runs their learning rates are chosen on (:func:`ponder.studies.hyper_ut.cpvr.tuning_jobs`)."""
    H = hyper_ut
    main = H.stream_chunks(profile, seed)
    kinds = [(k, None) for k in H.KINDS] + [
        (k, {"tau": t}) for t in by_profile(H.SIZES, profile)["tau_sweep"] for k in H.ACT_KINDS
    ]
    return {
        "hyper_ut": main + H.tuning_jobs(profile, seed, kinds),
        "hyper_ut_depth": H.stream_chunks(profile, seed, depth_grid=True),
        "hyper_ut_modules": main
        + H.tuning_jobs(profile, seed, [("hyper_act", m) for m in T.pool_configs(profile).values()]),
        "hyper_ut_explorer": hut3_upstream(profile, seed),
    }


def scratchpad_jobs(profile: str, seed: int = 0) -> Jobs:
    """hut-7: every target and seed of the scratch-pad notebook."""
    S = hyper_ut_scratchpad
    seeds = by_profile(S.SIZES, profile)["seeds"]
    return {"hyper_ut_scratchpad": [S.seq2seq_run(t, profile, seed + s) for s in seeds for t in S.TARGETS]}


def vision_jobs(profile: str, seed: int = 0) -> Jobs:
    """hut-8: every model of :func:`ponder.studies.hyper_ut.vision.models` on every seed."""
    V = hyper_ut_vision
    return {
        "hyper_ut_vision": [
            V.vision_run(kind, profile, seed + offset, depth)
            for offset in by_profile(V.SIZES, profile)["seeds"]
            for kind, depth in V.models(profile).values()
        ]
    }


FAMILIES = {
    "hyper_ut": (hyper_ut_jobs, hyper_ut_upstream),
    "hyper_ut_scratchpad": (scratchpad_jobs, None),
    "hyper_ut_vision": (vision_jobs, None),
}  # name -> (its notebooks' jobs, what they read first)
