"""Shared report helpers for L-1 and L-2: grouping by domain/complexity and markdown tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from evaluators.step_scoring import parse_prediction
from mads_bench.pre_act import Action

T = TypeVar("T")
Prediction = str | list | Action | None
"""A prediction: raw model output (text or chat messages), an already parsed `Action`, or
None for a missing prediction (scored as wrong)."""


def as_action(prediction: Prediction) -> Action | None:
    """The predicted action, read leniently from text; None when missing or unreadable."""
    if prediction is None or isinstance(prediction, Action):
        return prediction
    return parse_prediction(prediction)


def group_by(items: Sequence[T], key: Callable[[T], str | None]) -> dict[str, list[T]]:
    """Group items by a key in first-seen order; items whose key is None are left out."""
    groups: dict[str, list[T]] = {}
    for item in items:
        value = key(item)
        if value is not None:
            groups.setdefault(value, []).append(item)
    return groups


def mean(values: Sequence[float | None]) -> float | None:
    """Mean of the values that are not None; None when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def markdown_table(rows: dict[str, dict[str, Any]], columns: Sequence[str], first: str) -> str:
    """A markdown table with one row per key of ``rows`` and the given metric columns.

    Example:
        >>> print(markdown_table({"all": {"n": 2, "score": 0.5}}, ["n", "score"], "group"))
        | group | n | score |
        | --- | --- | --- |
        | all | 2 | 0.5000 |
    """
    lines = [
        "| " + " | ".join([first, *columns]) + " |",
        "| " + " | ".join(["---"] * (len(columns) + 1)) + " |",
    ]
    for name, metrics in rows.items():
        lines.append("| " + " | ".join([name, *(_cell(metrics.get(c)) for c in columns)]) + " |")
    return "\n".join(lines)
