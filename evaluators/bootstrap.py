"""Every bootstrap of the project: the resampling, the percentile interval, the paired difference.

One module owns how a confidence interval is drawn, so the figures of the demo (paired
before/after over conversations), online evaluation (success rate over scenarios, and A − B),
SAGE (F1 over turns and ΔF1 between two verdict sets) and ATOD (headline figures over
dialogues) are resampled the same way. Two engines, each kept for the figures it has always
produced with a given seed:

* a statistic over a list of units of any size (:func:`bootstrap_interval`,
  :func:`paired_bootstrap`): Python's ``random.Random(seed)`` draws each resample unit by unit,
  and the interval is read at the sorted resamples' ``int(tail·(R−1))`` and
  ``round((1−tail)·(R−1))``;
* a vectorised statistic over fixed items (SAGE's F1, ATOD's figures): :func:`resample_indices`
  draws all resamples at once with ``numpy.random.default_rng(seed)``, and
  :func:`percentile_interval` reads ``numpy.percentile`` (linear) at the two tails;
  :func:`two_sided_p` gives the paired p-value of a difference.

Two systems scored on the same held-out items differ by their scores *and* by which items
happen to be in the sample. The paired bootstrap keeps the pairing: each resample draws units
with replacement and scores both systems on the same draw, so the interval is that of the
difference, not of two independent means. Steps of one conversation are not independent (one
early mistake shapes the rest), so the unit is the conversation and a resample takes all of its
steps; with one item per unit this is the ordinary paired bootstrap. Any statistic works
(macro recalls, micro F1, means), since it is recomputed on each resample's items.

Example:
    >>> bootstrap_interval([[1], [0], [1], [1]], lambda xs: sum(xs) / len(xs), resamples=200)
    [0.25, 1.0]
    >>> units = [([0, 0], [1, 1]), ([0, 1], [1, 1]), ([0], [1]), ([1], [1])]
    >>> result = paired_bootstrap(units, lambda xs: sum(xs) / len(xs), resamples=500)
    >>> result.before, result.after, round(result.delta, 3)
    (0.333, 1.0, 0.667)
    >>> result.ci_low > 0, result.excludes_zero
    (True, True)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "PairedDifference",
    "bootstrap_interval",
    "paired_bootstrap",
    "percentile_interval",
    "resample_indices",
    "two_sided_p",
]

T = TypeVar("T")


@dataclass(frozen=True)
class PairedDifference:
    """A statistic before and after, their difference and its percentile bootstrap CI.

    `ci_low`/`ci_high` are None when fewer than 2 resamples had a defined statistic (e.g. a
    recall over a class no resample contains). Figures are rounded to 3 decimals.
    """

    before: float | None
    after: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    level: float
    resamples: int
    units: int
    items: int

    @property
    def excludes_zero(self) -> bool:
        """Whether the whole interval lies on one side of 0."""
        if self.ci_low is None or self.ci_high is None:
            return False
        return self.ci_low > 0 or self.ci_high < 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, with `excludes_zero`."""
        return asdict(self) | {"excludes_zero": self.excludes_zero}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _draws(count: int, resamples: int, seed: int) -> list[list[int]]:
    """``resamples`` draws of ``count`` unit indices with replacement (Python's RNG)."""
    rng = random.Random(seed)
    return [[rng.randrange(count) for _ in range(count)] for _ in range(resamples)]


def _interval(values: list[float], level: float) -> tuple[float | None, float | None]:
    """Percentile interval of sorted ``values`` (None, None with fewer than 2)."""
    if len(values) < 2:
        return None, None
    tail = (1 - level) / 2
    return values[int(tail * (len(values) - 1))], values[int(round((1 - tail) * (len(values) - 1)))]


def _check(units: Sequence[Any], level: float, resamples: int, name: str) -> None:
    if not units:
        raise ValueError(f"{name} needs at least one unit")
    if not 0 < level < 1 or resamples < 1:
        raise ValueError(f"level must be in (0, 1) and resamples >= 1, got {level}, {resamples}")


def bootstrap_interval(
    units: Sequence[Sequence[T]],
    statistic: Callable[[list[T]], float | None],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> list[float | None]:
    """Percentile bootstrap CI ``[low, high]`` of ``statistic`` over resampled units.

    Args:
        units (`Sequence[Sequence]`): The items of each unit (a scenario's success rate, a
            conversation's steps); a resample takes whole units.
        statistic (`Callable[[list], float | None]`): Computed on a resample's pooled items;
            None where undefined (that resample is dropped).
        resamples (`int`): Bootstrap draws; seed (`int`): their seed; level (`float`): coverage.

    Returns:
        `list`: ``[low, high]``, both None when fewer than 2 resamples had a defined statistic.

    Raises:
        `ValueError`: With no units, or `level`/`resamples` out of range.
    """
    _check(units, level, resamples, "bootstrap_interval")
    values = []
    for chosen in _draws(len(units), resamples, seed):
        value = statistic([item for i in chosen for item in units[i]])
        if value is not None:
            values.append(value)
    return list(_interval(sorted(values), level))


def paired_bootstrap(
    units: Sequence[tuple[Sequence[T], Sequence[T]]],
    statistic: Callable[[list[T]], float | None],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> PairedDifference:
    """Percentile bootstrap CI of `statistic(after) - statistic(before)` over paired units.

    Args:
        units (`Sequence[tuple[Sequence, Sequence]]`): One `(before_items, after_items)` per
            unit (a conversation's steps scored for each system).
        statistic (`Callable[[list], float | None]`): Computed on the items of a (resampled)
            set of units; None where it is undefined.
        resamples (`int`): Bootstrap draws.
        seed (`int`): Seed of the draws (same seed, same interval).
        level (`float`): Coverage of the interval, in (0, 1).

    Returns:
        `PairedDifference`

    Raises:
        `ValueError`: With no units, or `level`/`resamples` out of range.
    """
    _check(units, level, resamples, "paired_bootstrap")

    def pooled(chosen: Sequence[int]) -> tuple[float | None, float | None]:
        before = [item for i in chosen for item in units[i][0]]
        after = [item for i in chosen for item in units[i][1]]
        return statistic(before), statistic(after)

    before, after = pooled(range(len(units)))
    delta = None if before is None or after is None else after - before
    deltas = []
    for chosen in _draws(len(units), resamples, seed):
        b, a = pooled(chosen)
        if b is not None and a is not None:
            deltas.append(a - b)
    deltas.sort()
    low, high = _interval(deltas, level)
    return PairedDifference(
        before=_round(before),
        after=_round(after),
        delta=_round(delta),
        ci_low=_round(low),
        ci_high=_round(high),
        level=level,
        resamples=len(deltas),
        units=len(units),
        items=sum(len(b) for b, _ in units),
    )


def resample_indices(count: int, resamples: int, seed: int) -> np.ndarray:
    """All resamples at once: a ``(resamples, count)`` matrix of item indices.

    Example:
        >>> resample_indices(3, 2, seed=0).shape
        (2, 3)
    """
    return np.random.default_rng(seed).integers(0, count, size=(resamples, count))


def percentile_interval(values: Sequence[float] | np.ndarray, level: float = 0.95) -> list[float]:
    """``[low, high]``: the linear-interpolated percentiles of ``values`` at the two tails.

    Example:
        >>> percentile_interval(np.arange(101.0))
        [2.5, 97.5]
    """
    tail = round(50 * (1 - level), 9)  # 2.5 for 95%, not 2.500000000000002
    low, high = np.percentile(values, [tail, 100 - tail])
    return [float(low), float(high)]


def two_sided_p(deltas: np.ndarray) -> float:
    """Two-sided p-value of a paired difference: twice the smaller tail of either sign."""
    return min(1.0, 2 * min(float((deltas <= 0).mean()), float((deltas >= 0).mean())))
