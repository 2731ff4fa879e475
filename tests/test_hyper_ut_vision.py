"""hut-8's claims on made-up runs: HyperU-ViT against each ViT, its layer savings, per-image halting."""

import pandas as pd
import pytest

from ponder.studies.hyper_ut.analysis import vision as VA

VIT, SHALLOW, UT, HYPER = "ViT", "4-block ViT", "U-ViT+ACT", "HyperU-ViT"
FLAT = [{"step": i, "loss": 0.01} for i in range(8)]  # a fitted, flat training loss
FALLING = [{"step": i, "loss": 1.0 - 0.1 * i} for i in range(8)]  # still falling, far above a fitted loss
PER_IMAGE = pd.DataFrame(
    {
        "model": [VIT] * 3 + [SHALLOW] * 3 + [UT] * 3 + [HYPER] * 3,
        "layers": [12, 12, 12, 4, 4, 4, 2, 4, 6, 3, 3, 3],
    }
)


def runs(hyper_top1=(0.9, 0.91, 0.92), savings=(0.75, 0.74, 0.76)) -> pd.DataFrame:
    """:func:`ponder.studies.hyper_ut.vision.comparison`'s rows for seeds 0..2: the ViT at 0.9 top-1 and 12
    layers, the 4-block ViT at 0.7 and 4, U-ViT+ACT at 0.85 and 6, HyperU-ViT at ``hyper_top1`` and 3.2 layers
    with ``savings``."""
    models = {
        VIT: ([0.9] * 3, 12.0, [0.0] * 3),
        SHALLOW: ([0.7] * 3, 4.0, [0.0] * 3),
        UT: ([0.85] * 3, 6.0, [0.5] * 3),
        HYPER: (hyper_top1, 3.2, savings),
    }
    return pd.DataFrame(
        {"model": m, "seed": s, "top-1": top1[s], "average layers": layers, "layer savings": saved[s]}
        for m, (top1, layers, saved) in models.items()
        for s in range(3)
    )


def histories(vit=FLAT) -> dict:
    return {VIT: {0: FLAT, 1: vit, 2: FLAT}, SHALLOW: {s: FLAT for s in range(3)}}


def test_vision_claims_state_each_vit_then_the_savings_then_the_halting():
    rows = VA.vision_claims(runs(), PER_IMAGE, histories())
    assert [r.target for r in rows] == ["hut-8"] * 5
    assert [r.text for r in rows] == [
        "HyperU-ViT matches the ViT's top-1 (within 0.02) on digits (stand-in for ImageNet-1k)",
        "HyperU-ViT matches the 4-block ViT's top-1 (within 0.02) on digits (stand-in for ImageNet-1k)",
        "HyperU-ViT saves more than 70% of the layers on average, against the shallowest ViT whose top-1 it matches "
        "(the 4-block ViT, 4 layers; digits stand-in)",
        "layers saved against the profile's layer cap, as the paper counts them (describes)",
        "per-image halting: spread of the layers the test images used, per ACT model (first seed; describes)",
    ]
    assert [r.ours for r in rows] == [
        "0.910 vs 0.900 (layers 3.2 vs 12)",
        "0.910 vs 0.700 (layers 3.2 vs 4)",
        "20%",
        "75%",
        "U-ViT+ACT: 2-6 layers, s.d. 2.00; HyperU-ViT: 3-3 layers, s.d. 0.00",
    ]
    assert [r.paper for r in rows] == [None, None, ">70%", None, None]
    assert [r.verdict and r.verdict.verdict for r in rows] == ["holds", "holds", "does not hold", None, None]


@pytest.mark.parametrize("hyper_top1, verdict", [((0.9, 0.91, 0.92), "holds"), ((0.8, 0.81, 0.79), "does not hold")])
def test_match_claims_judge_hyper_ut_within_two_points_of_the_vit(hyper_top1, verdict):
    per_seed = runs(hyper_top1=hyper_top1).pivot(index="seed", columns="model")
    assert VA.match_claims(per_seed, histories())[0].verdict.verdict == verdict


def test_a_match_against_a_vit_that_did_not_finish_training_is_inconclusive():
    per_seed = runs().pivot(index="seed", columns="model")
    vit, shallow = VA.match_claims(per_seed, histories(vit=FALLING))
    assert vit.verdict.verdict == "inconclusive" and shallow.verdict.verdict == "holds"
    assert "reference not converged (ViT, seed 1: its training loss still fell" in vit.verdict.noise
    assert "by the noise rule alone: holds" in vit.verdict.noise


@pytest.mark.parametrize("hyper_top1, reference, verdict", [((0.6,) * 3, "ViT", "holds"), ((0.9,) * 3, SHALLOW, None)])
def test_savings_are_counted_against_the_shallowest_vit_that_hyper_ut_matches(hyper_top1, reference, verdict):
    """HyperU-ViT at 3.2 layers: against the 4-block ViT it matches (0.9 vs 0.7) it saves 20%; where it matches
    no ViT (0.6), the savings are counted against the deepest, 12 layers: 73%."""
    per_seed = runs(hyper_top1=hyper_top1).pivot(index="seed", columns="model")
    assert VA.shallowest_match(per_seed, [VIT, SHALLOW]) == reference
    judged, paper = VA.savings_claims(per_seed, [VIT, SHALLOW])
    assert judged.verdict.verdict == (verdict or "does not hold") and paper.verdict is None
    assert judged.ours == ("73%" if reference == VIT else "20%") and paper.ours == "75%"


def test_quick_leaves_the_variants_to_cpu():
    """Every profile trains the ViT and HyperU-ViT that the claims compare; quick leaves the shallow ViT and U-ViT+ACT,
    which only add to the figure, to cpu (``ponder.studies.hyper_ut.sizes.vision.VARIANTS``)."""
    from ponder.studies.hyper_ut import vision as hyper_ut_vision

    assert list(hyper_ut_vision.models("quick")) == [VIT, HYPER]
    assert list(hyper_ut_vision.models("cpu")) == [VIT, SHALLOW, UT, HYPER]
