"""The floating-point work the figures rest on, hashed: run as a subprocess by tests/test_numerics.py.

Prints one JSON object of SHA-256 prefixes in three groups, each named by its prefix:

- ``op:``     single operations (GEMMs of the models' shapes, bmm, a linear layer's backward,
              convolutions, the STFT, interpolation, grid sampling, transcendental functions,
              attention, ponder.exact's square root, numpy's BLAS, a t-SNE map, a logistic probe),
              each on inputs drawn from one generator in a fixed order, so that hashes recorded on
              another machine with the same draws apply (tests/numerics_hashes.json);
- ``data:``   the generated data sets that pass through those libraries (textured digits, the
              speech clips' log-mel features);
- ``train:``  a few training steps of each model family (its weights), and a small transformer
              with dropout, whose mask ATen would draw by CPU vendor (ponder.models.dropout).

``python tests/numerics_probe.py [STEPS]``: STEPS training steps per family (default 30).
"""

import ponder  # noqa: F401  (pins the numerics before torch is imported)

# isort: split

import hashlib
import json
import sys
from functools import partial

import numpy as np
import torch
import torch.nn.functional as F

from ponder import exact
from ponder.models.acmize import acmize
from ponder.models.recurrent import RecurrentPonderer
from ponder.models.transformer import Block
from ponder.models.vit import ViT
from ponder.runner.training import TrainConfig, train
from ponder.studies.hyla import experiments as hyla
from ponder.studies.hyla.analysis import latent as hyla_latent
from ponder.studies.hyper_ut import cpvr as hyper_ut
from ponder.studies.survey.parity import parity_loss
from ponder.tasks import cpvr, images, parity, speech, sraven

SMOKE = hyper_ut.SIZES["smoke"]["model"]
SRAVEN = hyla.sraven_setup("smoke", dim=32, heads=4, depth=2)
TRAIN_COMBOS, _ = sraven.split(SRAVEN.k, SRAVEN.holdout)


def digest(*arrays) -> str:
    """SHA-256 prefix of the arrays' bytes (tensors or numpy arrays), in order."""
    as_numpy = (np.ascontiguousarray(a.detach().numpy() if hasattr(a, "detach") else a) for a in arrays)
    return hashlib.sha256(b"".join(a.tobytes() for a in as_numpy)).hexdigest()[:16]


def operations() -> dict[str, str]:
    """Each operation on inputs from one ``torch.Generator`` seeded 0, drawn in this order."""
    g = torch.Generator().manual_seed(0)
    r = lambda *shape: torch.randn(*shape, generator=g)  # noqa: E731
    out = {}
    for m, k, n in [(8, 8, 8), (64, 32, 32), (65, 32, 128), (512, 512, 512), (2048, 64, 10)]:
        a, b = r(m, k), r(k, n)
        out[f"mm {m}x{k}x{n}"] = digest(a @ b)
    out["bmm"] = digest(torch.bmm(r(16, 65, 32), r(16, 32, 65)))
    x, w = r(32, 64).requires_grad_(), r(96, 64).requires_grad_()
    F.linear(x, w).square().sum().backward()
    out["linear backward"] = digest(x.grad, w.grad)
    out["conv2d patch"] = digest(F.conv2d(r(8, 3, 32, 32), r(32, 3, 4, 4), stride=4))
    out["conv2d 3x3"] = digest(F.conv2d(r(4, 8, 16, 16), r(8, 8, 3, 3), padding=1))
    out["conv1d"] = digest(F.conv1d(r(4, 40, 50), r(32, 40, 3), padding=1))
    wave = r(16, 16000)
    out["stft"] = digest(
        torch.view_as_real(torch.stft(wave, 400, 320, window=torch.hann_window(400), center=False, return_complex=True))
    )
    out["interpolate bilinear"] = digest(
        F.interpolate(r(8, 1, 4, 4), size=(32, 32), mode="bilinear", align_corners=False)
    )
    theta = r(8, 2, 3) * 0.1 + torch.tensor([[1.0, 0, 0], [0, 1.0, 0]])
    grid = F.affine_grid(theta, (8, 1, 16, 16), align_corners=False)
    out["affine_grid + grid_sample"] = digest(grid, F.grid_sample(r(8, 1, 16, 16), grid, align_corners=False))
    v = r(4096)
    out["exp log cos sin tanh"] = digest(v.exp(), v.abs().log(), v.cos(), v.sin(), v.tanh())
    out["gelu softmax layer_norm"] = digest(F.gelu(v), v.view(64, 64).softmax(-1), F.layer_norm(v.view(64, 64), (64,)))
    out["sdpa"] = digest(F.scaled_dot_product_attention(r(4, 2, 65, 16), r(4, 2, 65, 16), r(4, 2, 65, 16)))
    out["cumsum cumprod sum"] = digest(v.cumsum(0), v.sigmoid().cumprod(0), v.view(64, 64).sum(0))
    out["exact sqrt"] = digest(exact.sqrt(v.abs()), exact.sqrt(v.abs().double()))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((200, 64)), rng.standard_normal((64, 100))
    out["numpy dot"] = digest(a @ b, np.linalg.svd(a[:64], compute_uv=False))
    from sklearn.linear_model import LogisticRegression
    from sklearn.manifold import TSNE

    x = rng.standard_normal((120, 16)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int)
    out["t-SNE"] = digest(TSNE(2, random_state=0, init="pca", perplexity=20, max_iter=250).fit_transform(x))
    out["logistic probe"] = digest(LogisticRegression(max_iter=200).fit(x, y).coef_)
    return {f"op: {name}": value for name, value in out.items()}


def data() -> dict[str, str]:
    """The generated inputs that go through MKL and oneDNN: textured digits (affine warps, textures),
    the speech clips' log-mel features (STFT, log), and the projects' own t-SNE and probe."""
    rng = np.random.default_rng(0)
    codes = rng.normal(size=(300, 24)).astype(np.float32)
    labels = (codes[:, 0] + 0.5 * codes[:, 1] > 0).astype(int)
    probe = hyla_latent.decode(codes[:200], labels[:200], codes[200:], labels[200:])
    return {
        "data: textured digits": digest(*images.sample(16, seed=3, size=8, canvas=16, scene="textured")),
        "data: speech features": digest(*speech.sample(8, seed=0)),
        "data: hyla_latent t-SNE": digest(hyla_latent.tsne(codes)),
        "data: hyla_latent probe": digest(np.float64(probe)),
    }


def vit_acm():
    torch.manual_seed(0)
    return acmize(ViT(image=32, patch=4, dim=32, depth=2, heads=2), 4, 4, warm_start=True)


class DropoutTransformer(torch.nn.Module):
    """Two pre-LN blocks with dropout 0.1 in attention and MLP: ``[B, T, 16] -> [B, T, 10]``."""

    def __init__(self):
        super().__init__()
        self.embed, self.head = torch.nn.Linear(16, 32), torch.nn.Linear(32, 10)
        self.blocks = torch.nn.Sequential(*(Block(32, 4, 2.0, dropout=0.1) for _ in range(2)))

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)))


def sequence_batch(seed: int):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(32, 12, 16, generator=g), torch.randint(0, 10, (32, 12), generator=g)


FAMILIES = {
    "sraven-hyla": (
        partial(hyla.sraven_model, SRAVEN),
        lambda s: sraven.batch(32, TRAIN_COMBOS, SRAVEN.f, seed=s),
        hyla.sraven_loss,
    ),
    "cpvr-hyper_act": (
        partial(hyper_ut.build, "hyper_act", 8, dict(SMOKE, dim=32)),
        lambda s: cpvr.sample(64, 8, [1, 2], seed=s),
        hyper_ut.loss_fn(0.01),
    ),
    "vit-acm": (vit_acm, lambda s: images.sample(32, seed=s), lambda m, b: F.cross_entropy(m(b[0]), b[1])),
    "parity-act": (
        lambda: RecurrentPonderer(8, 32, 5, "act", -1.0),
        lambda s: parity.sample(64, 8, [1, 2, 3, 4], seed=s),
        parity_loss("act", 1e-3, 0.2, 0.01),
    ),
    "transformer-dropout": (
        DropoutTransformer,
        sequence_batch,
        lambda m, b: F.cross_entropy(m(b[0]).flatten(0, 1), b[1].flatten()),
    ),
}


def weights_hash(model: torch.nn.Module) -> str:
    """SHA-256 prefix of the model's state, by parameter name."""
    sha = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        sha.update(name.encode() + tensor.detach().cpu().contiguous().numpy().tobytes())
    return sha.hexdigest()[:16]


def trainings(steps: int) -> dict[str, str]:
    out = {}
    for name, (make, batches, loss_fn) in FAMILIES.items():
        torch.manual_seed(0)
        model = make()
        train(model, loss_fn, batches, TrainConfig(steps=steps, batch_size=1, lr=3e-3))
        out[f"train: {name}"] = weights_hash(model)
    return out


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    print(
        json.dumps(
            {
                "capability": torch.backends.cpu.get_cpu_capability(),
                "threads": torch.get_num_threads(),
                **operations(),
                **data(),
                **trainings(steps),
            }
        )
    )
