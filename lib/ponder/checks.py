"""Argument checks that fail with a message naming the parameter and what it allows."""

import operator
from collections.abc import Iterable


def check_choice(name: str, value, allowed: Iterable):
    """Return ``value`` if it is one of ``allowed``, else raise ``ValueError``."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not allowed; choose one of {', '.join(map(repr, allowed))}")
    return value


def check_int(name: str, value, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int if it is an integer in ``[minimum, maximum]``."""
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}={value} must be >= {minimum}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}={value} must be <= {maximum}")
    return value


def check_positive(name: str, value) -> float:
    """Return ``value`` if it is a number > 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{name}={value!r} must be a positive number")
    return value


def check_fraction(name: str, value) -> float:
    """Return ``value`` if it is a number in ``(0, 1]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ValueError(f"{name}={value!r} must be a fraction in (0, 1]")
    return value
