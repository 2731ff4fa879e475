"""The model kinds of the Hyper-UT comparisons: one constructor from a kind and a model config.

Every kind shares the embedding, the classifier head and the config
(:data:`ponder.studies.hyper_ut.sizes.cpvr.MODEL`) and
differs in its core and its depth loop: the ``transformer`` stacks ``steps`` distinct blocks; ``ut`` repeats one
shared block (:mod:`.universal`); ``film_act`` conditions it on the step (:mod:`.film`); ``hyper`` generates
its weights per example and step from a routed pool (:mod:`.hyper_block`, or the low-rank delta of
:mod:`.hyper`); a kind ending in ``_act`` halts with ACT (:class:`~.classifier.ACTDepth`). The C-PVR runs
(:mod:`ponder.studies.hyper_ut.cpvr`) and the image runs of hut-8 (:mod:`ponder.studies.hyper_ut.vision`)
build them here, so neither's cache key covers the other's experiment.
"""

import torch

from ..checks import check_choice
from .classifier import ACTDepth, Classifier, FixedDepth, LayerStack, SequenceEmbedding
from .film import FiLMCore
from .hyper import HyperCore
from .hyper_block import HyperBlockCore
from .universal import UniversalCore

# No fixed-depth UT+FiLM: it answers none of the questions (FiLM is ours, not a baseline of the paper;
# hut-4 asks how UT+FiLM+ACT allocates steps), and at quick it would cost three runs of ~1.5 CPU-minutes.
KINDS = ("transformer", "ut", "ut_act", "film_act", "hyper", "hyper_act")
LABELS = {
    "transformer": "Transformer",
    "ut": "UT",
    "ut_act": "UT+ACT",
    "film_act": "UT+FiLM+ACT",
    "hyper": "Hyper-UT w/o ACT",
    "hyper_act": "Hyper-UT",
}
ACT_KINDS = tuple(k for k in KINDS if k.endswith("_act"))
GENERATORS = ("block", "delta")


def build(
    kind: str, length: int, model: dict, embedding: torch.nn.Module | None = None, classes: int | None = None
) -> Classifier:
    """The classifier of ``kind``: for C-PVR sequences of ``length`` by default (values and labels
    in ``[0, length)``), or on top of another ``embedding`` (e.g. image patches) with ``classes``."""
    check_choice("kind", kind, KINDS)
    m = model
    dim, heads, steps, ratio = m["dim"], m["heads"], m["steps"], m["mlp_ratio"]
    base = kind.removesuffix("_act")
    if base == "transformer":
        core = LayerStack(dim, heads, steps, ratio)
    elif base == "ut":
        core = UniversalCore(dim, heads, steps, ratio)
    elif base == "film":
        core = FiLMCore(dim, heads, steps, ratio)
    elif check_choice("generator", m["generator"], GENERATORS) == "block":
        core = HyperBlockCore(
            dim, heads, steps, m["pool_size"], m["code_dim"], ratio, m["summary"], m["spread"], m["router_step"]
        )
    else:
        core = HyperCore(
            dim, heads, steps, m["pool_size"], m["code_dim"], m["rank"], ratio, m["summary"], m["router_step"]
        )
    depth = (
        ACTDepth(dim, m["act_bias"], m["act_eps"], m["act_level"], compact=True) if kind in ACT_KINDS else FixedDepth()
    )
    embedding = embedding if embedding is not None else SequenceEmbedding(length, length, dim, m["values"])
    return Classifier(embedding, core, depth, dim, classes=classes or length)


def parameter_count(model: torch.nn.Module) -> int:
    """The model's trainable and frozen parameters, every one counted once."""
    return sum(p.numel() for p in model.parameters())
