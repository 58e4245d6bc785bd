"""What every reward shares: reading the gold columns and the predicted actions of a batch.

TRL calls a reward as ``f(prompts=..., completions=..., completion_ids=..., **columns)``
where each dataset column arrives as a list with one value per completion. The gold columns
of the ``grpo`` config (SPEC §4.3) are ``gold_action_type``, ``gold_tool_name``,
``gold_tool_arguments`` (a JSON string) and ``gold_say``.

A reward returns ``None`` for a sample only where TRL means it, "this reward does not apply
to this sample": that depends on the gold row, never on the completion. A row whose
``gold_action_type`` is None has no gold action, so no gold-based reward applies to it.
"""

from __future__ import annotations

from typing import Any

from evaluators.scoring import GoldAction, parse_prediction
from mads_bench.pre_act import Action

GOLD_COLUMNS = ("gold_action_type", "gold_tool_name", "gold_tool_arguments", "gold_say")


def gold_actions(kwargs: dict[str, Any], n: int) -> list[GoldAction | None]:
    """The gold action of each of ``n`` samples from the reward's keyword arguments.

    Raises:
        `ValueError`: When ``gold_action_type`` is missing or a column has the wrong length
            or a malformed value (the message names the column and the row).
    """
    if "gold_action_type" not in kwargs:
        raise ValueError(
            "the reward needs the dataset column 'gold_action_type' (and gold_tool_name, "
            "gold_tool_arguments, gold_say): train on the `grpo` config of the MADS dataset"
        )
    columns = {}
    for name in GOLD_COLUMNS:
        values = kwargs.get(name)
        if values is None:
            values = [None] * n
        if len(values) != n:
            raise ValueError(f"column {name!r} has {len(values)} values for {n} completions")
        columns[name] = values
    return [
        GoldAction.from_columns(*(columns[name][i] for name in GOLD_COLUMNS), where=f"row {i}")
        for i in range(n)
    ]


def predicted_actions(completions: list[Any]) -> list[Action | None]:
    """The action of each completion (plain text or chat messages); None when unreadable."""
    return [parse_prediction(completion) for completion in completions]
