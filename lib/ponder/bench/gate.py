"""Wall-clock of the ACM gate's softmax over its few choices, alone and in a phase-III step.

ATen's CPU softmax over a short last dimension (the gate's 4-5 choices) runs row by row;
:func:`~ponder.models.acm.softmax_choices` computes the same softmax along a leading dimension,
vectorised over the rows. Both are measured in the same run, interleaved, on quick's shapes
(batch 32, 65 tokens, the noisy and the noiseless scores stacked): forward and backward of the
softmax alone, and a phase-III step (forward and backward of ``finetune_loss``) of quick's 4-block
ACM ViT (20 ACMs, random weights), with the gate's softmax taken either way. Reported as ratios of
the median times, and per round.
"""

from unittest import mock

import torch

from ..models import acm
from ..models.acm_phases import finetune_loss
from ..models.acmize import acmize
from ..models.vit import ViT
from ..runner.timing import median, time_rounds
from ..runner.training import num_threads
from ..studies.acm import phases as acm_experiments
from . import write_result

BATCH, TOKENS = 32, 65


def last_dim_softmax(scores: torch.Tensor) -> torch.Tensor:
    """The baseline: ``softmax`` over the last dimension where the choices are."""
    return scores.softmax(dim=-1)


def softmax_pass(softmax, scores: torch.Tensor, weights: torch.Tensor) -> None:
    (softmax(scores) * weights).sum().backward()


def phase3_step(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, softmax) -> None:
    with mock.patch.object(acm, "softmax_choices", softmax):
        finetune_loss(model, x, y, 0.4, acm_experiments.loss_weights("quick"), argmax_budget=True).backward()


def measure(repeats: int = 20) -> dict:
    torch.manual_seed(0)
    scores = torch.randn(2, BATCH, TOKENS, 5, requires_grad=True)
    weights = torch.randn(2, BATCH, TOKENS, 5)
    s = acm_experiments.sizes("quick")
    model = acmize(
        ViT(image=32, patch=4, dim=s["dim"], depth=s["depth"], heads=s["heads"]), 4, acm_experiments.GATE_HIDDEN
    ).train()
    x, y = torch.rand(BATCH, 1, 32, 32), torch.randint(0, 10, (BATCH,))
    with num_threads(1):
        times = time_rounds(
            {
                "softmax, last dimension": lambda: softmax_pass(last_dim_softmax, scores, weights),
                "softmax, leading dimension": lambda: softmax_pass(acm.softmax_choices, scores, weights),
                "phase-III step, last dimension": lambda: phase3_step(model, x, y, last_dim_softmax),
                "phase-III step, leading dimension": lambda: phase3_step(model, x, y, acm.softmax_choices),
            },
            repeats,
        )
    result = {"threads": 1, "repeats": repeats, "median_ms": {name: 1e3 * median(t) for name, t in times.items()}}
    for case in ("softmax", "phase-III step"):
        last, leading = times[f"{case}, last dimension"], times[f"{case}, leading dimension"]
        result[f"{case}: leading / last"] = median(leading) / median(last)
        result[f"{case}: per-round ratios"] = [a / b for a, b in zip(leading, last)]
    return result


def main() -> None:
    write_result("gate", measure())
