"""Read a step-predictions JSONL file into L-1 / L-2 steps (used by ``mads-bench eval``).

One line per predicted assistant step: ``prediction`` (the model output) plus the ``grpo``
columns of that step (SPEC §4.3): ``gold_action_type``, ``gold_tool_name``,
``gold_tool_arguments``, ``gold_say``, ``scenario_id``, ``domain``, ``complexity``,
``turn_index``, ``step_index``; optionally ``conversation_id`` (defaults to ``scenario_id``)
and ``required_params`` (the tool schema's required list). L-2 orders each conversation's
steps by ``(turn_index, step_index)`` when both are given, else keeps file order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluators.l1.core import L1Step
from evaluators.l2.core import L2Step
from evaluators.step_scoring import GoldAction
from mads_bench.loading import JsonlError, read_jsonl


class PredictionsFileError(JsonlError):
    """A predictions file that cannot be scored: names the file, line and field."""


_TEXT = {"type": ["string", "null"]}
_INDEX = {"type": ["integer", "null"], "minimum": 0}
ROW_SCHEMA = {
    "type": "object",
    "required": ["prediction"],
    "properties": {
        "prediction": {"type": ["string", "array", "object", "null"]},
        "gold_action_type": _TEXT,
        "gold_tool_name": _TEXT,
        "gold_tool_arguments": {"type": ["string", "object", "null"]},
        "gold_say": _TEXT,
        "conversation_id": _TEXT,
        "scenario_id": _TEXT,
        "domain": _TEXT,
        "complexity": _TEXT,
        "turn_index": _INDEX,
        "step_index": _INDEX,
        "required_params": {"type": ["array", "null"], "items": {"type": "string"}},
    },
}
"""JSON Schema of one predictions line: the fields the scorers read, with their types."""


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Read the JSONL rows, each checked against `ROW_SCHEMA`, with errors naming file and line.

    Raises:
        `PredictionsFileError`: For a line that is not a JSON object of the schema, or a file
            without any row.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    validator = Draft202012Validator(ROW_SCHEMA)
    rows = []
    for number, row in read_jsonl(path, what="a prediction row", error=PredictionsFileError):
        problem = best_match(validator.iter_errors(row))
        if problem is not None:
            field = ".".join(str(p) for p in problem.absolute_path) or "line"
            raise PredictionsFileError(f"{path}:{number}: {field}: {problem.message[:200]}")
        row["_where"] = f"{path}:{number}"
        rows.append(row)
    if not rows:
        raise PredictionsFileError(f"{path}: holds no prediction rows")
    return rows


def _gold(row: dict[str, Any]) -> GoldAction:
    try:
        gold = GoldAction.from_columns(
            row.get("gold_action_type"),
            row.get("gold_tool_name"),
            row.get("gold_tool_arguments"),
            row.get("gold_say"),
            where=row["_where"],
        )
    except ValueError as err:
        raise PredictionsFileError(str(err)) from None
    if gold is None:
        raise PredictionsFileError(f"{row['_where']}: gold_action_type is missing")
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
            raise PredictionsFileError(f"{row['_where']}: needs conversation_id or scenario_id")
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
