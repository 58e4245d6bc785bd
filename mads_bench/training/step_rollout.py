"""Step-level GRPO rollouts from fast weights (`rollout: step` with `rollout_weights` on).

TRL 1.16 generates step completions with the model it trains; on CPU that is the 4-bit
policy, dequantised on every decoding step. `StepRollout` is a TRL ``rollout_func`` that does
what TRL's own transformers branch does (chat-template the prompts with TRL's tokenizer
settings, sample with TRL's generation config, cut each completion after its first EOS), but
from a `RolloutWeights` copy of the policy. The trainer then scores those tokens with the
model it trains, exactly as for its own samples (`mads_bench.training.fast_weights` says why
no importance weight is needed and how close the copy is). A trainer with `frozen_below` (the
`SharedPromptGRPOTrainer`) also gets, for each row, the hidden states that entered its first
trained layer, so that its update need not run the frozen layers below again. With
`constrain_tool_names` a tool step can only name a tool its prompt lists
(`mads_bench.tool_constraint`).

Example:
    >>> rollout = StepRollout()
    >>> rollout.weights is None  # built at the first call, from `trainer.model`
    True
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

__all__ = ["StepRollout", "until_eos"]


def until_eos(row: Sequence[int], eos_ids: Collection[int], pad_id: int | None) -> list[int]:
    """A generated row up to and including its first EOS, else without trailing padding.

    Example:
        >>> until_eos([5, 6, 2, 0, 0], {2}, 0), until_eos([5, 6, 0, 0], {2}, 0)
        ([5, 6, 2], [5, 6])
    """
    for index, token in enumerate(row):
        if token in eos_ids:
            return list(row[: index + 1])
    end = len(row)
    while end and pad_id is not None and row[end - 1] == pad_id:
        end -= 1
    return list(row[:end])


class StepRollout:
    """TRL ``rollout_func`` of step-mode GRPO generating from a `RolloutWeights` copy.

    Args:
        constrain_tool_names (`bool`): Tool steps only name tools their prompt lists.
    """

    def __init__(self, constrain_tool_names: bool = False) -> None:
        self.weights: Any = None
        self.constrain_tool_names = constrain_tool_names

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        from mads_bench.tool_constraint import offered_tools
        from mads_bench.training.fast_weights import RolloutWeights
        from mads_bench.training.rollout import HFPolicy

        if self.weights is None:
            self.weights = RolloutWeights(trainer.model)
        prompt_ids = [list(ids) for ids in trainer._tokenize_prompts(prompts)[0]]
        # a trainer that can skip its frozen layers gets their output from the rollouts
        layer = getattr(trainer, "frozen_below", None)
        policy = HFPolicy(trainer, self.weights, stop_strings=(), capture_layer=layer)
        names = [offered_tools(p) for p in prompts] if self.constrain_tool_names else None
        rows = policy(prompt_ids, trainer.args.max_completion_length, tool_names=names)
        eos = set(trainer.eos_token_ids)
        pad = trainer.processing_class.pad_token_id
        completions = [until_eos(row, eos, pad) for row in rows]
        if policy.states is not None:
            trainer.keep_rollout_states(prompt_ids, completions, policy.states)
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": completions,
            "logprobs": None,  # without vLLM TRL scores the tokens with the trained model
        }
