"""The evidence of a learning-rate grid in one line, for the ledger: the rate each model chose and its scores."""

import pandas as pd


def describe_choices(choices: pd.DataFrame, digits: dict[str, int]) -> str:
    """``choices`` (one row per model: columns ``"<score> <rate>"`` for every score of ``digits`` and point of the
    grid, and ``chosen``, a rate or a point's label) in one line, each score to its number of ``digits``: the first
    score bare, the others named, e.g. with ``{"accuracy": 2, "loss": 3}``
    ``"grid 0.003 / 0.006; UT 0.006 (1.00 / 1.00, loss 0.031 / 0.012), ..."``."""
    first = next(iter(digits))
    rates = [c.removeprefix(f"{first} ") for c in choices.columns if c.startswith(f"{first} ")]

    def scores(row, what):
        values = " / ".join(f"{row[f'{what} {r}']:.{digits[what]}f}" for r in rates)
        return values if what == first else f"{what} {values}"

    def label(chosen) -> str:  # a rate, or a grid point's label (a rate and its warmup)
        return chosen if isinstance(chosen, str) else f"{chosen:g}"

    parts = [
        f"{name} {label(row['chosen'])} (" + ", ".join(scores(row, what) for what in digits) + ")"
        for name, row in choices.iterrows()
    ]
    return f"grid {' / '.join(rates)}; " + ", ".join(parts)
