"""The rule every ledger row is judged by: did a claim hold, beyond the noise, at a stated error rate?

**The rule** (one for every row; :data:`RULE` is printed in the ledger's header). A claim is a
statement about a quantity ``d``: a difference between two methods ("A beats B": ``d = A - B``),
or a value against a bound ("savings above 70 %": ``d = value - bound``). ``d`` is measured once
per seed (or per repetition, for timings), giving a mean and a standard error
``se = sd / sqrt(n)``. Each part of a claim is a one-sided Student t test at level
:data:`ALPHA` = 5 %, with ``t`` the ``1 - ALPHA`` quantile of Student's t at the estimate's degrees
of freedom (``n - 1``; Welch–Satterthwaite for two methods measured on different seeds) and
``delta`` the smallest effect that counts (0 unless the claim declares one)::

    does not hold    if  mean(d) + t se < delta   (p of "d >= delta" <= ALPHA)
    holds            if  mean(d) - t se > 0       (p of "d <= 0"     <= ALPHA)
    inconclusive     otherwise, or with fewer than MIN_SEEDS values

So a claim whose effect is 0 is called "holds" at most 5 % of the time, and a claim whose effect
is ``delta`` is called "does not hold" at most 5 % of the time.

Two methods measured on the same seeds are compared per seed (paired: ``d_s = A_s - B_s``).

A claim made of parts ("at every budget", :func:`every`) **holds** when every part holds: an
intersection–union test, whose level is the parts' level, 5 %. It **does not hold** when Holm's
step-down correction over its ``k`` parts refutes at least one (the smallest refuting ``p`` at
most ``ALPHA / k``, the next at most ``ALPHA / (k - 1)``, ...), so a claim none of whose parts is
below its ``delta`` is refuted at most 5 % of the time whatever ``k``. ``tests/test_verdicts.py``
simulates both rates under the null for 1–6 parts and 3–10 seeds.

A part still within its noise says how many seeds would decide it if its mean and spread stayed
as measured (:func:`seeds_to_decide`). A row whose check involves no noise (a generator's
exactness, a count) is judged :func:`exact`. A row that only describes what is seen has no verdict.

An analysis function states a target's rows as :class:`Claim` values (what is claimed, what we
measured, the verdict), so they can be tested on made-up frames; a notebook records them in the
ledger with :func:`ponder.ledger.rows.record`.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import stdtr, stdtrit

ALPHA = 0.05  # the level of every test: a false "holds" and a false "does not hold" each at most this often
MIN_SEEDS = 3
MAX_SEEDS = 1000  # seeds_to_decide says "more than" beyond this
VERDICTS = ("holds", "does not hold", "inconclusive")


def t_quantile(df: float) -> float:
    """The one-sided critical value: the ``1 - ALPHA`` quantile of Student's t at ``df`` degrees of freedom."""
    return float(stdtrit(df, 1 - ALPHA)) if math.isfinite(df) else float(stdtrit(1e12, 1 - ALPHA))


_SEEDS = np.arange(2, MAX_SEEDS + 1)
_T_PER_ROOT = stdtrit(_SEEDS - 1, 1 - ALPHA) / np.sqrt(_SEEDS)  # t_quantile(N - 1) / sqrt(N), for seeds_to_decide

RULE = (
    f"Each part of a claim is a one-sided t test at the {100 * ALPHA:g} % level on the per-seed values of the "
    f"quantity it is about (a difference of two methods, per seed; or a value minus a bound): **holds** if "
    f"mean − t s.e. > 0, with t Student's {100 * (1 - ALPHA):g} % quantile at n − 1 degrees of freedom "
    f"({t_quantile(2):.2f} at 3 seeds, {t_quantile(4):.2f} at 5, {t_quantile(9):.2f} at 10); **does not hold** "
    f"if mean + t s.e. < δ (the smallest effect that counts, 0 unless the row says); **inconclusive** otherwise "
    f"or with fewer than {MIN_SEEDS} seeds. A claim of parts ([1], [2], ...) holds if every part holds and does "
    f"not hold if Holm's correction over its parts refutes one, so a claim is called true or false wrongly at "
    f"most {100 * ALPHA:g} % of the time each. Rows marked exact involve no noise; — describes what is seen."
)


@dataclass(frozen=True)
class Estimate:
    """Mean, standard error and number of values of a measured quantity, and the degrees of freedom of
    its t statistic (``None``: ``n - 1``; ``math.inf`` for a normal approximation)."""

    mean: float
    se: float
    n: int
    df: float | None = None

    @classmethod
    def of(cls, values: Sequence[float]) -> "Estimate":
        """From per-seed values (``se`` is nan for a single value)."""
        v = np.asarray(values, dtype=float)
        if v.ndim != 1 or len(v) == 0 or not np.isfinite(v).all():
            raise ValueError(f"need a non-empty list of finite numbers, got {values!r}")
        se = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else math.nan
        return cls(float(v.mean()), se, len(v))

    @property
    def dof(self) -> float:
        """Degrees of freedom of the t statistic."""
        return self.n - 1 if self.df is None else self.df

    def p_below(self, bound: float) -> float:
        """One-sided p-value of "the true value is at least ``bound``" (small: it lies below, beyond the noise)."""
        if self.se == 0:
            return 0.0 if self.mean < bound else 1.0
        return float(stdtr(self.dof, (self.mean - bound) / self.se))

    def p_above(self, bound: float) -> float:
        """One-sided p-value of "the true value is at most ``bound``" (small: it lies above, beyond the noise)."""
        if self.se == 0:
            return 0.0 if self.mean > bound else 1.0
        return float(stdtr(self.dof, (bound - self.mean) / self.se))

    def __str__(self) -> str:
        spread = "" if math.isnan(self.se) else f" ± {self.se:.2g}"
        return f"{self.mean:+.3g}{spread} (n={self.n})"


@dataclass(frozen=True)
class Verdict:
    """A judged claim: ``verdict`` in :data:`VERDICTS` and the evidence it rests on (``noise``), with the
    one-sided p-values of "the effect is at most 0" (``p_holds``: holds at or below :data:`ALPHA`) and of
    "the effect is at least δ" (``p_refutes``: does not hold at or below it); 1 where nothing was tested."""

    verdict: str
    noise: str
    p_holds: float = 1.0
    p_refutes: float = 1.0


@dataclass(frozen=True)
class Claim:
    """One row of the ledger before it is recorded: ``target``'s claim ``text``, our measurement
    ``ours`` and the ``paper``'s (numbers or short strings), the ``verdict`` (``None``: the row
    describes what is seen) and, for a judged row, its ``kind`` (one of :data:`ponder.ledger.rows.KINDS`;
    ``None``: a timing for a timed target, a paper claim otherwise)."""

    target: str
    text: str
    ours: object
    verdict: Verdict | None
    paper: object = None
    kind: str | None = None


def seeds_to_decide(d: Estimate, delta: float = 0.0) -> int | None:
    """How many seeds would decide ``d`` (holds above 0, does not hold below ``delta``) if its mean and its
    per-seed spread ``se · sqrt(n)`` stayed as measured: the least ``N`` with ``|mean - target| >= t(N - 1) ·
    sd / sqrt(N)``; ``None`` when no number of seeds would (a mean exactly at 0 or at ``delta``) or more than
    :data:`MAX_SEEDS` would."""
    distance = d.mean if d.mean > 0 else delta - d.mean
    if distance <= 0 or not d.se > 0:
        return None
    # t(N - 1) / sqrt(N) falls with N: the first N at which it is at most distance / sd
    first = int(np.searchsorted(-_T_PER_ROOT, -distance / (d.se * math.sqrt(d.n))))
    return max(int(_SEEDS[first]), d.n) if first < len(_SEEDS) else None


def judge(d: Estimate, delta: float = 0.0, min_seeds: int = MIN_SEEDS) -> Verdict:
    """The rule of the module docstring on the estimate ``d`` of the claimed effect."""
    if delta < 0:
        raise ValueError(f"delta={delta} must be >= 0")
    evidence = f"d = {d}" + (f", δ = {delta:g}" if delta else "")
    if d.n < min_seeds:
        return Verdict("inconclusive", f"{evidence}; the rule needs {min_seeds} seeds")
    p_holds, p_refutes = d.p_above(0.0), d.p_below(delta)
    if p_refutes <= ALPHA:
        return Verdict("does not hold", f"{evidence}, p = {p_refutes:.2g}", p_holds, p_refutes)
    if p_holds <= ALPHA:
        return Verdict("holds", f"{evidence}, p = {p_holds:.2g}", p_holds, p_refutes)
    needed = seeds_to_decide(d, delta)
    more = (
        f"{needed} seeds would decide it"
        if needed
        else f"more than {MAX_SEEDS:,} seeds would decide it"
        if d.mean > 0 or d.mean < delta
        else "no number of seeds would decide it"
    )
    return Verdict("inconclusive", f"{evidence}; within the noise ({more} at this spread)", p_holds, p_refutes)


def welch(a: Estimate, b: Estimate) -> Estimate:
    """The estimate of ``a - b`` for two quantities measured on different seeds: the standard errors add
    in quadrature, with the Welch–Satterthwaite degrees of freedom."""
    se = math.hypot(a.se, b.se)
    if a.n < 2 or b.n < 2 or se == 0:
        return Estimate(a.mean - b.mean, se, min(a.n, b.n))
    df = se**4 / (a.se**4 / a.dof + b.se**4 / b.dof)
    return Estimate(a.mean - b.mean, se, min(a.n, b.n), df)


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
    return judge(welch(Estimate.of(a), Estimate.of(b)), delta)


def above(values: Sequence[float], bound: float, delta: float = 0.0) -> Verdict:
    """ "the quantity is above ``bound``": per-seed values."""
    e = Estimate.of(values)
    return judge(Estimate(e.mean - bound, e.se, e.n), delta)


def below(values: Sequence[float], bound: float, delta: float = 0.0) -> Verdict:
    """ "the quantity is below ``bound``": per-seed values."""
    e = Estimate.of(values)
    return judge(Estimate(bound - e.mean, e.se, e.n), delta)


def alike_parts(a: Sequence[float], b: Sequence[float], delta: float) -> list[Verdict]:
    """The two parts of :func:`alike`, ``a - b > -delta`` and ``b - a > -delta``, for a claim of more parts."""
    if not delta > 0:
        raise ValueError(f"delta={delta} must be > 0: alike within what")
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return [greater(a + delta, b), greater(b + delta, a)]


def alike(a: Sequence[float], b: Sequence[float], delta: float) -> Verdict:
    """ "``a`` and ``b`` are alike, within ``delta``": per-seed values on the same seeds. Two parts, ``a - b > -delta``
    and ``b - a > -delta`` (:func:`every`): holds when the difference lies within ``±delta`` beyond the noise (two
    one-sided tests), does not hold when it lies outside, beyond the noise, after Holm's correction."""
    return every(alike_parts(a, b, delta))


def holm(p_values: Sequence[float]) -> list[bool]:
    """Which of ``k`` hypotheses Holm's step-down procedure rejects at :data:`ALPHA`: the smallest ``p`` if
    at most ``ALPHA / k``, then the next if at most ``ALPHA / (k - 1)``, ..., stopping at the first that is not."""
    k, rejected = len(p_values), [False] * len(p_values)
    for rank, i in enumerate(sorted(range(k), key=lambda j: p_values[j])):
        if p_values[i] > ALPHA / (k - rank):
            break
        rejected[i] = True
    return rejected


def every(verdicts: Sequence[Verdict]) -> Verdict:
    """A claim made of parts ("at every budget", "for every model"): holds if every part holds
    (an intersection–union test at the parts' level), does not hold if Holm's correction over the
    parts refutes one, inconclusive otherwise. A part refuted alone but not after the correction
    reads so in the evidence. The claim's own p-values (for an ``every`` of ``every``s) are the
    largest ``p_holds`` and the Bonferroni ``k · min(p_refutes)``, which is below :data:`ALPHA`
    exactly when Holm refutes a part."""
    if not verdicts:
        raise ValueError("every() needs at least one verdict")
    k, refuted = len(verdicts), holm([v.p_refutes for v in verdicts])
    parts = []
    for i, (v, out) in enumerate(zip(verdicts, refuted)):
        shown = v.verdict
        if v.verdict == "does not hold" and not out:
            shown = f"inconclusive after Holm's correction over {k} parts (alone: does not hold)"
        parts.append(f"[{i + 1}] {shown}: {v.noise}")
    verdict = "does not hold" if any(refuted) else "holds" if all(v.verdict == "holds" for v in verdicts) else None
    return Verdict(
        verdict or "inconclusive",
        "; ".join(parts),
        max(v.p_holds for v in verdicts),
        min(1.0, k * min(v.p_refutes for v in verdicts)),
    )


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
    (``problems``: ``{reference: why}``, from :mod:`ponder.ledger.convergence`). A comparison
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
    return Verdict("holds", why, 0.0, 1.0) if holds else Verdict("does not hold", why, 1.0, 0.0)
