"""Trains a few steps of one run of each model family and prints the SHA-256 of each one's weights
(run as a subprocess by tests/test_numerics.py, under environments that ask for other dispatch)."""
import hashlib
import json
import sys
from functools import partial

import ponder  # noqa: F401  (pins the numerics before torch is imported)
import torch
import torch.nn.functional as F

import numpy as np

from ponder.experiments import hyla, hyla_latent, hyper_ut
from ponder.experiments.survey_parity import parity_loss
from ponder.models.acmize import acmize
from ponder.models.recurrent import RecurrentPonderer
from ponder.models.vit import ViT
from ponder.tasks import cpvr, images, parity, sraven
from ponder.training import TrainConfig, train

SMOKE = hyper_ut.SIZES["smoke"]["model"]
SRAVEN = hyla.sraven_setup("smoke", dim=32, heads=4, depth=2)
TRAIN_COMBOS, _ = sraven.split(SRAVEN.k, SRAVEN.holdout)


def vit_acm():
    torch.manual_seed(0)
    return acmize(ViT(image=32, patch=4, dim=32, depth=2, heads=2), 4, 4, warm_start=True)


FAMILIES = {
    "sraven-hyla": (partial(hyla.sraven_model, SRAVEN), lambda s: sraven.batch(32, TRAIN_COMBOS, SRAVEN.f, seed=s), hyla.sraven_loss),
    "cpvr-hyper_act": (partial(hyper_ut.build, "hyper_act", 8, dict(SMOKE, dim=32)), lambda s: cpvr.sample(64, 8, [1, 2], seed=s), hyper_ut.loss_fn(0.01)),
    "vit-acm": (vit_acm, lambda s: images.sample(32, seed=s), lambda m, b: F.cross_entropy(m(b[0]), b[1])),
    "parity-act": (lambda: RecurrentPonderer(8, 32, 5, "act", -1.0), lambda s: parity.sample(64, 8, [1, 2, 3, 4], seed=s), parity_loss("act", 1e-3, 0.2, 0.01)),
}


def weights_hash(model: torch.nn.Module) -> str:
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode() + tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def blas_hashes() -> dict:
    """What numpy's and scipy's OpenBLAS compute for the figures: a t-SNE map and a probe's score."""
    rng = np.random.default_rng(0)
    codes = rng.normal(size=(300, 24)).astype(np.float32)
    labels = (codes[:, 0] + 0.5 * codes[:, 1] > 0).astype(int)
    probe = hyla_latent.decode(codes[:200], labels[:200], codes[200:], labels[200:])
    return {"blas-tsne": hashlib.sha256(hyla_latent.tsne(codes).tobytes()).hexdigest()[:16],
            "blas-probe": hashlib.sha256(np.float64(probe).tobytes()).hexdigest()[:16]}


if __name__ == "__main__":
    out = {"capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads(), **blas_hashes()}
    for name, (make, batches, loss_fn) in FAMILIES.items():
        torch.manual_seed(0)
        model = make()
        train(model, loss_fn, batches, TrainConfig(steps=int(sys.argv[1]) if len(sys.argv) > 1 else 30, batch_size=1, lr=3e-3))
        out[name] = weights_hash(model)
    print(json.dumps(out))
