"""Graded tool rewards: credit on the way to the gold call, for policies that rarely reach it.

`tool_call_reward` and its parts are all-or-nothing. A 135M policy after a short SFT names a
tool that exists in no domain on most tool steps (held-out: 4 of 55 gold tool steps named
right), so every completion of a GRPO group scores 0 on the name and the group teaches
nothing about which tool to call. The two rewards here grade the same gold, and stay
verifiable (no model judges them):

- ``tool_choice``: 1.0 for the gold tool's name; 0.5 for a *callable* call, a tool the row's
  domain offers with arguments its JSON Schema accepts; 0.0 for anything else (a hallucinated
  name, arguments the tool would reject, no tool call). The domain comes from the dataset's
  ``domain`` column through the catalog; on a row without a known domain only the gold name
  earns credit.
- ``tool_argument_overlap``: the F1 of the predicted and gold arguments as sets of
  (name, value) pairs, values compared as JSON (`evaluators.step_scoring.arguments_equal`);
  1.0 when both are empty, 0.0 when the completion is no tool call.

Both apply only to rows whose gold action is a tool call (None on gold ``say`` rows). The
evaluation figures (tool-name F1, parameter exact match) stay exact: these shape the path.
Measured once (recipes/README.md, "Does GRPO improve on SFT"): added to `config_gain.yaml`
they *lowered* held-out total reward (-0.085 [-0.191, 0.016] against +0.089 without them),
so no shipped config uses them; they stay registered for larger policies and sweeps.
"""

from __future__ import annotations

from typing import Any

from evaluators.step_scoring import GoldAction, arguments_equal
from mads_bench.catalog import Domain, load_domain
from mads_bench.pre_act import Action
from rewards._common import column, gold_actions, predicted_actions

CALLABLE_CREDIT = 0.5
"""`tool_choice_reward` of a call the domain accepts that is not the gold tool."""


def _domain(name: Any, loaded: dict[str, Domain | None]) -> Domain | None:
    if not isinstance(name, str) or not name:
        return None
    if name not in loaded:
        try:
            loaded[name] = load_domain(name)
        except Exception:  # an unknown or broken pack: the gold name alone earns credit
            loaded[name] = None
    return loaded[name]


def _callable(predicted: Action, domain: Domain | None) -> bool:
    spec = domain.tools.get(predicted.name) if domain is not None else None
    if spec is None or not isinstance(predicted.arguments, dict):
        return False
    try:
        return not spec.argument_errors(predicted.arguments)
    except Exception:  # arguments jsonschema cannot walk (deep nesting): not callable
        return False


def choice_scores(
    predicted_batch: list[Action | None], golds: list[GoldAction | None], domains: list[Any]
) -> list[float | None]:
    """`tool_choice_reward` from parsed actions and the rows' domain names."""
    loaded: dict[str, Domain | None] = {}
    rewards: list[float | None] = []
    for predicted, gold, name in zip(predicted_batch, golds, domains, strict=True):
        if gold is None or gold.type != "tool":
            rewards.append(None)
        elif predicted is None or predicted.type != "tool":
            rewards.append(0.0)
        elif predicted.name == gold.tool_name:
            rewards.append(1.0)
        else:
            rewards.append(CALLABLE_CREDIT if _callable(predicted, _domain(name, loaded)) else 0.0)
    return rewards


def argument_overlap(predicted: Any, gold: dict[str, Any]) -> float:
    """F1 of two argument dicts as sets of (name, value) pairs; 0.0 unless ``predicted`` is a dict.

    Example:
        >>> argument_overlap({"id": "O1", "qty": 2.0, "x": 1}, {"id": "O1", "qty": 2})
        0.8
        >>> argument_overlap({}, {}), argument_overlap("O1", {"id": "O1"})
        (1.0, 0.0)
    """
    if not isinstance(predicted, dict):
        return 0.0
    if not predicted and not gold:
        return 1.0
    matched = sum(
        1
        for key, value in gold.items()
        if key in predicted and arguments_equal(predicted[key], value)
    )
    return 2 * matched / (len(predicted) + len(gold))


def overlap_scores(
    predicted_batch: list[Action | None], golds: list[GoldAction | None]
) -> list[float | None]:
    """`tool_argument_overlap_reward` from parsed actions."""
    rewards: list[float | None] = []
    for predicted, gold in zip(predicted_batch, golds, strict=True):
        if gold is None or gold.type != "tool":
            rewards.append(None)
        elif predicted is None or predicted.type != "tool":
            rewards.append(0.0)
        else:
            rewards.append(argument_overlap(predicted.arguments, gold.tool_arguments or {}))
    return rewards


def tool_choice_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """1.0 for the gold tool, 0.5 for another call the row's domain would accept, else 0.0.

    Args:
        completions (`list[str]` or `list[list[dict]]`): Plain-text or conversational
            completions.
        **kwargs: The gold columns and ``domain`` (a domain name; optional).

    Returns:
        `list[float | None]`: One reward per completion; None on rows whose gold is ``say``.

    Example:
        >>> call = '<action type="tool">{"name": "%s", "arguments": {"%s": "%s"}}</action>'
        >>> calls = [("cancel_order", "order_id", "O1"), ("get_item", "item_id", "I1"),
        ...          ("get_item", "order_id", "O1"), ("refund_all", "order_id", "O1")]
        >>> tool_choice_reward([call % c for c in calls],
        ...     gold_action_type=["tool"] * 4, gold_tool_name=["cancel_order"] * 4,
        ...     gold_tool_arguments=['{"order_id": "O1"}'] * 4, gold_say=[None] * 4,
        ...     domain=["mock"] * 4)
        [1.0, 0.5, 0.0, 0.0]
    """
    n = len(completions)
    return choice_scores(
        predicted_actions(completions), gold_actions(kwargs, n), column(kwargs, "domain", n)
    )


def tool_argument_overlap_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """F1 of the predicted and gold tool arguments as (name, value) pairs.

    Example:
        >>> call = '<action type="tool">{"name": "f", "arguments": %s}</action>'
        >>> tool_argument_overlap_reward([call % '{"id": "O1", "n": 2}', call % '{"id": "O2"}'],
        ...     gold_action_type=["tool"] * 2, gold_tool_name=["f"] * 2,
        ...     gold_tool_arguments=['{"id": "O1"}'] * 2, gold_say=[None] * 2)
        [0.6666666666666666, 0.0]
    """
    return overlap_scores(predicted_actions(completions), gold_actions(kwargs, len(completions)))
