"""The run cache: ``results/<profile>/<name>/<key>/`` (``cpu`` shares ``quick``'s: :func:`~ponder.paths.runs_dir`).

A run is keyed by its full config and the code version (a hash of the syntax trees, without docstrings, of every
library module the run's defining module imports, found from its import statements), so re-running a
notebook reuses finished runs, a changed config or model retrains, and an interrupted run resumes
from its last checkpoint. A run folder holds

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

import ast
import fcntl
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from .. import numerics
from ..paths import ROOT, runs_dir
from ..profiles import check_profile

PACKAGE = ROOT / "lib" / "ponder"


def is_sizes(module: str) -> bool:
    """Whether ``module`` is a study's table of sizes (``ponder.studies.acm.sizes``,
    ``ponder.studies.hyper_ut.sizes.cpvr``): every entry a run uses enters its config, so they are data, not code."""
    return "sizes" in module.split(".")


# Every run is trained by the training loop, whichever module defines it.
_TRAINER = "ponder.runner.training"


def module_file(name: str, package: Path = PACKAGE) -> Path | None:
    """The source of module ``name`` (``ponder.x.y``) under ``package``, or ``None`` if it is not one."""
    parts = name.split(".")[1:]
    candidates = [package.joinpath(*parts, "__init__.py")] + (
        [package.joinpath(*parts).with_suffix(".py")] if parts else []
    )
    return next((path for path in candidates if path.is_file()), None)


def imported_by(name: str, package: Path = PACKAGE, every_statement: bool = False) -> set[str]:
    """The ``ponder`` modules the source of ``name`` imports.

    A module's functions run when a run trains, so every import statement in it counts, at any depth;
    a package's ``__init__`` counts only the imports it makes when the package is imported (its
    top-level statements), since its functions orchestrate runs rather than compute them, unless
    ``every_statement`` (the library's import graph: ``tests/test_layout.py``, ``tools/measures.py``)."""
    path = module_file(name, package)
    tree = ast.parse(path.read_bytes(), filename=str(path))
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    statements = tree.body if is_package and not every_statement else list(ast.walk(tree))
    found = set()
    for node in statements:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            origin = ".".join(base + (node.module.split(".") if node.module else []))
            found.add(origin)
            found |= {
                f"{origin}.{alias.name}" for alias in node.names
            }  # ``from . import acm``: a module, if acm is one
    return {m for m in found if m.split(".")[0] == "ponder" and module_file(m, package)}


def import_closure(roots: Sequence[str], package: Path = PACKAGE) -> list[str]:
    """Every ``ponder`` module that importing ``roots`` brings in, with the packages on the way
    (their ``__init__`` runs first), except the sizes (:func:`is_sizes`); sorted."""
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        parents = [".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)]
        for module in [name, *parents]:
            if module not in seen and not is_sizes(module):
                if module_file(module, package) is None:
                    raise ModuleNotFoundError(f"{module} is not a module of {package}")
                seen.add(module)
                todo.extend(imported_by(module, package))
    return sorted(seen)


@functools.cache
def code_version(roots: tuple[str, ...] = (), package: Path = PACKAGE) -> str:
    """Hash of the code of every module a run defined in ``roots`` runs (:func:`source_shape`): the import
    closure of ``roots`` and the training loop (:func:`import_closure`), found from the import statements,
    so no list of modules can miss one.

    Computed once per process, like the imports themselves: a process runs the code it imported.
    """
    digest = hashlib.sha256()
    for name in import_closure((*roots, _TRAINER), package):
        path = module_file(name, package)
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(source_shape(path).encode())
    return digest.hexdigest()[:12]


def source_shape(path: Path) -> str:
    """What of a module's source :func:`code_version` hashes: its syntax tree without its docstrings and other
    bare strings, written out field by field. Comments, docstrings and layout can change without retraining a
    run; any change to what the code does changes the shape. Fields Python leaves empty (``None``, ``[]``) are
    left out, so a Python that adds a field to a node does not change the shape of code that does not use it."""

    def shape(node) -> str:
        if isinstance(node, list):
            return "[" + ",".join(shape(item) for item in node if not _bare_string(item)) + "]"
        if isinstance(node, ast.AST):
            fields = [
                f"{name}={shape(value)}" for name, value in ast.iter_fields(node) if value is not None and value != []
            ]
            return f"{type(node).__name__}({','.join(fields)})"
        return repr(node)

    return shape(ast.parse(path.read_bytes(), filename=str(path)))


def _bare_string(node) -> bool:
    """A statement that is only a string (a docstring): it does nothing when it runs."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def config_key(config: dict, code: Sequence[str] = ()) -> str:
    """Short hash of a JSON-able config together with the code version of the modules ``code``."""
    blob = json.dumps(
        {"config": config, "code": code_version(tuple(sorted(code))), "numerics": numerics.describe()},
        sort_keys=True,
        default=str,
    )
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

    >>> run = Run("cpvr/ut", {"steps": 100, "width": 64}, "smoke", code=__name__)
    >>> if not run.done: ...train, run.finish(metrics)

    ``code`` names the module that defines the run (or several): the key hashes the source of every
    module they import (:func:`code_version`).
    """

    def __init__(self, name: str, config: dict, profile: str, code: str | Sequence[str] = ()):
        check_profile(profile)
        self.name, self.config, self.profile = name, config, profile
        self.key = config_key(config, [code] if isinstance(code, str) else code)
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
        """Load the final weights of a finished run into ``model`` (copied from a per-process cache:
        each run's file is read once per process, however many runs build on it)."""
        path = self.dir / "model.safetensors"
        stamp = path.stat().st_mtime_ns if path.exists() else None
        if stamp is None or _LOADED.get(path, (None,))[0] != stamp:
            loaded = self.load_tensors("model")
            if loaded is None:
                raise FileNotFoundError(f"run {self.name} ({self.key}) has no final weights; train it first")
            _LOADED[path] = (stamp, loaded[0])
        try:
            model.load_state_dict(_LOADED[path][1])
        except RuntimeError as error:  # missing, unexpected or misshapen tensors
            raise self._corrupt(self.dir / "model.safetensors", f"its weights do not fit the model: {error}") from error
        return model


_LOADED: dict[Path, tuple[int, dict]] = {}  # a run's final weights by file: (its mtime, the tensors)


def _plain_state_dict(model: torch.nn.Module) -> dict:
    """State dict without a DistributedDataParallel ``module.`` prefix, shared tensors cloned."""
    model = getattr(model, "module", model)
    return {k: v.clone() for k, v in model.state_dict().items()}
