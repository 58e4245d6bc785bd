"""The paper's total reward (MADS §4.3): action type + tool call + semantic, in [0, 3].

Unlike the separate rewards, the parts that do not apply count 0.0 here, as in the paper, so
the total is a number on every row that has a gold action (None only on rows without one).
Tool and semantic rewards never apply to the same row, so the total is at most 2.0 in
practice. Training with the three separate rewards at weight 1 gives the same sum: TRL adds
rewards with ``nansum``, so their Nones count as 0.
"""

from __future__ import annotations

from typing import Any

from mads_bench.embedding import SentenceEncoder
from rewards._common import gold_actions, predicted_actions
from rewards.action_type import action_type_scores
from rewards.semantic import RewardFunc, _reward_name, semantic_scores
from rewards.tool_call import tool_scores


def make_mads_total_reward(
    model: str = "minilm", *, similarity: SentenceEncoder | None = None
) -> RewardFunc:
    """Build the total reward with the given sentence encoder for its semantic part.

    Args:
        model (`str`): Encoder name (default ``"minilm"``).
        similarity (`SentenceEncoder`, *optional*): Share an existing similarity object.

    Returns:
        `Callable`: Named ``mads_total_reward`` for ``minilm``, ``mads_total_reward_<model>``
        otherwise.

    Example:
        >>> make_mads_total_reward().__name__
        'mads_total_reward'
    """
    sim = similarity or SentenceEncoder(model)

    def mads_total_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
        """Sum of action-type, tool-call and semantic rewards, each 0.0 where it does not apply.

        Args:
            completions (`list[str]` or `list[list[dict]]`): Plain-text or conversational
                completions.
            **kwargs: Dataset columns ``gold_action_type``, ``gold_tool_name``,
                ``gold_tool_arguments``, ``gold_say``.

        Returns:
            `list[float | None]`: In [0, 3]; None only on rows without a gold action.

        Example:
            >>> call = '<think>t</think><action type="tool">{"name": "f", "arguments": {}}</action>'
            >>> mads_total_reward([call, "junk"], gold_action_type=["tool", "tool"],
            ...     gold_tool_name=["f"] * 2, gold_tool_arguments=["{}"] * 2, gold_say=[None] * 2)
            [2.0, 0.0]
        """
        golds = gold_actions(kwargs, len(completions))
        predicted = predicted_actions(completions)
        action = action_type_scores(predicted, golds)
        tool = tool_scores(predicted, golds)
        semantic = semantic_scores(predicted, golds, sim)
        return [
            None if gold is None else float((a or 0.0) + (t or 0.0) + (s or 0.0))
            for gold, a, t, s in zip(golds, action, tool, semantic, strict=True)
        ]

    mads_total_reward.__name__ = mads_total_reward.__qualname__ = _reward_name(
        "mads_total_reward", model
    )
    mads_total_reward.similarity = sim  # type: ignore[attr-defined]
    return mads_total_reward


mads_total_reward = make_mads_total_reward("minilm")
