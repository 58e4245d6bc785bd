"""Tool reward (MADS §4.3) and its two parts: tool name, and arguments after JSON normalisation.

All three apply only to rows whose gold action is a tool call (None on gold ``say`` rows).
On a tool row, a completion that is not a readable tool call scores 0.0. Names compare
exactly (case-sensitive: the model must emit a callable name); arguments compare as JSON
values (`evaluators.step_scoring.arguments_equal`: ``1 == 1.0``, ``true != 1``, strings exact,
key order irrelevant). ``tool_call_reward`` is 1.0 only when both parts are 1.0.
"""

from __future__ import annotations

from typing import Any

from evaluators.step_scoring import GoldAction, arguments_equal
from mads_bench.pre_act import Action
from rewards._common import gold_actions, predicted_actions


def tool_scores(
    predicted_batch: list[Action | None], golds: list[GoldAction | None], part: str = "call"
) -> list[float | None]:
    """Tool reward from parsed actions; ``part`` is ``"call"``, ``"name"`` or ``"arguments"``."""
    rewards: list[float | None] = []
    for predicted, gold in zip(predicted_batch, golds, strict=True):
        if gold is None or gold.type != "tool":
            rewards.append(None)
            continue
        if predicted is None or predicted.type != "tool":
            rewards.append(0.0)
            continue
        name_ok = predicted.name == gold.tool_name
        arguments_ok = arguments_equal(predicted.arguments, gold.tool_arguments)
        ok = {"name": name_ok, "arguments": arguments_ok, "call": name_ok and arguments_ok}[part]
        rewards.append(float(ok))
    return rewards


def _tool_rewards(completions: list[Any], kwargs: dict[str, Any], part: str) -> list[float | None]:
    golds = gold_actions(kwargs, len(completions))
    return tool_scores(predicted_actions(completions), golds, part)


def tool_call_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """1.0 when the tool call has the gold name and exactly the gold arguments, else 0.0.

    Args:
        completions (`list[str]` or `list[list[dict]]`): Plain-text or conversational
            completions.
        **kwargs: Dataset columns ``gold_action_type``, ``gold_tool_name``,
            ``gold_tool_arguments`` (JSON string), ``gold_say``.

    Returns:
        `list[float | None]`: One reward per completion; None on rows whose gold is ``say``.

    Example:
        >>> call = '<think>t</think><action type="tool">{"name": "f", "arguments": %s}</action>'
        >>> tool_call_reward([call % '{"id": 1.0}', call % '{"id": 2}', call % '{"id": 1}'],
        ...     gold_action_type=["tool", "tool", "say"], gold_tool_name=["f"] * 3,
        ...     gold_tool_arguments=['{"id": 1}'] * 3, gold_say=[None, None, "Hi"])
        [1.0, 0.0, None]
    """
    return _tool_rewards(completions, kwargs, "call")


def tool_name_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """The name part of `tool_call_reward`: 1.0 when the tool name equals the gold name.

    Example:
        >>> tool_name_reward(['<think>t</think><action type="tool">{"name": "get_order", '
        ...     '"arguments": {"id": 9}}</action>'], gold_action_type=["tool"],
        ...     gold_tool_name=["get_order"], gold_tool_arguments=['{"id": 1}'], gold_say=[None])
        [1.0]
    """
    return _tool_rewards(completions, kwargs, "name")


def tool_arguments_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """The argument part of `tool_call_reward`: 1.0 when the arguments equal gold's.

    Example:
        >>> tool_arguments_reward(['<think>t</think><action type="tool">{"name": "get_order", '
        ...     '"arguments": {"id": 9}}</action>'], gold_action_type=["tool"],
        ...     gold_tool_name=["get_order"], gold_tool_arguments=['{"id": 1}'], gold_say=[None])
        [0.0]
    """
    return _tool_rewards(completions, kwargs, "arguments")
