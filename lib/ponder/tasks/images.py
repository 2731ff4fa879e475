"""Images: scikit-learn's bundled digits as a stand-in for ImageNet-1k (no download needed).

The 1797 grey 8×8 digits (values 0..16) are scaled to ``[0, 1]``, upsampled bilinearly to
``size × size`` and pasted at a position drawn per image into a ``canvas × canvas`` image.
With the defaults (``size=16``, ``canvas=32``) and a ViT patch of 4 there are 8×8 = 64
patches, 65 tokens with the class token.

Two named scenes (keyword ``scene``, a name of :data:`SCENES` or a :class:`Scene` of one's own):

* ``"plain"`` (default): the digit on a black canvas. About 70 % of the patches are exactly
  zero, so skipping the background costs an adaptive model nothing (Hyper-UT's hut-8 uses it).
* ``"textured"`` (ACM's stand-in at every profile so far): each digit is first jittered by a random
  affine map (rotation, scale, shear), then laid as bright ink (its intensity is the opacity)
  over a smooth random texture (value noise at 4×4, 8×8 and 16×16 cells) and Gaussian pixel
  noise is added: no patch is constant, and "background" has to be recognised, not read off zeros.

* :func:`split_indices` — the fixed train/test split of the source digits (20 % test, stratified).
* :func:`images` — one split as tensors ``x [n, 1, canvas, canvas]``, ``y [n]``, fixed renderings
  (``copies`` renderings of every source digit: a larger test set from the same held-out digits).
* :func:`content` — the digit layer of :func:`images` (where the ink is), for content/background masks.
* :func:`sample` — a training batch as a deterministic function of ``seed`` (fresh renderings).
* :func:`corrupt` — ImageNet-C-like corruptions at severity 1..5 (for robustness, acm-10).
"""

from dataclasses import dataclass
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


@dataclass(frozen=True)
class Scene:
    """How a digit is drawn onto its canvas: the strength of its random affine jitter (a fraction of
    :data:`ROTATION`, :data:`LOG_SCALE`, :data:`SHEAR`), the contrast of the texture behind it and the
    σ of the Gaussian pixel noise over it. With no texture and no noise the canvas is black (plain)."""

    jitter: float = 0.0
    texture: float = 0.0
    noise: float = 0.0

    def __post_init__(self):
        for knob in ("jitter", "texture", "noise"):
            value = getattr(self, knob)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"a scene's {knob}={value!r} must be a number in [0, 1]")


SCENES = {"plain": Scene(), "textured": Scene(jitter=0.25, texture=0.3, noise=0.03)}
ROTATION, LOG_SCALE, SHEAR = 0.3, 0.15, 0.3  # the largest jitter: radians, log of the zoom, shear
TEXTURE_CELLS = ((4, 0.5), (8, 0.3), (16, 0.2))  # value-noise grids and their weights (sum 1)


def _jitter_matrices(n: int, strength: float, generator: torch.Generator) -> torch.Tensor:
    """``[n, 2, 3]`` random affine maps (rotation, zoom, shear, no shift) for ``F.affine_grid``."""
    angle, log_zoom, shear = (
        (2 * torch.rand(3, n, generator=generator) - 1) * strength * torch.tensor([[ROTATION], [LOG_SCALE], [SHEAR]])
    ).unbind(0)
    cos, sin, zoom = angle.cos(), angle.sin(), log_zoom.exp()
    linear = (
        torch.stack([torch.stack([cos, -sin + shear * cos], -1), torch.stack([sin, cos + shear * sin], -1)], -2)
        / zoom[:, None, None]
    )
    return torch.cat([linear, torch.zeros(n, 2, 1)], -1)


def _digit_layer(digits: torch.Tensor, size: int, jitter: float, generator: torch.Generator) -> torch.Tensor:
    """``[n, 8, 8] -> [n, size, size]``: upsampled bilinearly, after a random affine jitter if ``jitter > 0``."""
    if jitter == 0:
        return F.interpolate(digits[:, None], size=(size, size), mode="bilinear", align_corners=False).clamp(0, 1)[:, 0]
    grid = F.affine_grid(
        _jitter_matrices(len(digits), jitter, generator), [len(digits), 1, size, size], align_corners=False
    )
    return F.grid_sample(digits[:, None], grid, mode="bilinear", padding_mode="zeros", align_corners=False).clamp(0, 1)[
        :, 0
    ]


def _texture(n: int, canvas: int, generator: torch.Generator) -> torch.Tensor:
    """``[n, canvas, canvas]`` smooth random texture in ``[0, 1]``: value noise, the weighted sum of
    uniform random grids of :data:`TEXTURE_CELLS` cells upsampled bilinearly."""
    out = torch.zeros(n, 1, canvas, canvas)
    for cells, weight in TEXTURE_CELLS:
        coarse = torch.rand(n, 1, cells, cells, generator=generator)
        out += weight * F.interpolate(coarse, size=(canvas, canvas), mode="bilinear", align_corners=False)
    return out[:, 0]


def scene_of(scene: "str | Scene") -> Scene:
    """The :class:`Scene` of a name of :data:`SCENES`, or ``scene`` itself."""
    if isinstance(scene, Scene):
        return scene
    return SCENES[check_choice("scene", scene, tuple(SCENES))]


def _render(
    digits: torch.Tensor, size: int, canvas: int, scene: Scene, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``[n, 8, 8] ->`` images ``[n, 1, canvas, canvas]`` and their digit layers (same shape, the ink's
    opacity): the jittered digit pasted at a random offset, over the scene's texture and noise."""
    small = _digit_layer(digits, size, scene.jitter, generator)
    n, room = len(digits), canvas - size
    offsets = torch.randint(0, room + 1, (n, 2), generator=generator)
    rows = (offsets[:, 0, None] + torch.arange(size))[:, :, None]  # [n, size, 1]
    cols = (offsets[:, 1, None] + torch.arange(size))[:, None, :]  # [n, 1, size]
    ink = torch.zeros(n, canvas, canvas)
    ink[torch.arange(n)[:, None, None], rows, cols] = small
    if scene.texture == 0 and scene.noise == 0:
        return ink[:, None], ink[:, None]
    background = scene.texture * _texture(n, canvas, generator)
    noisy = ink + (1 - ink) * background + scene.noise * torch.randn(n, canvas, canvas, generator=generator)
    return noisy.clamp(0, 1)[:, None], ink[:, None]


def _check_geometry(size: int, canvas: int) -> None:
    check_int("size", size, minimum=8, maximum=256)
    check_int("canvas", canvas, minimum=size, maximum=512)


@lru_cache(maxsize=4)
def _rendered(
    split: str, size: int, canvas: int, seed: int, scene: Scene, copies: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    check_choice("split", split, SPLITS)
    _check_geometry(size, canvas)
    check_int("copies", copies, minimum=1, maximum=100)
    x, y = _digits()
    idx = split_indices()[split].repeat(copies)  # every source digit once, then again, ...
    generator = torch.Generator().manual_seed(10_007 * seed + SPLITS.index(split))
    return *_render(x[idx], size, canvas, scene, generator), y[idx]


def images(
    split: str, size: int = 16, canvas: int = 32, seed: int = 0, scene: str | Scene = "plain", copies: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """One split, ``x [n, 1, canvas, canvas]`` in ``[0, 1]`` and labels ``y [n]``, ``n = copies × digits``.

    Renderings (placement, jitter, texture, noise) are drawn once from ``seed`` so the split is a
    fixed evaluation set; ``copies`` renders each source digit of the split that many times.
    """
    x, _, y = _rendered(split, size, canvas, seed, scene_of(scene), copies)
    return x.clone(), y.clone()


def content(
    split: str, size: int = 16, canvas: int = 32, seed: int = 0, scene: str | Scene = "plain", copies: int = 1
) -> torch.Tensor:
    """``[n, 1, canvas, canvas]``: the digit layer (ink opacity in ``[0, 1]``) of the same :func:`images`."""
    return _rendered(split, size, canvas, seed, scene_of(scene), copies)[1].clone()


def sample(
    n: int, seed: int, split: str = "train", size: int = 16, canvas: int = 32, scene: str | Scene = "plain"
) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of ``n`` images of ``split`` drawn with replacement, fresh renderings; same ``seed`` → same batch."""
    check_int("n", n, minimum=1)
    check_choice("split", split, SPLITS)
    _check_geometry(size, canvas)
    scene = scene_of(scene)
    x, y = _digits()
    idx = split_indices()[split]
    generator = torch.Generator().manual_seed(seed)
    pick = idx[torch.randint(0, len(idx), (n,), generator=generator)]
    return _render(x[pick], size, canvas, scene, generator)[0], y[pick]


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
