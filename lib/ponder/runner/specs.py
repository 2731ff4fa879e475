"""A run as data: its name, what its key hashes, how its training is built, and the runs it rests on.

A :class:`Spec` declares one run: ``name``, ``config`` and ``profile`` (what :class:`~ponder.runner.runs.Run` keys it
by, together with the code of the modules ``code``) and ``recipe``, a module-level function that receives the
config (and the models of the runs it ``needs``) and nothing else and returns the run's :class:`Recipe` (how to
build the model, the loss, the batches of each step, the optimisation, the evaluation). Declaring a spec builds,
draws and trains nothing, so the planner (:func:`ponder.runner.parallel.plan`) tells what a profile has left to train
from specs and the run cache alone.

A run built on the trained model of another (ACM's phases) names it among its ``needs``: the planner trains it
first, and the recipe receives its model after the config. A run whose config depends on the results of others
(a learning rate chosen on a grid's validation scores) is a :class:`Chosen`: the specs it is chosen ``among``
and ``declare``, a function of their metrics that returns its spec. The planner trains the ``among`` first; the
choice reads their ``metrics.json``, no weights.

Calling either trains the run, or loads it where it is finished::

    model, metrics = spec()        # spec.metrics(): the metrics alone, no weights read
"""

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import cached_property

import torch

from .gpu import ensemble
from .runs import Run
from .training import Batch, TrainConfig, num_threads, train_run


@dataclass(frozen=True, eq=False)
class Recipe:
    """How one run trains: ``make()`` builds the model (after the seed is set), ``loss(model, batch)``,
    ``batches(step)`` the batch of each step, ``cfg`` the optimisation, ``evaluate(model)`` what its
    metrics add to the loss history."""

    make: Callable[[], torch.nn.Module]
    loss: Callable[[torch.nn.Module, Batch], torch.Tensor]
    batches: Callable[[int], Batch]
    cfg: TrainConfig
    evaluate: Callable[[torch.nn.Module], dict] | None = None


@dataclass(frozen=True, eq=False)
class Spec:
    """One run, declared. ``trainer`` names the family's training function by module (``hyper_ut.train_cpvr``),
    the name its times are recorded under (``figures/TIMES.json``). ``one_thread``: trained on one thread
    wherever it trains (its numbers do not depend on where it trained); ``capture``: its step captured as a CUDA graph
    on a GPU. ``together``: the specs of a group of seeds trained as one stack (:mod:`ponder.runner.gpu.ensemble`),
    this one
    among them; empty for a run trained alone. ``needs``: the runs whose trained models this one builds on (ACM's
    phases, each on the one before): trained first, and handed to the recipe after the config,
    ``recipe(config, *their models)``."""

    name: str
    config: dict
    profile: str
    code: tuple[str, ...]
    recipe: Callable[[dict], Recipe]
    trainer: str
    one_thread: bool = False
    capture: bool = False
    together: tuple["Spec", ...] = field(default=())
    needs: tuple["Spec", ...] = field(default=())

    @cached_property
    def run(self) -> Run:
        return Run(self.name, self.config, self.profile, self.code)

    @property
    def done(self) -> bool:
        """Finished: its run (and, trained together, every run of its group) is in the cache."""
        return all(spec.run.done for spec in self.together or (self,))

    @property
    def leads(self) -> bool:
        """Whether this spec trains its group (the first of ``together``), or trains alone."""
        return not self.together or self.together[0].run.key == self.run.key

    @property
    def key(self) -> str:
        """What makes two specs one job: the run's folder, or its group's first run's."""
        return str((self.together[0] if self.together else self).run.dir)

    def metrics(self) -> dict:
        """The run's metrics, read from the cache (trained first where it is not finished): no weights load."""
        return self.run.metrics() if self.run.done else self()[1]

    def __call__(self) -> tuple[torch.nn.Module | None, dict]:
        """``(model, metrics)``: trained, or loaded from the cache (:func:`ponder.runner.training.train_run`)."""
        with num_threads(1) if self.one_thread else nullcontext():
            if self.together:
                return self._train_together()
            r = self.recipe(self.config, *(need()[0] for need in self.needs))
            return train_run(self.run, r.make, r.loss, r.batches, r.cfg, r.evaluate, capture=self.capture)

    def _train_together(self) -> tuple[torch.nn.Module | None, dict]:
        """This run's ``(model, metrics)`` of its group, trained as one stack
        (:func:`ponder.runner.gpu.ensemble.train_runs`)."""
        recipes = [spec.recipe(spec.config) for spec in self.together]
        members = [ensemble.Member(s.run, r.cfg, r.batches) for s, r in zip(self.together, recipes, strict=True)]
        first = recipes[0]
        results = ensemble.train_runs(members, first.make, first.loss, first.evaluate, capture=self.capture)
        return results[[s.run.key for s in self.together].index(self.run.key)]


@dataclass(frozen=True, eq=False)
class Chosen:
    """A run declared from the metrics of the runs ``among`` (:func:`declare` receives their metrics, in
    order, and returns the run's :class:`Spec`): the planner trains ``among`` first. ``label`` names it in
    one line, apart from every other run chosen (it is its key until it is chosen), ``leads`` as
    :attr:`Spec.leads`."""

    among: tuple[Spec, ...]
    declare: Callable[[list[dict]], Spec]
    label: str
    leads: bool = True

    @property
    def ready(self) -> bool:
        return all(spec.done for spec in self.among)

    @property
    def trainer(self) -> str:
        return self.among[0].trainer

    @property
    def key(self) -> str:
        return f"chosen: {self.label}"

    def spec(self) -> Spec:
        """The run's spec, chosen on the metrics of ``among`` (those not finished are trained first)."""
        return self.declare([spec.metrics() for spec in self.among])

    def metrics(self) -> dict:
        return self.spec().metrics()

    def __call__(self) -> tuple[torch.nn.Module | None, dict]:
        return self.spec()()


def declared(job: object) -> bool:
    """Whether ``job`` is a declared run (a :class:`Spec` or :class:`Chosen`), not a function to call."""
    return isinstance(job, Spec | Chosen)
