"""Which runs of the survey's notebooks train ahead and what they read first: survey-1's parity runs, survey-2 to
survey-4's C-PVR runs (beside hut-3's). No run imports this module, so editing a list retrains nothing."""

from ...profiles import by_profile
from ...runner import parallel
from ..hyper_ut import cpvr as hyper_ut
from ..hyper_ut.schedule import hut3_upstream
from . import cpvr as survey
from . import parity as survey_parity

Jobs = dict[str, list[parallel.Job]]  # {notebook: jobs}


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


FAMILIES = {
    "survey": (survey_jobs, survey_upstream),
    "survey_parity": (parity_jobs, None),
}  # name -> (its notebooks' jobs, what they read first)
