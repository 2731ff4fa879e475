"""The run cache: ``results/<profile>/<name>/<key>/`` (``cpu`` shares ``quick``'s: :func:`~ponder.paths.runs_dir`).

A run is keyed by its full config and the code version (a hash of the source of the modules
it depends on, by default all of the library's modelling code), so re-running a notebook reuses finished runs, a changed config or model retrains,
and an interrupted run resumes from its last checkpoint. A run folder holds

* ``config.json``     — what the key was made from (for people reading the folder);
* ``checkpoint.safetensors`` — the training state while the run is going (never pickle);
* ``model.safetensors``      — the final weights;
* ``no-weights``      — an empty marker instead, for a run finished without a model;
* ``metrics.json``    — written last: the run is finished when it is there together with its
  final weights (or the marker).

Every write is atomic (temporary file, then ``os.replace``), so a kill mid-write never leaves
a half-written file that a later run would trust. A file damaged otherwise (a disk error, an
edit by hand) raises :class:`CorruptRun`, naming the file and the run folder to delete.
"""
import fcntl
import hashlib
import importlib
import json
import os
import tempfile
from collections.abc import Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from types import ModuleType

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from . import numerics
from .paths import ROOT, runs_dir
from .profiles import check_profile

# Modules whose changes do not change what a run computes: presentation and plumbing only.
_PRESENTATION = {"plots", "widgets", "claims.py", "notebooks.py", "parallel.py", "paths.py", "__main__.py"}


# Every run depends on these, whatever it names.
_ALWAYS = ("ponder.training", "ponder.runs", "ponder.checks")


def _sources(modules: Sequence[str | ModuleType] | None) -> list[Path]:
    if modules is None:
        every = sorted((ROOT / "lib" / "ponder").rglob("*.py"))
        return [p for p in every if not _PRESENTATION & {p.name, p.parent.name}]
    names = sorted({m if isinstance(m, str) else m.__name__ for m in modules} | set(_ALWAYS))
    return [Path(importlib.import_module(name).__file__) for name in names]


def code_version(modules: Sequence[str | ModuleType] | None = None) -> str:
    """Hash of the source of ``modules`` (names or module objects) and the training code.

    ``None`` hashes all of the library except presentation (plots, widgets, ledger): safe, but
    then any edit anywhere retrains. Experiments name the modules their runs depend on.
    """
    digest = hashlib.sha256()
    for path in _sources(modules):
        digest.update(path.resolve().relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def config_key(config: dict, modules: Sequence[str | ModuleType] | None = None) -> str:
    """Short hash of a JSON-able config together with the code version of ``modules``."""
    blob = json.dumps({"config": config, "code": code_version(modules), "numerics": numerics.describe()}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def atomic_write(path: Path, write) -> None:
    """Call ``write(tmp_path)`` then move the file into place in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_json(path: Path, data) -> None:
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=float)))


class CorruptRun(RuntimeError):
    """A file of a run folder cannot be read; the message names it and the folder to delete."""


class Run:
    """One cached training run.

    >>> run = Run("cpvr/ut", {"steps": 100, "width": 64}, "smoke", code=["ponder.models.universal"])
    >>> if not run.done: ...train, run.finish(metrics)

    ``code`` names the modules whose source the result depends on (see :func:`code_version`).
    """

    def __init__(self, name: str, config: dict, profile: str, code: Sequence[str | ModuleType] | None = None):
        check_profile(profile)
        self.name, self.config, self.profile = name, config, profile
        self.key = config_key(config, code)
        self.dir = runs_dir(profile) / name / self.key

    @property
    def done(self) -> bool:
        """Finished: the metrics are there, and the final weights too unless it finished without them."""
        weights = (self.dir / "model.safetensors").exists() or (self.dir / "no-weights").exists()
        return weights and (self.dir / "metrics.json").exists()

    def _corrupt(self, path: Path, why) -> CorruptRun:
        """The error for an unreadable ``path`` of this run: names it and the folder to delete."""
        return CorruptRun(f"{path} is corrupt ({why}); delete the run folder {self.dir} to retrain run {self.name}")

    def metrics(self) -> dict:
        path = self.dir / "metrics.json"
        try:
            metrics = json.loads(path.read_text())
        except ValueError as error:  # invalid JSON or UTF-8
            raise self._corrupt(path, error) from error
        if not isinstance(metrics, dict):
            raise self._corrupt(path, f"holds a {type(metrics).__name__}, not a JSON object")
        return metrics

    def finish(self, metrics: dict, model: torch.nn.Module | None = None) -> dict:
        """Store the final weights (if given) and the metrics; the run counts as done after this."""
        write_json(self.dir / "config.json", self.config)
        if model is not None:
            self.save_tensors("model", _plain_state_dict(model))
            (self.dir / "no-weights").unlink(missing_ok=True)
        else:
            atomic_write(self.dir / "no-weights", lambda tmp: tmp.write_text(""))
        write_json(self.dir / "metrics.json", metrics)
        (self.dir / "checkpoint.safetensors").unlink(missing_ok=True)
        return metrics

    # -- tensors -------------------------------------------------------------------------
    def save_tensors(self, stem: str, tensors: dict, meta: dict | None = None) -> None:
        tensors = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
        meta = {k: json.dumps(v) for k, v in (meta or {}).items()}
        atomic_write(self.dir / f"{stem}.safetensors", lambda tmp: save_file(tensors, str(tmp), metadata=meta))

    def load_tensors(self, stem: str) -> tuple[dict, dict] | None:
        """``(tensors, meta)`` of ``<stem>.safetensors``, or ``None`` if there is none."""
        path = self.dir / f"{stem}.safetensors"
        if not path.exists():
            return None
        try:
            with safe_open(str(path), framework="pt") as f:
                meta = {k: json.loads(v) for k, v in (f.metadata() or {}).items()}
            return load_file(str(path)), meta
        except (SafetensorError, ValueError) as error:  # truncated or garbled; bad JSON metadata
            raise self._corrupt(path, error) from error

    @contextmanager
    def lock(self):
        """Hold the run's lock file for the block: a second process that wants to train the same run
        waits here until the first has finished it (then finds it done) or died (then resumes it)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def load_model(self, model: torch.nn.Module) -> torch.nn.Module:
        """Load the final weights of a finished run into ``model``."""
        loaded = self.load_tensors("model")
        if loaded is None:
            raise FileNotFoundError(f"run {self.name} ({self.key}) has no final weights; train it first")
        try:
            model.load_state_dict(loaded[0])
        except RuntimeError as error:  # missing, unexpected or misshapen tensors
            raise self._corrupt(self.dir / "model.safetensors", f"its weights do not fit the model: {error}") from error
        return model


class NotCached(LookupError):
    """Raised instead of training a run that is not finished, inside :func:`only_cached`."""


_ONLY_CACHED = ContextVar("only_cached", default=False)


@contextmanager
def only_cached():
    """Within the block, :func:`check_may_train` raises :class:`NotCached`: calling an experiment
    function there tells, cheaply, whether every run it needs is finished (``ponder.parallel``)."""
    token = _ONLY_CACHED.set(True)
    try:
        yield
    finally:
        _ONLY_CACHED.reset(token)


def check_may_train(run: Run) -> None:
    """Called before training ``run``: raises :class:`NotCached` inside :func:`only_cached`."""
    if _ONLY_CACHED.get():
        raise NotCached(f"{run.name} ({run.key}) is not finished")


def _plain_state_dict(model: torch.nn.Module) -> dict:
    """State dict without a DistributedDataParallel ``module.`` prefix, shared tensors cloned."""
    model = getattr(model, "module", model)
    return {k: v.clone() for k, v in model.state_dict().items()}
