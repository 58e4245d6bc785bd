"""Paired bootstrap of a before/after difference, resampling whole units (conversations).

Two systems scored on the same held-out items differ by their scores *and* by which items
happen to be in the sample. The paired bootstrap keeps the pairing: each resample draws units
with replacement and scores both systems on the same draw, so the interval is that of the
difference, not of two independent means. Steps of one conversation are not independent (one
early mistake shapes the rest), so the unit is the conversation and a resample takes all of its
steps; with one item per unit this is the ordinary paired bootstrap. Any statistic works
(macro recalls, micro F1, means), since it is recomputed on each resample's items.

Example:
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

__all__ = ["PairedDifference", "paired_bootstrap"]

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
    if not units:
        raise ValueError("paired_bootstrap needs at least one unit")
    if not 0 < level < 1 or resamples < 1:
        raise ValueError(f"level must be in (0, 1) and resamples >= 1, got {level}, {resamples}")

    def pooled(chosen: Sequence[int]) -> tuple[float | None, float | None]:
        before = [item for i in chosen for item in units[i][0]]
        after = [item for i in chosen for item in units[i][1]]
        return statistic(before), statistic(after)

    before, after = pooled(range(len(units)))
    delta = None if before is None or after is None else after - before
    rng = random.Random(seed)
    deltas = []
    for _ in range(resamples):
        b, a = pooled([rng.randrange(len(units)) for _ in units])
        if b is not None and a is not None:
            deltas.append(a - b)
    deltas.sort()
    low = high = None
    if len(deltas) >= 2:
        tail = (1 - level) / 2
        low = deltas[int(tail * (len(deltas) - 1))]
        high = deltas[int(round((1 - tail) * (len(deltas) - 1)))]
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
