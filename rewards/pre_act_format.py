"""Pre-Act format reward: is the completion one well-formed Pre-Act step (SPEC §4.1)?

Scores 1.0 for a clean step: the strict parser accepts it, ``<think>`` is not empty, and,
when the dataset gives ``step_index``, the first step of a turn (``step_index == 0``) has a
``<plan>``. Scores 0.5 when the lenient parser still recovers an action but something is off,
and 0.0 when no action can be read. Applies to every sample, so it never returns None.
"""

from __future__ import annotations

from numbers import Number
from typing import Any

from mads_bench.pre_act import parse_step
from rewards._common import column, completion_text


def format_score(completion: Any, step_index: Any) -> float:
    """The score of one step (1.0, 0.5 or 0.0, see the module docstring)."""
    text = completion_text(completion)
    if text is None:
        return 0.0
    parsed = parse_step(text, strict=False)
    if parsed.action is None:
        return 0.0
    clean = not parsed.problems and bool(parsed.think)
    if _is_first_step(step_index) and parsed.plan is None:
        clean = False
    return 1.0 if clean else 0.5


def _is_first_step(step_index: Any) -> bool:
    # only a number can be step 0: `==` on an array-like value is ambiguous and would raise
    return isinstance(step_index, Number) and step_index == 0


def pre_act_format_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """1.0 for a clean Pre-Act step, 0.5 when only an action is recoverable, 0.0 otherwise.

    Args:
        completions (`list[str]` or `list[list[dict]]`): Plain-text or conversational
            completions.
        **kwargs: Dataset columns; ``step_index`` (optional) requires a plan on step 0.

    Returns:
        `list[float | None]`: One reward per completion (never None).

    Raises:
        `ValueError`: When ``step_index`` is given but not one value per completion.

    Example:
        >>> pre_act_format_reward([
        ...     '<think>t</think><plan>1. greet</plan><action type="say">Hi</action>',
        ...     '<think>t</think><action type="say">Hi</action>',
        ...     "<action type='say'>Hi",
        ...     "Hi"], step_index=[0, 0, 1, 1])
        [1.0, 0.5, 0.5, 0.0]
    """
    step_indices = column(kwargs, "step_index", len(completions))
    return [format_score(c, s) for c, s in zip(completions, step_indices, strict=True)]
