"""Semantic reward (MADS §4.3): cosine of sentence embeddings of the predicted and gold ``say``.

Applies only to rows whose gold action is ``say`` (None on gold tool rows). On a say row, a
completion that is not a readable ``say`` scores 0.0, as in the paper. The cosine is clamped
to [0, 1]. Per call, the predicted texts and the gold texts not seen before are encoded in
one batch; gold embeddings are cached; the encoder is loaded once per process, on first use.
Texts are cleaned and cut to what the encoder reads (`rewards._common.encoder_text`), so a
runaway completion neither raises nor stalls the step.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from evaluators.step_scoring import GoldAction
from mads_bench.embedding import SentenceEncoder
from mads_bench.pre_act import Action
from rewards._common import encoder_text, gold_actions, predicted_actions

RewardFunc = Callable[..., list[float | None]]


def _reward_name(base: str, model: str) -> str:
    if model == "minilm":
        return base
    return f"{base}_{re.sub(r'[^0-9A-Za-z]+', '_', model).strip('_').lower()}"


def semantic_scores(
    predicted_batch: list[Action | None],
    golds: list[GoldAction | None],
    similarity: SentenceEncoder,
) -> list[float | None]:
    """Semantic reward from parsed actions, one encoder call (shared with the total reward)."""
    rewards: list[float | None] = [None if g is None or g.type != "say" else 0.0 for g in golds]
    rows, predicted_texts, gold_texts = [], [], []
    for i, (predicted, gold) in enumerate(zip(predicted_batch, golds, strict=True)):
        if rewards[i] is not None and predicted is not None and predicted.type == "say":
            rows.append(i)
            predicted_texts.append(encoder_text(predicted.text))
            gold_texts.append(encoder_text(gold.say))
    for i, value in zip(rows, similarity.pairs(predicted_texts, gold_texts), strict=True):
        rewards[i] = value
    return rewards


def make_semantic_reward(
    model: str = "minilm", *, similarity: SentenceEncoder | None = None
) -> RewardFunc:
    """Build the semantic reward for one sentence encoder.

    Args:
        model (`str`): Encoder name for `mads_bench.models.load_sentence_encoder` (default
            ``"minilm"``; ``"mpnet"`` is the paper's L-1 model).
        similarity (`SentenceEncoder`, *optional*): Share an existing similarity object
            (and its gold cache).

    Returns:
        `Callable`: ``f(completions, **kwargs) -> list[float | None]`` named
        ``semantic_reward`` for ``minilm`` and ``semantic_reward_<model>`` otherwise.

    Example:
        >>> reward = make_semantic_reward("mpnet")
        >>> reward.__name__
        'semantic_reward_mpnet'
    """
    sim = similarity or SentenceEncoder(model)

    def semantic_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
        """Clamped cosine of the predicted vs gold ``say`` (one encoder call per batch).

        Args:
            completions (`list[str]` or `list[list[dict]]`): Plain-text or conversational
                completions.
            **kwargs: Dataset columns ``gold_action_type``, ``gold_say`` (and the other gold
                columns, read to validate the row).

        Returns:
            `list[float | None]`: In [0, 1]; 0.0 when the completion is no ``say``; None on
            rows whose gold is a tool call.

        Example:
            >>> rewards = semantic_reward(
            ...     ['<think>t</think><action type="say">Your refund was issued.</action>',
            ...      "not Pre-Act", '<think>t</think><action type="say">x</action>'],
            ...     gold_action_type=["say", "say", "tool"], gold_tool_name=[None, None, "f"],
            ...     gold_tool_arguments=[None, None, "{}"],
            ...     gold_say=["Your refund was issued.", "Hi", None])
            >>> [None if r is None else round(r, 3) for r in rewards]
            [1.0, 0.0, None]
        """
        golds = gold_actions(kwargs, len(completions))
        return semantic_scores(predicted_actions(completions), golds, sim)

    semantic_reward.__name__ = semantic_reward.__qualname__ = _reward_name("semantic_reward", model)
    semantic_reward.similarity = sim  # type: ignore[attr-defined]  # benchmarks read its timer
    return semantic_reward


semantic_reward = make_semantic_reward("minilm")
