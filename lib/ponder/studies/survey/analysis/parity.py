"""survey-1's runs (:mod:`ponder.studies.survey.parity`) as the notebook reads them: one row per run and test
difficulty, one row per run with its success, the runs paired by cell for the ledger's rule, and survey-1's ledger
rows.

Nothing here trains a run it does not find in :mod:`ponder.studies.survey.parity`, so nothing here is part of a
run's cache key (:func:`ponder.runner.runs.import_closure`): an edit retrains no run."""

from collections.abc import Sequence

import pandas as pd

from ....ledger import verdicts
from ....ledger.verdicts import Claim
from ....models.recurrent import HALTING
from ....profiles import by_profile
from ..parity import KNOBS, LABELS, control_runs, grid_runs
from ..sizes.parity import PARITY

SYMBOLS = {"tau": "τ", "lambda_p": "λp"}
CONTROL = "GRU, 1 step"
SUCCESS = 0.95  # accuracy on the training difficulties of a run that trained


def run_frame(metrics: dict, train_max: int, **columns) -> pd.DataFrame:
    """One run: one row per test difficulty, in increasing order (the metrics' keys are strings):
    ``difficulty`` (int), ``accuracy``, ``steps``, ``in_training`` and the given constant columns."""
    rows = [
        {
            "difficulty": int(d),
            "accuracy": a,
            "steps": metrics["steps"][d],
            "in_training": int(d) <= train_max,
            **columns,
        }
        for d, a in metrics["accuracy"].items()
    ]
    return pd.DataFrame(rows).sort_values("difficulty", ignore_index=True)


def parity_frame(profile: str, seed: int = 0, methods: Sequence[str] = HALTING) -> pd.DataFrame:
    """survey-1's grid: one row per run and test difficulty, with ``method``, ``knob``, ``value``,
    ``cell`` (index of the value), ``seed`` and ``setting`` (e.g. ``"ACT τ=0.001"``)."""
    train_max = by_profile(PARITY, profile)["train_max"]
    parts = []
    for (h, s, j), run in grid_runs(profile, seed, methods).items():
        knob, value = KNOBS[h], run.config[KNOBS[h]]
        parts.append(
            run_frame(
                run.metrics(),
                train_max,
                method=LABELS[h],
                knob=knob,
                value=value,
                cell=j,
                seed=s,
                setting=f"{LABELS[h]} {SYMBOLS[knob]}={value:g}",
            )
        )
    return pd.concat(parts, ignore_index=True)


def control_frame(profile: str, seed: int = 0) -> pd.DataFrame:
    """The one-step control, as :func:`parity_frame` rows (``method`` and ``setting`` :data:`CONTROL`)."""
    train_max = by_profile(PARITY, profile)["train_max"]
    parts = [
        run_frame(run.metrics(), train_max, method=CONTROL, setting=CONTROL, seed=s)
        for s, run in control_runs(profile, seed).items()
    ]
    return pd.concat(parts, ignore_index=True)


def run_summary(frame: pd.DataFrame, threshold: float = SUCCESS) -> pd.DataFrame:
    """One row per run of ``frame`` (from :func:`parity_frame` or :func:`control_frame`): ``trained``
    and ``beyond`` (mean accuracy on and beyond the training difficulties), ``steps`` (mean over
    every test difficulty) and ``success`` = ``1[trained >= threshold]`` (0/1)."""
    keys = [c for c in ("method", "knob", "value", "cell", "seed") if c in frame]
    on = frame.groupby([*keys, "in_training"])["accuracy"].mean().unstack("in_training")
    out = pd.DataFrame({"trained": on[True], "beyond": on[False], "steps": frame.groupby(keys)["steps"].mean()})
    out["success"] = (out["trained"] >= threshold).astype(int)
    return out.reset_index()


def by_cell(summary: pd.DataFrame, column: str) -> pd.DataFrame:
    """``column`` of :func:`run_summary`, one row per cell ``(seed, cell)`` and one column per method:
    the paired values :func:`ponder.ledger.verdicts.greater` compares."""
    return summary.pivot(index=["seed", "cell"], columns="method", values=column)


def parity_claims(runs: pd.DataFrame, controls: pd.DataFrame) -> list[Claim]:
    """survey-1's rows from :func:`run_summary` of the grid (``runs``: one row per run of ACT and PonderNet, with
    ``seed``, ``cell``, ``success``, ``trained``, ``beyond``) and of the one-step control (``controls``: one row per
    run, ``trained``): PonderNet's share of runs that train is larger than ACT's (unpaired); its accuracy on and
    beyond the training difficulties is higher, paired by cell (beyond: set aside when no method is above chance);
    the one-step GRU stays below :data:`SUCCESS` on the training difficulties."""
    success, trained, beyond = (by_cell(runs, column) for column in ("success", "trained", "beyond"))
    one_step, n = controls["trained"], len(success)
    return [
        Claim(
            "survey-1",
            "PonderNet trains more stably than ACT (share of runs over seeds × values of τ or λp reaching 0.95 "
            "parity accuracy on the training difficulties; small-scale stand-in)",
            ours=f"PonderNet {success['PonderNet'].sum()}/{n} vs ACT {success['ACT'].sum()}/{n}",
            verdict=verdicts.greater(success["PonderNet"], success["ACT"], paired=False),
        ),
        Claim(
            "survey-1",
            "PonderNet is more accurate than ACT on the training difficulties (per-run mean parity accuracy, paired "
            "by seed and knob value; small-scale stand-in)",
            ours=f"PonderNet {trained['PonderNet'].mean():.3f} vs ACT {trained['ACT'].mean():.3f}",
            verdict=verdicts.greater(trained["PonderNet"], trained["ACT"]),
        ),
        Claim(
            "survey-1",
            "PonderNet extrapolates better than ACT (per-run mean parity accuracy beyond the training difficulties, "
            "paired by seed and knob value; small-scale stand-in)",
            ours=f"PonderNet {beyond['PonderNet'].mean():.3f} vs ACT {beyond['ACT'].mean():.3f} (chance 0.5)",
            verdict=verdicts.outside_regime(
                verdicts.greater(beyond["PonderNet"], beyond["ACT"]),
                verdicts.chance_regime(beyond.to_dict("list"), 0.5, "accuracy beyond the training difficulties"),
            ),
        ),
        Claim(
            "survey-1",
            "the task needs more than one step: a GRU held to one step, trained alike, stays below 0.95 on the "
            "training difficulties",
            ours=f"{one_step.mean():.3f}",
            verdict=verdicts.below(one_step, SUCCESS),
            kind="design check",
        ),
    ]
