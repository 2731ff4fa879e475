"""The rule every ledger row is judged by: did a claim hold, beyond the noise?

**The rule** (one for every row; :data:`RULE` is printed in the ledger's header). A claim is a
statement about a quantity ``d``: a difference between two methods ("A beats B": ``d = A - B``),
or a value against a bound ("savings above 70 %": ``d = value - bound``). ``d`` is measured once
per seed (or per repetition, for timings), giving a mean and a standard error
``se = sd / sqrt(n)``. With ``z = 2`` and the smallest effect that counts ``delta`` (0 unless a
notebook says otherwise)::

    does not hold    if  mean(d) + z se < delta   (the effect is smaller than delta, beyond the noise)
    holds            if  mean(d) - z se > 0        (the effect is positive, beyond the noise)
    inconclusive     otherwise, or with fewer than MIN_SEEDS values

Two methods measured on the same seeds are compared per seed (paired: ``d_s = A_s - B_s``);
otherwise the standard errors add in quadrature. A claim made of parts ("at every budget") holds
if every part holds and does not hold if one part does not (:func:`every`). A row whose check involves no noise (a
generator's exactness, a count) is judged :func:`exact`. A row that only describes what is
seen has no verdict.

An analysis function states a target's rows as :class:`Claim` values (what is claimed, what we
measured, the verdict), so they can be tested on made-up frames; a notebook records them in the
ledger with :func:`ponder.ledger.record`.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z = 2.0
MIN_SEEDS = 3
VERDICTS = ("holds", "does not hold", "inconclusive")
RULE = (
    f"A claim is judged on the per-seed values of the quantity it is about (a difference of two methods, "
    f"or a value minus a bound): mean ± standard error over n seeds. **holds** if mean − {Z:g} s.e. > 0; "
    f"**does not hold** if mean + {Z:g} s.e. < δ (the smallest effect that counts, 0 unless the row says); "
    f"**inconclusive** otherwise or with fewer than {MIN_SEEDS} seeds. Rows marked exact involve no noise; "
    f"— describes what is seen."
)


@dataclass(frozen=True)
class Estimate:
    """Mean, standard error and number of values of a measured quantity."""

    mean: float
    se: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> "Estimate":
        """From per-seed values (``se`` is nan for a single value)."""
        v = np.asarray(values, dtype=float)
        if v.ndim != 1 or len(v) == 0 or not np.isfinite(v).all():
            raise ValueError(f"need a non-empty list of finite numbers, got {values!r}")
        se = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else math.nan
        return cls(float(v.mean()), se, len(v))

    def __str__(self) -> str:
        spread = "" if math.isnan(self.se) else f" ± {self.se:.2g}"
        return f"{self.mean:+.3g}{spread} (n={self.n})"


@dataclass(frozen=True)
class Verdict:
    """A judged claim: ``verdict`` in :data:`VERDICTS` and the evidence it rests on (``noise``)."""

    verdict: str
    noise: str


@dataclass(frozen=True)
class Claim:
    """One row of the ledger before it is recorded: ``target``'s claim ``text``, our measurement
    ``ours`` and the ``paper``'s (numbers or short strings), and the ``verdict`` (``None``: the row
    describes what is seen)."""

    target: str
    text: str
    ours: object
    verdict: Verdict | None
    paper: object = None


def judge(d: Estimate, delta: float = 0.0, min_seeds: int = MIN_SEEDS) -> Verdict:
    """The rule of the module docstring on the estimate ``d`` of the claimed effect."""
    if delta < 0:
        raise ValueError(f"delta={delta} must be >= 0")
    evidence = f"d = {d}" + (f", δ = {delta:g}" if delta else "")
    if d.n < min_seeds:
        return Verdict("inconclusive", f"{evidence}; the rule needs {min_seeds} seeds")
    if d.mean + Z * d.se < delta:
        return Verdict("does not hold", evidence)
    if d.mean - Z * d.se > 0:
        return Verdict("holds", evidence)
    return Verdict("inconclusive", f"{evidence}; within the noise")


def greater(a: Sequence[float], b: Sequence[float], delta: float = 0.0, paired: bool = True) -> Verdict:
    """ "``a`` is larger than ``b``": per-seed values of each (the same seeds, in order, if ``paired``).

    Paired, a seed on which one side was not measured (``nan``: a method a profile trains on fewer
    seeds) is left out, so the verdict rests on the seeds measured on both sides."""
    if paired:
        if len(a) != len(b):
            raise ValueError(f"paired values need as many seeds on each side, got {len(a)} and {len(b)}")
        d = np.subtract(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
        if np.isnan(d).all():
            raise ValueError("no seed is measured on both sides")
        return judge(Estimate.of(d[~np.isnan(d)]), delta)
    ea, eb = Estimate.of(a), Estimate.of(b)
    return judge(Estimate(ea.mean - eb.mean, math.hypot(ea.se, eb.se), min(ea.n, eb.n)), delta)


def above(values: Sequence[float], bound: float, delta: float = 0.0) -> Verdict:
    """ "the quantity is above ``bound``": per-seed values."""
    e = Estimate.of(values)
    return judge(Estimate(e.mean - bound, e.se, e.n), delta)


def below(values: Sequence[float], bound: float, delta: float = 0.0) -> Verdict:
    """ "the quantity is below ``bound``": per-seed values."""
    e = Estimate.of(values)
    return judge(Estimate(bound - e.mean, e.se, e.n), delta)


def every(verdicts: Sequence[Verdict]) -> Verdict:
    """A claim made of parts ("at every budget", "for every model"): holds if every part holds,
    does not hold if some part does not hold, inconclusive otherwise."""
    if not verdicts:
        raise ValueError("every() needs at least one verdict")
    found = [v.verdict for v in verdicts]
    verdict = "does not hold" if "does not hold" in found else "holds" if set(found) == {"holds"} else "inconclusive"
    return Verdict(verdict, "; ".join(f"[{i + 1}] {v.verdict}: {v.noise}" for i, v in enumerate(verdicts)))


def _set_aside(verdict: Verdict, why: str) -> Verdict:
    """**inconclusive** for ``why``, the noise-rule ``verdict`` kept in the evidence."""
    return Verdict("inconclusive", f"{why} (by the noise rule alone: {verdict.verdict}; {verdict.noise})")


def outside_regime(verdict: Verdict, reason: str | None) -> Verdict:
    """``verdict``, or **inconclusive** when the budget cannot reach the regime in which the paper
    makes the claim (``reason`` says why; ``None``: it can). A ranking measured below that regime
    is evidence neither way, so it never reads as "does not hold"; the noise-rule verdict stays in
    the row's evidence."""
    return verdict if reason is None else _set_aside(verdict, f"outside the paper's regime: {reason}")


def unconverged(verdict: Verdict, problems: dict[str, str]) -> Verdict:
    """``verdict``, or **inconclusive** when a model the claim compares against did not converge
    (``problems``: ``{reference: why}``, from :mod:`ponder.analysis.convergence`). A comparison
    with an unfinished reference measures the reference's training, not the claim; the noise-rule
    verdict stays in the row's evidence."""
    if not problems:
        return verdict
    return _set_aside(
        verdict, "reference not converged (" + "; ".join(f"{name}: {reason}" for name, reason in problems.items()) + ")"
    )


def chance_regime(values: dict[str, Sequence[float]], chance: float, what: str) -> str | None:
    """Why a ranking of methods on ``what`` (per-seed values of each) is evidence neither way: no
    method is above ``chance`` by the noise rule (:func:`above`), so the ranking compares failures
    (for :func:`outside_regime`); ``None`` when one method is."""
    if any(above(v, chance).verdict == "holds" for v in values.values()):
        return None
    means = ", ".join(f"{name} {np.mean(v):.3f}" for name, v in values.items())
    return f"no method's {what} is above chance ({chance:g}) by the noise rule ({means})"


def exact(holds: bool, why: str = "exact: no noise") -> Verdict:
    """A check that involves no noise (a generator's exactness, a count)."""
    if holds not in (True, False):
        raise TypeError(f"holds must be True or False, got {holds!r}")
    return Verdict("holds" if holds else "does not hold", why)
