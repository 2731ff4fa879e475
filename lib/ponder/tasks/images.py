"""Images: scikit-learn's bundled digits as a stand-in for ImageNet-1k (no download needed).

The 1797 grey 8×8 digits (values 0..16) are scaled to ``[0, 1]``, upsampled bilinearly to
``size × size`` and pasted at a position drawn per image into a black ``canvas × canvas`` image.
The empty canvas is the "background" an adaptive model should spend little compute on; the
digit is the "content". With the defaults (``size=16``, ``canvas=32``) and a ViT patch of 4
there are 8×8 = 64 patches, 65 tokens with the class token.

* :func:`split_indices` — the fixed train/test split (20 % test, stratified by a seeded shuffle).
* :func:`images` — one split as tensors ``x [n, 1, canvas, canvas]``, ``y [n]``, fixed placement.
* :func:`sample` — a training batch as a deterministic function of ``seed`` (fresh placements).
* :func:`corrupt` — ImageNet-C-like corruptions at severity 1..5 (for robustness, acm-10).
"""
from functools import lru_cache

import numpy as np
import torch
import torch.nn.functional as F

from ..checks import check_choice, check_int

SPLITS = ("train", "test")
CORRUPTIONS = ("gaussian_noise", "blur", "contrast", "occlusion")
CLASSES = 10


@lru_cache(maxsize=1)
def _digits() -> tuple[torch.Tensor, torch.Tensor]:
    """All digits: ``x [1797, 8, 8]`` in ``[0, 1]``, ``y [1797]`` (int64)."""
    from sklearn.datasets import load_digits

    data = load_digits()
    return torch.tensor(data.images / 16.0, dtype=torch.float32), torch.tensor(data.target, dtype=torch.long)


@lru_cache(maxsize=1)
def split_indices() -> dict[str, torch.Tensor]:
    """``{"train": idx, "test": idx}``: a fixed shuffle (seed 0), the last 20 % of each class is test."""
    _, y = _digits()
    generator = torch.Generator().manual_seed(0)
    train, test = [], []
    for c in range(CLASSES):
        idx = (y == c).nonzero().squeeze(1)
        idx = idx[torch.randperm(len(idx), generator=generator)]
        cut = int(round(0.8 * len(idx)))
        train.append(idx[:cut]), test.append(idx[cut:])
    return {"train": torch.cat(train).sort().values, "test": torch.cat(test).sort().values}


def _place(digits: torch.Tensor, size: int, canvas: int, generator: torch.Generator) -> torch.Tensor:
    """``[n, 8, 8] -> [n, 1, canvas, canvas]``: upsample to ``size`` and paste at random offsets."""
    small = F.interpolate(digits[:, None], size=(size, size), mode="bilinear", align_corners=False).clamp(0, 1)
    n, room = len(digits), canvas - size
    offsets = torch.randint(0, room + 1, (n, 2), generator=generator)
    rows = (offsets[:, 0, None] + torch.arange(size))[:, :, None]  # [n, size, 1]
    cols = (offsets[:, 1, None] + torch.arange(size))[:, None, :]  # [n, 1, size]
    out = torch.zeros(n, canvas, canvas)
    out[torch.arange(n)[:, None, None], rows, cols] = small[:, 0]
    return out[:, None]


def _check_geometry(size: int, canvas: int) -> None:
    check_int("size", size, minimum=8, maximum=256)
    check_int("canvas", canvas, minimum=size, maximum=512)


def images(split: str, size: int = 16, canvas: int = 32, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """One split, ``x [n, 1, canvas, canvas]`` in ``[0, 1]`` and labels ``y [n]``.

    Placements are drawn once from ``seed`` so the split is a fixed evaluation set.
    """
    check_choice("split", split, SPLITS)
    _check_geometry(size, canvas)
    x, y = _digits()
    idx = split_indices()[split]
    generator = torch.Generator().manual_seed(10_007 * seed + SPLITS.index(split))
    return _place(x[idx], size, canvas, generator), y[idx]


def sample(n: int, seed: int, split: str = "train", size: int = 16, canvas: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of ``n`` images of ``split`` drawn with replacement, fresh placements; same ``seed`` → same batch."""
    check_int("n", n, minimum=1)
    check_choice("split", split, SPLITS)
    _check_geometry(size, canvas)
    x, y = _digits()
    idx = split_indices()[split]
    generator = torch.Generator().manual_seed(seed)
    pick = idx[torch.randint(0, len(idx), (n,), generator=generator)]
    return _place(x[pick], size, canvas, generator), y[pick]


def corrupt(x: torch.Tensor, kind: str, severity: int, seed: int = 0) -> torch.Tensor:
    """``x [n, 1, H, W]`` corrupted by ``kind`` at ``severity`` 1..5 (0 returns ``x``), clamped to ``[0, 1]``.

    * ``gaussian_noise`` — add N(0, σ²), σ = 0.08·severity;
    * ``blur`` — Gaussian blur of standard deviation 0.5·severity pixels;
    * ``contrast`` — pull towards the image mean by a factor 1 − 0.18·severity;
    * ``occlusion`` — a black square of side 0.1·severity·W at a random place.
    """
    check_choice("kind", kind, CORRUPTIONS)
    check_int("severity", severity, minimum=0, maximum=5)
    if severity == 0:
        return x.clone()
    generator = torch.Generator().manual_seed(seed)
    if kind == "gaussian_noise":
        out = x + 0.08 * severity * torch.randn(x.shape, generator=generator)
    elif kind == "blur":
        sigma = 0.5 * severity
        radius = int(np.ceil(2 * sigma))
        t = torch.arange(-radius, radius + 1, dtype=x.dtype)
        kernel = torch.exp(-(t**2) / (2 * sigma**2))
        kernel = kernel / kernel.sum()
        out = F.conv2d(x, kernel.view(1, 1, 1, -1), padding=(0, radius))
        out = F.conv2d(out, kernel.view(1, 1, -1, 1), padding=(radius, 0))
    elif kind == "contrast":
        mean = x.mean(dim=(-2, -1), keepdim=True)
        out = mean + (1 - 0.18 * severity) * (x - mean)
    else:
        out = x.clone()
        side = int(round(0.1 * severity * x.shape[-1]))
        corners = torch.randint(0, x.shape[-1] - side + 1, (len(x), 2), generator=generator)
        for i, (r, c) in enumerate(corners.tolist()):
            out[i, :, r : r + side, c : c + side] = 0.0
    return out.clamp(0, 1)
