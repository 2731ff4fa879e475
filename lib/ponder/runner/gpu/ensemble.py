"""Runs that differ only in their seed, trained as one: their weights stacked, one ``vmap``-ed step.

The C-PVR notebooks train every model on 3 seeds. On a GPU such a small model's step is bound by
the number of kernels it launches, not by their size (``python -m ponder.bench train``), so the
seeds can share the kernels: :func:`torch.func.stack_module_state` stacks the ``S`` models' weights
along a new first axis, and ``vmap(grad(loss))`` takes all ``S`` gradients with the operations
of one model, each on ``S`` times the data::

    W[s] = weights of seed s                                     [S, ...] per parameter
    g[s] = d loss(W[s], batch[s]) / d W[s]                       one vmap-ed call

AdamW is elementwise, so one optimizer over the stacked weights is ``S`` optimizers; weight decay
goes to the members' matrices (stacked: ``ndim >= 3``). Gradient clipping is per member, as
:func:`torch.nn.utils.clip_grad_norm_` would clip each run alone::

    g[s] <- g[s] * min(1, c / (||g[s]|| + 1e-6))                  ||g[s]|| over all of seed s's gradients

Each member keeps its own run in the cache: its checkpoints hold its slices of the weights and of
AdamW's moments in :mod:`ponder.runner.training`'s format (so a member could resume alone), and it ends
with its own weights and metrics. The data, the schedule and the held parameters are those of
:func:`ponder.runner.training.train`. What differs from training the members one by one is only how the
products and sums are grouped, so the numbers agree to float32 rounding, not bit for bit: a run
trained this way says so in its config (the experiments add ``"seeds_together": True``).

ACT's loop reads nothing back from the host inside ``vmap`` (:func:`ponder.models.act.act`), so
every model family of the C-PVR runs can be stacked; ``loss_fn`` may only call the model.
"""

import copy
import dataclasses
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass

import torch
from torch.func import functional_call, grad, stack_module_state, vmap
from tqdm.auto import tqdm

from ..runs import Run
from ..training import (
    TrainConfig,
    _checkpoint,
    _restore,
    default_device,
    hold_parameters,
    lr_at,
    make_optimizer,
    seed_everything,
    world,
)
from .cuda_graphs import CapturedStep, lr_on_device, set_lr

Batch = tuple[torch.Tensor, ...]


@dataclass(frozen=True)
class Member:
    """One run of a group: its cache entry (``None``: no checkpoints), its optimisation (the group's
    but for ``seed``) and its data."""

    run: Run | None
    cfg: TrainConfig
    batches: Callable[[int], Batch]


def stacked_batch(members: Sequence[Member], step: int, device: torch.device) -> Batch:
    """Every member's batch of ``step``, stacked: each tensor ``[S, B, ...]``."""
    return tuple(torch.stack(parts).to(device) for parts in zip(*(m.batches(step) for m in members)))


def stacked_optimizer(params: dict[str, torch.Tensor], cfg: TrainConfig, capturable: bool = False) -> torch.optim.AdamW:
    """:func:`ponder.runner.training.make_optimizer` for stacked weights: the same groups in the same order
    (decay on the members' matrices), so that its state slices into the members' optimizers'."""
    groups = [
        {"params": [p for p in params.values() if p.ndim >= 3], "weight_decay": cfg.weight_decay},
        {"params": [p for p in params.values() if p.ndim < 3], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=cfg.lr, fused=True, capturable=capturable)


def clip_members(grads: dict[str, torch.Tensor], max_norm: float) -> torch.Tensor:
    """Scale each member's gradients (``[S, ...]`` each) to norm at most ``max_norm``, in place;
    return the norms before clipping, ``[S]``."""
    norms = torch.linalg.vector_norm(
        torch.stack([torch.linalg.vector_norm(g.flatten(1), dim=1) for g in grads.values()]), dim=0
    )
    scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    for g in grads.values():
        g.mul_(scale.view(-1, *[1] * (g.dim() - 1)))
    return norms


class Stacked:
    """``S`` models of one architecture as stacked weights, with the optimizer that trains them.

    ``models`` are the members' modules: they start the weights and take them back
    (:meth:`unstack`); the skeleton (the architecture without weights) says which parameters
    :func:`~ponder.runner.training.hold_parameters` holds, so that the members' own parameters keep
    training and their optimizers (:meth:`member_optimizers`) list every one, as a run's alone does.
    """

    def __init__(self, models: Sequence[torch.nn.Module], cfg: TrainConfig, capturable: bool = False):
        self.models, self.cfg = list(models), cfg
        self.params, self.buffers = stack_module_state(self.models)
        self.skeleton = copy.deepcopy(self.models[0]).to("meta")
        self.optimizer = stacked_optimizer(self.params, cfg, capturable)

    def hold(self, step: int) -> None:
        """The parameters :func:`~ponder.runner.training.hold_parameters` holds at ``step`` get no gradient."""
        hold_parameters(self.skeleton, step, self.cfg)
        for name, p in self.skeleton.named_parameters():
            self.params[name].requires_grad_(p.requires_grad)

    def gradient_function(
        self, loss_fn: Callable[[Callable, Batch], torch.Tensor]
    ) -> Callable[[Batch], tuple[dict[str, torch.Tensor], torch.Tensor]]:
        """``stacked batch -> (gradients {name: [S, ...]}, losses [S])``: every member's gradients of
        ``loss_fn(model, its batch)`` in one ``vmap``-ed call, for the parameters that train."""

        def member_loss(trained, held, buffers, batch):
            net = lambda *inputs: functional_call(self.skeleton, ({**held, **trained}, buffers), inputs)  # noqa: E731
            loss = loss_fn(net, batch)
            return loss, loss.detach()

        gradients = vmap(grad(member_loss, has_aux=True))

        def compute(batch: Batch) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
            # detached (the same storage): ``grad`` differentiates its own inputs, and the stacked
            # weights, which require grad, would otherwise hang every step's graph on its gradients
            trained = {n: p.detach() for n, p in self.params.items() if p.requires_grad}
            held = {n: p.detach() for n, p in self.params.items() if not p.requires_grad}
            return gradients(trained, held, self.buffers, batch)

        return compute

    def update_function(
        self, loss_fn: Callable[[Callable, Batch], torch.Tensor], capture: bool = False
    ) -> Callable[[Batch], torch.Tensor]:
        """One update of every member, ``stacked batch -> losses [S]``: :meth:`gradient_function`'s
        gradients, clipped per member, then AdamW; with ``capture``, recorded as a CUDA graph
        (:class:`~ponder.runner.gpu.cuda_graphs.CapturedStep`, again whenever the held set changes)."""
        if capture:
            lr_on_device(self.optimizer)
        gradients = self.gradient_function(loss_fn)

        def update(batch: Batch) -> torch.Tensor:
            grads, losses = gradients(batch)
            # vmap may hand a gradient back in another layout (e.g. a transposed weight's), and the
            # fused AdamW reads a gradient in its parameter's layout: the stacked weights are contiguous
            grads = {name: g.contiguous() for name, g in grads.items()}
            self.optimizer.zero_grad(set_to_none=True)
            clip_members(grads, self.cfg.grad_clip)
            for name, g in grads.items():
                self.params[name].grad = g
            self.optimizer.step()
            return losses

        phase = lambda: tuple(p.requires_grad for p in self.params.values())  # noqa: E731
        return CapturedStep(update, phase=phase) if capture else update

    @torch.no_grad()
    def unstack(self) -> None:
        """Copy every member's slice of the stacked weights back into its module."""
        for s, model in enumerate(self.models):
            for name, t in model.named_parameters():
                t.copy_(self.params[name][s])
            for name, t in model.named_buffers():
                t.copy_(self.buffers[name][s])

    def member_optimizers(self) -> list[torch.optim.AdamW]:
        """Each member's own AdamW (:func:`~ponder.runner.training.make_optimizer`) holding its slice of
        the stacked optimizer's state: what a run alone would checkpoint."""
        optimizers = []
        stacked = [p for group in self.optimizer.param_groups for p in group["params"]]
        for s, model in enumerate(self.models):
            optimizer = make_optimizer(model, self.cfg)
            mine = [p for group in optimizer.param_groups for p in group["params"]]
            for p, q in zip(mine, stacked):
                if q in self.optimizer.state:
                    state = self.optimizer.state[q]
                    optimizer.state[p] = {
                        "step": state["step"].clone(),
                        "exp_avg": state["exp_avg"][s],
                        "exp_avg_sq": state["exp_avg_sq"][s],
                    }
            optimizers.append(optimizer)
        return optimizers

    def load_member_optimizers(self, optimizers: Sequence[torch.optim.Optimizer]) -> None:
        """The stacked optimizer's state from the members' (restored) optimizers: the inverse of
        :meth:`member_optimizers`."""
        lists = [[p for group in o.param_groups for p in group["params"]] for o in optimizers]
        state = {}
        for index, params in enumerate(zip(*lists)):
            if params[0] in optimizers[0].state:
                each = [o.state[p] for o, p in zip(optimizers, params)]
                state[index] = {
                    "step": each[0]["step"],
                    **{k: torch.stack([e[k] for e in each]) for k in ("exp_avg", "exp_avg_sq")},
                }
        self.optimizer.load_state_dict({"state": state, "param_groups": self.optimizer.state_dict()["param_groups"]})


def check_group(members: Sequence[Member]) -> TrainConfig:
    """The group's optimisation with seed 0; raises unless the members differ only in their seed."""
    if not members:
        raise ValueError("a group of runs trained together needs at least one run")
    cfgs = {dataclasses.replace(m.cfg, seed=0) for m in members}
    if len(cfgs) > 1:
        raise ValueError(f"runs trained together must differ only in their seed; got {sorted(map(str, cfgs))}")
    if len({m.cfg.seed for m in members}) < len(members):
        raise ValueError(f"runs trained together need different seeds; got {[m.cfg.seed for m in members]}")
    return cfgs.pop()


def train_together(
    models: Sequence[torch.nn.Module],
    loss_fn: Callable[[Callable, Batch], torch.Tensor],
    members: Sequence[Member],
    capture: bool = False,
    desc: str = "train",
) -> list[list[dict]]:
    """Train ``models`` (one per member, each initialised with its seed) in place as one stack;
    return each member's loss history. Checkpoints go to every member's run each
    ``checkpoint_every`` steps; training resumes where all of them have one of the same step."""
    cfg = check_group(members)
    device = default_device()
    capture = capture and device.type == "cuda"
    for model in models:
        model.to(device)
    start, histories, optimizers = _resume(models, members, cfg)
    stacked = Stacked(models, cfg, capturable=capture)
    if optimizers:
        stacked.load_member_optimizers(optimizers)
    update = stacked.update_function(loss_fn, capture)
    bar = tqdm(
        range(start, cfg.steps), desc=f"{desc} x{len(members)} seeds", initial=start, total=cfg.steps, leave=False
    )
    for step in bar:
        set_lr(stacked.optimizer, lr_at(step, cfg))
        stacked.hold(step)
        losses = update(stacked_batch(members, step, device))
        if (step + 1) % cfg.log_every == 0 or step + 1 == cfg.steps:
            for history, loss in zip(histories, losses.tolist()):
                history.append({"step": step + 1, "loss": loss})
            bar.set_postfix(loss=f"{histories[0][-1]['loss']:.3f}")
        if members[0].run is not None and (step + 1) % cfg.checkpoint_every == 0 and step + 1 < cfg.steps:
            stacked.unstack()
            for m, model, optimizer, history in zip(members, models, stacked.member_optimizers(), histories):
                _checkpoint(m.run, step + 1, history, model, optimizer)
    bar.close()
    stacked.unstack()
    for model in models:
        model.eval()
    return histories


def _resume(
    models: Sequence[torch.nn.Module], members: Sequence[Member], cfg: TrainConfig
) -> tuple[int, list[list[dict]], list | None]:
    """``(step, histories, member optimizers)`` restored from the members' checkpoints where every
    member has one of the same step; else ``(0, empty histories, None)`` and the models as built."""
    states = [m.run.load_tensors("checkpoint") if m.run is not None else None for m in members]
    if any(s is None for s in states) or len({s[1]["step"] for s in states}) > 1:
        return 0, [[] for _ in members], None
    optimizers = [make_optimizer(model, cfg) for model in models]
    restored = [_restore(state, model, optimizer) for state, model, optimizer in zip(states, models, optimizers)]
    return restored[0][0], [history for _, history in restored], optimizers


def train_runs(
    members: Sequence[Member],
    make_model: Callable[[], torch.nn.Module],
    loss_fn: Callable[[Callable, Batch], torch.Tensor],
    evaluate: Callable[[torch.nn.Module], dict] | None = None,
    capture: bool = False,
) -> list[tuple[torch.nn.Module, dict]]:
    """:func:`ponder.runner.training.train_run` for a group of runs that differ only in their seed:
    ``[(model, metrics)]`` per member, the unfinished ones trained together (:func:`train_together`).

    ``make_model()`` builds a member's model after its seed is set; ``evaluate(model)`` adds to each
    member's metrics. Every member's run is locked while the group trains (in one order, so that
    two processes asking for overlapping groups wait for each other instead of training twice).
    """
    check_group(members)
    if world()[1] > 1:
        raise ValueError("runs trained together take one process; under torchrun train them one by one")
    models = []
    for m in members:
        seed_everything(m.cfg.seed)
        models.append(make_model())
    cached = lambda i: (members[i].run.load_model(models[i]).to(default_device()).eval(), members[i].run.metrics())  # noqa: E731
    todo = [i for i, m in enumerate(members) if not m.run.done]
    with ExitStack() as locks:
        for m in sorted(members, key=lambda m: str(m.run.dir)):
            locks.enter_context(m.run.lock())
        todo = [i for i in todo if not members[i].run.done]
        if todo:
            histories = train_together(
                [models[i] for i in todo], loss_fn, [members[i] for i in todo], capture, desc=members[todo[0]].run.name
            )
            for i, history in zip(todo, histories):
                metrics = {"history": history}
                if evaluate is not None:
                    with torch.no_grad():
                        metrics.update(evaluate(models[i]))
                members[i].run.finish(metrics, models[i])
    return [cached(i) for i in range(len(members))]
