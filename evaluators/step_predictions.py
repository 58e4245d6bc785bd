"""Read a step-predictions JSONL file into L-1 / L-2 steps (used by ``mads-bench eval``).

One line per predicted assistant step: ``prediction`` (the model output) plus the ``grpo``
columns of that step (SPEC §4.3): ``gold_action_type``, ``gold_tool_name``,
``gold_tool_arguments``, ``gold_say``, ``scenario_id``, ``domain``, ``complexity``,
``turn_index``, ``step_index``; optionally ``conversation_id`` (defaults to ``scenario_id``)
and ``required_params`` (the tool schema's required list). L-2 orders each conversation's
steps by ``(turn_index, step_index)`` when both are given, else keeps file order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluators.l1.core import L1Step
from evaluators.l2.core import L2Step
from evaluators.scoring import GoldAction


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Read the JSONL rows, with errors naming the file and line.

    Raises:
        `ValueError`: For a line that is not a JSON object or lacks ``prediction``.
    """
    rows = []
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as err:
                raise ValueError(f"{path}:{number}: not JSON: {err}") from None
            if not isinstance(row, dict) or "prediction" not in row:
                raise ValueError(f"{path}:{number}: expected an object with a 'prediction' field")
            row["_where"] = f"{path}:{number}"
            rows.append(row)
    return rows


def _gold(row: dict[str, Any]) -> GoldAction:
    gold = GoldAction.from_columns(
        row.get("gold_action_type"),
        row.get("gold_tool_name"),
        row.get("gold_tool_arguments"),
        row.get("gold_say"),
        where=row["_where"],
    )
    if gold is None:
        raise ValueError(f"{row['_where']}: gold_action_type is missing")
    return gold


def l1_steps(rows: list[dict[str, Any]]) -> list[L1Step]:
    """One `L1Step` per row."""
    return [
        L1Step(
            r["prediction"],
            _gold(r),
            r.get("required_params"),
            r.get("domain"),
            r.get("complexity"),
        )
        for r in rows
    ]


def l2_steps(rows: list[dict[str, Any]]) -> list[L2Step]:
    """One `L2Step` per row, each conversation sorted by turn and step when given."""

    def conversation(row: dict[str, Any]) -> str:
        cid = row.get("conversation_id") or row.get("scenario_id")
        if not cid:
            raise ValueError(f"{row['_where']}: needs conversation_id or scenario_id")
        return str(cid)

    def order(item: tuple[int, dict[str, Any]]) -> tuple:
        index, row = item
        turn, step = row.get("turn_index"), row.get("step_index")
        return (turn, step, index) if turn is not None and step is not None else (index,)

    first_seen: dict[str, int] = {}
    for index, row in enumerate(rows):
        first_seen.setdefault(conversation(row), index)
    ordered = sorted(
        enumerate(rows), key=lambda item: (first_seen[conversation(item[1])], *order(item))
    )
    return [
        L2Step(conversation(r), r["prediction"], _gold(r), r.get("domain"), r.get("complexity"))
        for _, r in ordered
    ]
