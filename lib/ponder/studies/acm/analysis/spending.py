"""Where ACM's gates spend (acm-1's maps, acm-6, acm-7): per-patch and per-token compute on test images and speech
clips, the share on digit patches over background, and the rows stated from them (``*_claims``).

Nothing here trains a run it does not find in :mod:`ponder.studies.acm`, so nothing here is part of a run's cache
key: an edit retrains no run."""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ....ledger.verdicts import Claim, above, greater
from ....models import acmize as acmize_lib
from ....tasks import images
from ..phases import TEST_COPIES, scene, sizes


@torch.no_grad()
def spending(model: nn.Module, x: torch.Tensor, batch: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """Where and how much the gates spend on images ``x`` (one pass, ``batch`` images at a time):
    ``[B, grid, grid]`` per-patch learner MACs over every ACM, normalised by the most a token can
    cost, and ``[B]`` the realised compute fraction ``β_i`` of each image."""
    model.eval()
    device = next(model.parameters()).device
    maps, costs = [], []
    for start in range(0, len(x), batch):
        model(x[start : start + batch].to(device))
        per_token = acmize_lib.compute_map(model) / acmize_lib.max_token_cost(model)
        maps.append(per_token[:, 1:].unflatten(1, (model.grid, model.grid)).float().cpu())
        costs.append(acmize_lib.cost_fraction(model).cpu())
    return torch.cat(maps), torch.cat(costs)


def compute_maps(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``[B, grid, grid]`` per-patch learner MACs over every ACM, normalised by the most a token can cost."""
    return spending(model, x)[0]


@torch.no_grad()
def mean_learners(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``[B, T]`` learners run per token, averaged over every ACM (acm-7's bars)."""
    model.eval()
    model(x.to(next(model.parameters()).device))
    ks = [m.k.float() for m in acmize_lib.acms(model)]
    return (sum(ks) / len(ks)).cpu()


def content_patches(profile: str, grid: int, threshold: float = 0.05) -> torch.Tensor:
    """``[B, grid, grid]`` bool: the patches of :func:`test_set`'s images whose mean ink (the digit layer,
    not the textured background) exceeds ``threshold``."""
    ink = images.content("test", scene=scene(profile), copies=TEST_COPIES)[: sizes(profile)["eval_images"]]
    return F.adaptive_avg_pool2d(ink, grid)[:, 0] > threshold


def content_ratio(model: nn.Module, x: torch.Tensor, profile: str) -> float:
    """acm-1's and acm-6's measure: the mean per-patch compute (:func:`compute_maps`) of ``x``, the profile's test
    images, on digit patches (:func:`content_patches`) over that on background patches."""
    maps = compute_maps(model, x)
    content = content_patches(profile, maps.shape[-1])
    return (maps[content].mean() / maps[~content].mean().clamp_min(1e-9)).item()


def content_claims(ratios_low: list[float], ratio_mid: float) -> list[Claim]:
    """acm-1 and acm-6 from the mean per-patch compute on digit patches over that on background patches: per seed at
    beta=0.4 (``ratios_low``), judged above 1; the first seed's at beta=0.6 (``ratio_mid``), described."""
    return [
        Claim(
            "acm-1",
            "compute goes to the content, not the background (mean per-patch compute on digit patches / on background "
            "patches, beta=0.4, digits stand-in)",
            f"{np.mean(ratios_low):.2f}x",
            above(ratios_low, 1.0),
            paper="qualitative",
        ),
        Claim(
            "acm-6",
            "compute maps at beta=0.6: content / background compute (describes what is seen, digits stand-in)",
            f"{ratio_mid:.2f}x",
            None,
        ),
    ]


def speech_frame_claims(on_speech: list[float], on_silence: list[float]) -> list[Claim]:
    """acm-7's row from the mean learners per frame, per seed, on speech (``on_speech``) and on silence
    (``on_silence``): more on speech."""
    return [
        Claim(
            "acm-7",
            "compute goes to the speech, not the silence (mean learners per frame, beta=0.25, eSpeak NG stand-in)",
            f"{np.mean(on_speech):.2f} vs {np.mean(on_silence):.2f}",
            greater(on_speech, on_silence),
            paper="qualitative",
        )
    ]
