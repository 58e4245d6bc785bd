"""Action-type reward (MADS §4.3): does the completion choose ``tool`` vs ``say`` like gold?"""

from __future__ import annotations

from typing import Any

from evaluators.step_scoring import GoldAction
from mads_bench.pre_act import Action
from rewards._common import gold_actions, predicted_actions


def action_type_scores(
    predicted: list[Action | None], golds: list[GoldAction | None]
) -> list[float | None]:
    """Action-type reward from already parsed actions (shared with the total reward)."""
    return [
        None if gold is None else float(action is not None and action.type == gold.type)
        for action, gold in zip(predicted, golds, strict=True)
    ]


def action_type_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """1.0 when the completion's action type equals ``gold_action_type``, else 0.0.

    A completion without a readable ``<action>`` scores 0.0. Rows without a gold action type
    get None (not applicable).

    Args:
        completions (`list[str]` or `list[list[dict]]`): Plain-text or conversational
            completions.
        **kwargs: Dataset columns; ``gold_action_type`` is required, the other gold columns
            are read to validate the row.

    Returns:
        `list[float | None]`: One reward per completion.

    Example:
        >>> action_type_reward(
        ...     ['<think>a</think><action type="say">Hello</action>', "garbage"],
        ...     gold_action_type=["say", "tool"], gold_tool_name=[None, "get_order"],
        ...     gold_tool_arguments=[None, "{}"], gold_say=["Hi", None])
        [1.0, 0.0]
    """
    golds = gold_actions(kwargs, len(completions))
    return action_type_scores(predicted_actions(completions), golds)
