"""Argument types shared by every command: numbers with their ranges, checked when parsed.

argparse calls these on the raw string, so ``--num 0`` or ``--mix nan`` stops at parse time
with ``error: argument --num: must be >= 1, got 0`` and exit status 2, before any work.

Example:
    >>> positive_int("3"), unit_interval("0.25")
    (3, 0.25)
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be >= 1, got 0
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from mads_bench.errors import UsageError

__all__ = [
    "backend_from_flag",
    "non_negative_float",
    "non_negative_int",
    "positive_float",
    "positive_int",
    "unit_interval",
]


def _integer(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    parse.__name__ = f"int>={minimum}"
    return parse


def _real(low: float, high: float, *, open_low: bool = False) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if value < low or (open_low and value == low) or value > high:
            bounds = f"{'(' if open_low else '['}{low:g}, {high:g}]"
            raise argparse.ArgumentTypeError(f"must be in {bounds}, got {value:g}")
        return value

    parse.__name__ = "number"
    return parse


positive_int = _integer(1)
non_negative_int = _integer(0)
positive_float = _real(0.0, math.inf, open_low=True)
non_negative_float = _real(0.0, math.inf)
unit_interval = _real(0.0, 1.0)


def backend_from_flag(flag: str, spec: str, **options):
    """Build the backend a flag names; a malformed or unknown spec is a `UsageError`.

    Example:
        >>> backend_from_flag("--judge", "nonsense:x")
        Traceback (most recent call last):
        ...
        mads_bench.errors.UsageError: --judge nonsense:x: Unknown backend spec ...
    """
    from simulation.backends import get_backend

    try:
        return get_backend(spec, **options)
    except (ValueError, TypeError) as err:
        raise UsageError(f"{flag} {spec}: {err}") from None
