"""Hyper-UT analysis: the C-PVR runs' frames (:mod:`ponder.studies.hyper_ut.cpvr`) turned into the numbers the
claims are checked on: accuracy in and out of the training hops per seed, which runs fit their training hops,
compute spent where accuracy is matched (hut-4); and the ledger rows of hut-2 … hut-5 stated from them
(``*_claims``). Beside it in :mod:`ponder.studies.hyper_ut.analysis`: ``configurations`` (hut-9), ``depth`` (the
depth a hop count needs, hut-2's fixed-depth row), ``trace`` (one example's halting and routing, step by step),
``task`` (what the task allows without following the chain: hut-1, the shortcut hut-7 is read against) and
``modules`` (the routing, hut-6, and the pool ablation, hut-10).

Nothing here trains, so nothing here is part of a run's cache key (:func:`ponder.runner.runs.import_closure`): an edit
retrains no run."""

import numpy as np
import pandas as pd

from ....ledger import verdicts
from ....ledger.convergence import FIT
from ....ledger.tuning import describe_choices
from ....ledger.verdicts import Claim

# the scores of a C-PVR learning-rate grid (``experiments.hyper_ut.lr_choices``) and the digits the ledger shows them
# to (:func:`ponder.ledger.tuning.describe_choices`)
LR_SCORES = {"accuracy": 2, "loss": 3}


def steps_on_training_hops(frame: pd.DataFrame, train_max: int) -> pd.DataFrame:
    """``[seed, model]``: the mean ponder steps over the training hop counts ``1..train_max`` (hop
    counts weighted equally), from ``frame``'s rows of ``model, seed, hops, steps``."""
    inside = frame[frame["hops"] <= train_max]
    return inside.groupby(["seed", "model"], sort=False)["steps"].mean().unstack("model")


UNFIT = f"does not fit its training hops (accuracy < {FIT} at one of them)"


def unfit_of(fits: pd.DataFrame, models: list[str]) -> dict[str, str]:
    """``{"model, seed s": why}`` for the runs of ``models`` that do not fit their training hops
    (``fits``: one row per model and seed with a bool column ``fits``, :func:`with_fit`): a claim about
    extrapolation, or about fewer steps at matched accuracy, compares them only once they do (for
    :func:`ponder.ledger.verdicts.unconverged`)."""
    rows = fits[fits["model"].isin(models) & ~fits["fits"].astype(bool)]
    return {f"{r.model}, seed {r.seed}": UNFIT for r in rows.itertuples()}


def per_seed(frame: pd.DataFrame, train_max: int) -> pd.DataFrame:
    """Per model and seed: mean accuracy in / out of distribution (hop counts weighted equally),
    mean steps, the slope of steps against hop count, and the parameter count."""
    rows = []
    for (model, seed), part in frame.groupby(["model", "seed"], sort=False):
        inside = part["hops"] <= train_max
        rows.append(
            {
                "model": model,
                "seed": seed,
                "in distribution": part.loc[inside, "accuracy"].mean(),
                "out of distribution": part.loc[~inside, "accuracy"].mean(),
                "steps": part["steps"].mean(),
                "steps slope": float(np.polyfit(part["hops"].to_numpy(float), part["steps"].to_numpy(), 1)[0]),
                "params": int(part["params"].iloc[0]),
            }
        )
    return pd.DataFrame(rows)


def summarize(frame: pd.DataFrame, train_max: int) -> pd.DataFrame:
    """Per model: :func:`per_seed`'s numbers, mean over seeds, with the standard error of the accuracies."""
    seeds = per_seed(frame, train_max).drop(columns="seed")
    summary = seeds.groupby("model", sort=False).mean()
    for split in ("in distribution", "out of distribution"):
        summary[f"{split} se"] = np.nan_to_num(seeds.groupby("model", sort=False)[split].sem())
    summary["params"] = summary["params"].astype(int)
    return summary


def with_fit(seeds: pd.DataFrame, frame: pd.DataFrame, train_max: int, level: float = FIT) -> pd.DataFrame:
    """``seeds`` (one row per model and seed, :func:`per_seed`) with a column ``fits``: whether
    the run reaches ``level`` accuracy at every training hop count 1..``train_max`` of ``frame``
    (``hops``, ``accuracy`` per model and seed). A run that does not has not learned the task it is
    then tested beyond, so its out-of-distribution accuracy says little about extrapolation."""
    worst = frame[frame["hops"] <= train_max].groupby(["model", "seed"], sort=False)["accuracy"].min()
    return seeds.merge(
        (worst >= level).rename("fits").reset_index(), on=["model", "seed"], how="left", validate="one_to_one"
    )


def fit_counts(seeds: pd.DataFrame, order: list[str]) -> str:
    """``"Transformer 3/3, UT 2/3, ..."``: per model, the seeds whose run fits its training hops (:func:`with_fit`)."""
    return ", ".join(
        f"{m} {int(seeds.loc[seeds['model'] == m, 'fits'].sum())}/{int((seeds['model'] == m).sum())}" for m in order
    )


def most_accurate_claim(seeds: pd.DataFrame, order: list[str], at: str = "") -> Claim:
    """hut-3's headline row: Hyper-UT's mean OOD accuracy above every other model's of ``order``, paired by seed
    (``seeds``: :func:`with_fit` of :func:`per_seed`), inconclusive while a compared run does not fit its training
    hops; ``at`` ends the row's text (the weight of the ponder cost, where not the model's)."""
    ood = seeds.pivot(index="seed", columns="model")["out of distribution"]
    others = [m for m in order if m != "Hyper-UT"]
    return Claim(
        "hut-3",
        f"Hyper-UT is the most accurate beyond the training hops (mean OOD accuracy, all models){at}",
        ours=f"best: {ood.mean().idxmax()} {ood.mean().max():.2f}; Hyper-UT {ood['Hyper-UT'].mean():.2f}",
        verdict=verdicts.unconverged(
            verdicts.every([verdicts.greater(ood["Hyper-UT"], ood[m]) for m in others]), unfit_of(seeds, order)
        ),
    )


def most_accurate_at(frame: pd.DataFrame, sweep: pd.DataFrame, tau: float, order: list[str], train_max: int) -> Claim:
    """:func:`most_accurate_claim` at another weight ``tau`` of the ponder cost: the ACT kinds' runs at ``tau`` (of
    hut-4's ``sweep``, rows of ``model, seed, tau, hops, accuracy, ...``), every other model's of ``frame`` (their
    training has no ponder cost)."""
    act = sweep[sweep.tau == tau].drop(columns="tau")
    part = pd.concat([frame[~frame.model.isin(act.model.unique())], act], ignore_index=True)
    return most_accurate_claim(with_fit(per_seed(part, train_max), part, train_max), order, f" (tau = {tau})")


def extrapolation_claims(
    seeds: pd.DataFrame, order: list[str], train_max: int, rules: pd.DataFrame, choices: pd.DataFrame, seed: int
) -> list[Claim]:
    """hut-3's rows. ``seeds``: one row per model and seed (:func:`with_fit` of :func:`per_seed`); ``order``: the
    models; ``rules``: :func:`baselines`' rows (one per test hop count); ``choices``: the learning-rate grid's
    evidence (``experiments.hyper_ut.lr_choices``, one row per model), chosen on seed ``seed``. Judged: Hyper-UT is the
    most accurate beyond the training hops ``1..train_max``, and the Transformer falls off beyond them (by more than
    0.1); described: the runs that fit their training hops, the rules that do not follow the chain beside the models'
    OOD accuracy, and the tuning. A judged row is inconclusive while a model it compares does not fit its training
    hops (:func:`unfit_of`)."""
    by_seed = seeds.pivot(index="seed", columns="model")
    ood, inside = by_seed["out of distribution"], by_seed["in distribution"]
    # mean over the OOD hop counts, as the models' OOD accuracy
    shortcuts = rules.loc[rules.hops > train_max, ["pruning, 2 rounds", "one of the two ends"]].mean()
    models = ", ".join(f"{m} {a:.2f}" for m, a in ood.mean().sort_values(ascending=False).items())
    return [
        most_accurate_claim(seeds, order),
        Claim(
            "hut-3",
            "a standard Transformer falls off beyond the training hops (OOD accuracy >= 0.1 below in-distribution)",
            ours=f"{inside['Transformer'].mean():.2f} -> {ood['Transformer'].mean():.2f}",
            verdict=verdicts.unconverged(
                verdicts.above(inside["Transformer"] - ood["Transformer"], 0.1), unfit_of(seeds, ["Transformer"])
            ),
        ),
        Claim(
            "hut-3",
            f"runs that fit their training hops (accuracy >= {FIT} at every hop count 1..{train_max}), per model: "
            "only theirs is an extrapolation",
            ours=fit_counts(seeds, order),
            verdict=None,
        ),
        Claim(
            "hut-3",
            "OOD accuracy beside rules that find a chain's end without following it hop by hop: pruning dead ends "
            "for 2 rounds, one of the two ends (mean over the OOD hops; describes)",
            ours="; ".join(f"{c} {a:.2f}" for c, a in shortcuts.items()) + f"; models {models}",
            verdict=None,
        ),
        Claim(
            "hut-3",
            f"every model at the learning rate of the grid with the lowest cross-entropy on a validation set of hops "
            f"1..{train_max} (seed {seed}; describes the tuning: rate chosen, validation accuracy and loss per rate)",
            ours=describe_choices(choices, LR_SCORES),
            verdict=None,
        ),
    ]


def allocation_claims(sweep: pd.DataFrame, taus: list[float], act_order: list[str], train_max: int) -> list[Claim]:
    """hut-4's rows at every weight of the ponder cost in ``taus`` (the model's first: its rows name no tau), from
    ``sweep``'s rows of ``model, seed, tau, hops, accuracy, steps, params``: the ponder steps of every ACT model
    (``act_order``) grow with the hop count (slope above 0.05 steps per hop), and UT+FiLM+ACT and Hyper-UT each
    allocate more fairly (larger slope) and efficiently (fewer steps on the training hops ``1..train_max``, both
    fitting them) than UT+ACT."""
    return [
        row
        for tau in taus
        for row in _allocation_claims_at(
            sweep[sweep.tau == tau], act_order, train_max, "" if tau == taus[0] else f" (tau = {tau})"
        )
    ]


def _allocation_claims_at(part: pd.DataFrame, act_order: list[str], train_max: int, at: str) -> list[Claim]:
    """:func:`allocation_claims` at one tau (``part``: its rows; ``at``: the texts' suffix)."""
    part_seed = with_fit(per_seed(part, train_max), part, train_max)
    slope = part_seed.pivot(index="seed", columns="model")["steps slope"]
    # efficiency at matched accuracy: fewer steps on the training hops, where both models fit them
    steps_in = steps_on_training_hops(part, train_max)  # [seed, model]
    rows = [
        Claim(
            "hut-4",
            f"ponder steps grow with the hop count (slope of mean steps vs hops > 0.05 steps per hop, every ACT "
            f"model){at}",
            ours=", ".join(f"{m} {slope[m].mean():+.2f}" for m in act_order),
            verdict=verdicts.every([verdicts.above(slope[m], 0.05) for m in act_order]),
        )
    ]
    for m in ["UT+FiLM+ACT", "Hyper-UT"]:
        fewer_steps = verdicts.greater(steps_in["UT+ACT"], steps_in[m])
        rows.append(
            Claim(
                "hut-4",
                f"{m} allocates more fairly (steps slope) and efficiently (fewer steps on the training hops, both "
                f"fitting them) than UT+ACT{at}",
                ours=f"slope {slope[m].mean():+.2f} vs {slope['UT+ACT'].mean():+.2f}; steps on hops 1-{train_max} "
                f"{steps_in[m].mean():.2f} vs {steps_in['UT+ACT'].mean():.2f}",
                verdict=verdicts.every(
                    [
                        verdicts.greater(slope[m], slope["UT+ACT"]),
                        verdicts.unconverged(fewer_steps, unfit_of(part_seed, [m, "UT+ACT"])),
                    ]
                ),
            )
        )
    return rows


def sharing_claims(summary: pd.DataFrame, seeds: pd.DataFrame) -> list[Claim]:
    """hut-5's rows from :func:`summarize`'s table (one row per model) and ``seeds`` (one row per model and seed,
    :func:`per_seed`): sharing in depth (UT) generalizes better beyond the training hops than no sharing
    (Transformer) with fewer parameters, inconclusive while one of the two does not fit its training hops (``seeds``
    of :func:`with_fit`); described: sharing + modularity (Hyper-UT w/o ACT) against the UT."""
    ood = seeds.pivot(index="seed", columns="model")["out of distribution"]
    mean_ood, params = summary["out of distribution"], summary["params"]
    fewer_params = verdicts.exact(bool(params["UT"] < params["Transformer"]), "parameter counts: exact")
    return [
        Claim(
            "hut-5",
            "sharing in depth improves OOD generalization despite fewer parameters (UT vs Transformer)",
            ours=f"OOD {mean_ood['UT']:.2f} vs {mean_ood['Transformer']:.2f}; "
            f"params {params['UT']:,} vs {params['Transformer']:,}",
            verdict=verdicts.unconverged(
                verdicts.every([verdicts.greater(ood["UT"], ood["Transformer"]), fewer_params]),
                unfit_of(seeds, ["UT", "Transformer"]),
            ),
        ),
        Claim(
            "hut-5",
            "sharing + modularity (Hyper-UT w/o ACT) vs plain sharing (UT): OOD accuracy",
            ours=f"{mean_ood['Hyper-UT w/o ACT']:.2f} vs {mean_ood['UT']:.2f}",
            verdict=None,
        ),
    ]
