"""A training step recorded once as a CUDA graph and replayed: one launch instead of hundreds.

The models here are small, and eager PyTorch leaves a GPU idle between their kernel launches:
the paper-size sraven model launches ~1,400 kernels per step and trains at about 1 % of an
H100's arithmetic limit (``python -m ponder.bench train``). A CUDA graph records every kernel of
one step (forward, backward, gradient clipping, the fused AdamW update) with its arguments and
memory addresses, and :meth:`torch.cuda.CUDAGraph.replay` launches the lot in one call.

What a replay reads must therefore stay where the capture found it:

* the batch is copied into *static* tensors, allocated once;
* the learning rate is a tensor on the GPU that the loop overwrites (:func:`lr_on_device`; AdamW
  built with ``capturable=True``, which also keeps its step counts on the GPU);
* the gradients are allocated inside the capture and rewritten by every replay.

Which steps may be captured: those whose shapes never change and that never wait for the host
(no ``.item()``, no shapes that depend on the data, as the grouped ACM layer has). ACT's loop
waits for the host only to stop early or to compact, and under a capture it does neither
(:func:`ponder.models.act.act`). The experiments say which runs qualify (``train_run(...,
capture=True)``) and name this module in those runs' code version; everywhere else, and on the
CPU, the same step runs eagerly.

Phases: a run that holds some parameters for a while (``TrainConfig.hold``) changes which
gradients its step computes when the hold ends. The step reports its phase (which parameters
train), and a new phase is warmed up and captured afresh; the old graph is dropped.

Warm-up: PyTorch asks for a few eager iterations on a side stream before a capture (lazily
created workspaces, the optimizer's state). Here they are the run's first :data:`WARMUP` real
steps, not thrown away. A capture computes nothing, so the captured step is then replayed once.
"""

from collections.abc import Callable, Hashable

import torch

Batch = tuple[torch.Tensor, ...]

WARMUP = 3


def lr_on_device(optimizer: torch.optim.Optimizer) -> None:
    """Turn every group's learning rate into a 0-d tensor on its parameters' device, so that a
    captured step reads the value the loop writes (:func:`set_lr`) instead of the one it was
    captured with."""
    for group in optimizer.param_groups:
        device = group["params"][0].device
        group["lr"] = torch.tensor(float(group["lr"]), device=device)


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    """Set every group's learning rate to ``lr``: in place where it is a tensor (:func:`lr_on_device`)."""
    for group in optimizer.param_groups:
        if torch.is_tensor(group["lr"]):
            group["lr"].fill_(lr)
        else:
            group["lr"] = lr


class CapturedStep:
    """``update(batch) -> loss``, run eagerly for :data:`WARMUP` calls, then captured and replayed.

    ``update`` must be one whole training step on CUDA tensors with shapes that never change; the
    loss it returns is the static tensor that every replay overwrites (read it, e.g. ``.item()``,
    before the next call). ``phase()`` names what the step computes (e.g. which parameters
    train); when it changes, the step is warmed up and captured again.
    """

    def __init__(
        self,
        update: Callable[[Batch], torch.Tensor],
        phase: Callable[[], Hashable] = lambda: None,
        warmup: int = WARMUP,
    ):
        self.update, self.phase, self.warmup = update, phase, warmup
        self.current = phase()
        self.eager_calls = 0
        self.graph: torch.cuda.CUDAGraph | None = None
        self.static: Batch = ()
        self.loss: torch.Tensor | None = None

    def __call__(self, batch: Batch) -> torch.Tensor:
        if (phase := self.phase()) != self.current:
            self.current, self.eager_calls, self.graph, self.static, self.loss = phase, 0, None, (), None
        if self.graph is not None:
            return self.replay(batch)
        if self.eager_calls < self.warmup:
            self.eager_calls += 1
            return self.on_side_stream(batch)
        self.capture(batch)
        self.graph.replay()
        return self.loss

    def on_side_stream(self, batch: Batch) -> torch.Tensor:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            loss = self.update(batch)
        torch.cuda.current_stream().wait_stream(side)
        return loss

    def capture(self, batch: Batch) -> None:
        self.static = tuple(t.clone() for t in batch)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.loss = self.update(self.static)
        self.graph = graph

    def replay(self, batch: Batch) -> torch.Tensor:
        shapes = [tuple(t.shape) for t in batch]
        if shapes != [tuple(t.shape) for t in self.static]:
            raise ValueError(
                f"a captured step needs batches of one shape: captured {[tuple(t.shape) for t in self.static]}, "
                f"got {shapes}"
            )
        for static, t in zip(self.static, batch):
            static.copy_(t, non_blocking=True)
        self.graph.replay()
        return self.loss
