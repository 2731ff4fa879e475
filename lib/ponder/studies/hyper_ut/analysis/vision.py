"""Hyper-UT on images, analysis (hut-8): the digits runs' frames (:mod:`ponder.studies.hyper_ut.vision`) turned
into the claims: HyperU-ViT's top-1 against each ViT's, read only where that ViT finished training, its layer
savings, and how far halting adapts per image.

Nothing here trains, so nothing here is part of a run's cache key (:func:`ponder.runner.runs.import_closure`): an edit
retrains no run."""

from collections.abc import Sequence

import pandas as pd

from ....ledger import convergence, verdicts
from ....ledger.verdicts import Claim
from ..vision import LABELS

HYPER = LABELS["hyper_act"]
MATCH = 0.02  # the top-1 margin within which HyperU-ViT "matches" a ViT
SAVINGS = 0.7  # the layer savings the paper claims


def match_claims(per_seed: pd.DataFrame, histories: dict[str, dict[int, Sequence[dict]]]) -> list[Claim]:
    """One row per ViT of ``histories`` (``{label: {seed: training history}}``): HyperU-ViT's top-1 minus the ViT's
    is above ``-MATCH``, paired by seed (``per_seed``: ``runs.pivot(index="seed", columns="model")``), inconclusive
    where a seed's ViT did not finish training (:func:`~ponder.ledger.convergence.unfinished`, fitted below
    :data:`~ponder.ledger.convergence.FIT_LOSS`)."""
    top1 = per_seed["top-1"]
    rows = []
    for label, by_seed in histories.items():
        named = {f"{label}, seed {s}": history for s, history in by_seed.items()}
        reference = convergence.unfinished(named, fitted_below=convergence.FIT_LOSS)
        layers = per_seed["average layers"][[HYPER, label]].mean()
        rows.append(
            Claim(
                "hut-8",
                f"HyperU-ViT matches the {label}'s top-1 (within {MATCH:g}) on digits (stand-in for ImageNet-1k)",
                ours=f"{top1[HYPER].mean():.3f} vs {top1[label].mean():.3f} "
                f"(layers {layers[HYPER]:.1f} vs {layers[label]:.0f})",
                verdict=verdicts.unconverged(verdicts.above(top1[HYPER] - top1[label], -MATCH), reference),
            )
        )
    return rows


def shallowest_match(per_seed: pd.DataFrame, vits: Sequence[str]) -> str:
    """The ViT of ``vits`` with the fewest layers whose mean top-1 HyperU-ViT's is within ``MATCH`` of or above
    (the least depth the task needs at HyperU-ViT's accuracy); the deepest ViT when none is."""
    top1, layers = per_seed["top-1"].mean(), per_seed["average layers"].mean()
    matched = [v for v in vits if top1[HYPER] >= top1[v] - MATCH]
    return min(matched, key=lambda v: layers[v]) if matched else max(vits, key=lambda v: layers[v])


def savings_claims(per_seed: pd.DataFrame, vits: Sequence[str]) -> list[Claim]:
    """HyperU-ViT's layer savings against the shallowest ViT of ``vits`` it matches (:func:`shallowest_match`):
    ``1 - its layers / that ViT's``, per seed, above ``SAVINGS``; then described, the savings as the paper counts
    them, against the profile's layer cap (``per_seed`` as in :func:`match_claims`)."""
    reference = shallowest_match(per_seed, vits)
    depth = per_seed["average layers"][reference].mean()
    saved = 1 - per_seed["average layers"][HYPER] / depth
    return [
        Claim(
            "hut-8",
            f"HyperU-ViT saves more than {SAVINGS:.0%} of the layers on average, against the shallowest ViT whose "
            f"top-1 it matches (the {reference}, {depth:.0f} layers; digits stand-in)",
            ours=f"{saved.mean():.0%}",
            verdict=verdicts.above(saved, SAVINGS),
            paper=f">{SAVINGS:.0%}",
        ),
        Claim(
            "hut-8",
            "layers saved against the profile's layer cap, as the paper counts them (describes)",
            ours=f"{per_seed['layer savings'][HYPER].mean():.0%}",
            verdict=None,
        ),
    ]


def halting_claim(per_image: pd.DataFrame, references: Sequence[str]) -> Claim:
    """Describes, per ACT model (the models of ``per_image`` not in ``references``), the least, most and s.d. of the
    layers the test images used (``per_image``: one row per model and test image, column ``layers``)."""
    halting = (
        per_image[~per_image.model.isin(references)].groupby("model", sort=False)["layers"].agg(["min", "max", "std"])
    )
    return Claim(
        "hut-8",
        "per-image halting: spread of the layers the test images used, per ACT model (first seed; describes)",
        ours="; ".join(
            f"{m}: {r['min']:.0f}-{r['max']:.0f} layers, s.d. {r['std']:.2f}" for m, r in halting.iterrows()
        ),
        verdict=None,
    )


def vision_claims(
    runs: pd.DataFrame, per_image: pd.DataFrame, histories: dict[str, dict[int, Sequence[dict]]]
) -> list[Claim]:
    """hut-8's rows: :func:`match_claims` for each ViT of ``histories`` (``{label: {seed: training history}}``),
    :func:`savings_claims` and :func:`halting_claim`, from :func:`~ponder.studies.hyper_ut.vision.comparison`'s
    ``runs`` (one row per model and seed: ``top-1``, ``average layers``, ``layer savings``) and
    :func:`~ponder.studies.hyper_ut.vision.layers_per_image`'s ``per_image``."""
    per_seed = runs.pivot(index="seed", columns="model")
    return [
        *match_claims(per_seed, histories),
        *savings_claims(per_seed, list(histories)),
        halting_claim(per_image, list(histories)),
    ]
