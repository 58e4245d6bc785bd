"""GRPO log-probabilities of a group's completions with the prompt run once.

TRL 1.16 scores every completion of a group as its own row, `prompt + completion`, so a
1.3k-token MADS prompt is run forward and backward once per completion (8 times for the paper's
8 generations) while each completion is ~100-200 tokens. `SharedPromptGRPOTrainer` runs the
prompt once per group instead, keeping its key/value cache in the autograd graph, and scores
the group's completions as one batch on top of that cache:

    prompt[:-1]                      -> cache (causal attention, no mask)
    prompt[-1] completion_i  (x G)   -> log-probabilities, attending to the cache and itself

Each completion row starts with the prompt's last token (it predicts the completion's first
token) at the position after the cache, and right padding is masked. Every completion token
sees exactly what it sees in its own TRL row, so its log-probability, its entropy and the
gradient of the loss (which reaches the prompt's tokens through the cache) are those of TRL's
per-row forward up to floating-point reassociation (`tests/recipes/test_shared_prompt.py`
checks log-probabilities and gradients against TRL's own path). What changes is the cost:
`P + G * (max C + 1)` tokens instead of `G * (P + max C)`, and attention over `G` short rows
against the cache instead of `G` full rows. (An earlier version packed the group into one
sequence under a custom 4D mask; on CPU that mask kept SDPA off its causal kernel, and a demo
update took 1.6x as long as with the cache.)

Rows are grouped by their unpadded prompt ids, so any micro-batch works; a micro-batch whose
rows all have different prompts, multimodal inputs, an auxiliary loss, gradient checkpointing
(checkpointed layers fill no cache) or a model wrapped for distributed training (two forwards
before one backward would break its gradient hooks) go through TRL's own path. The gain needs
a group's completions in one micro-batch: `per_device_train_batch_size` a multiple of
`num_generations` (the CPU configs use one group per micro-batch).

**Frozen layers from the rollouts.** When the trained model's lowest layers hold no trainable
parameter (the CPU configs adapt the top 8 of 30), their output depends on the frozen weights
alone, and the rollouts already computed it: `StepRollout` samples from a copy whose frozen
layers are the policy's own weights (`mads_bench.training.fast_weights`) and hands the trainer
the hidden states that entered the first trained layer (`keep_rollout_states`). A group whose
prompt and completions all have states runs only the trained layers, on those states (the
layers below are not run: a demo update went from 2.31 to 1.45 s). The gradient is the same,
since none reaches below the first trained layer; the log-probabilities take the frozen layers'
output from the sampler's arithmetic (its dtype, bf16 where native) instead of the trainer's
(4-bit weights under autocast), which brings the trainer's log-probabilities closer to the
sampler's. Groups without states (another rollout, another prompt) run every layer.

Example:
    >>> trainer = SharedPromptGRPOTrainer(model=..., reward_funcs=..., args=...)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import torch
from transformers import DynamicCache
from trl import GRPOTrainer

__all__ = [
    "SharedPromptGRPOTrainer", "completion_batch", "first_trained_layer", "shared_prompt_groups",
]  # fmt: skip


def shared_prompt_groups(
    input_ids: torch.Tensor, attention_mask: torch.Tensor, prompt_width: int
) -> list[list[int]]:
    """Row indices grouped by identical (unpadded) prompt ids, in first-seen order.

    Example:
        >>> ids = torch.tensor([[0, 5, 6, 9], [0, 5, 6, 8], [4, 5, 6, 7]])
        >>> mask = torch.tensor([[0, 1, 1, 1], [0, 1, 1, 1], [1, 1, 1, 1]])
        >>> shared_prompt_groups(ids, mask, 3)
        [[0, 1], [2]]
    """
    groups: dict[tuple[int, ...], list[int]] = {}
    for row in range(input_ids.size(0)):
        keep = attention_mask[row, :prompt_width].bool()
        groups.setdefault(tuple(input_ids[row, :prompt_width][keep].tolist()), []).append(row)
    return list(groups.values())


def completion_batch(
    prompt: list[int], completions: list[list[int]], pad: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The batch scored on top of the cache of `prompt[:-1]`: one row per completion.

    Args:
        prompt (`list[int]`): The shared prompt ids (at least one).
        completions (`list[list[int]]`): Each completion's ids (those its row attends to).
        pad (`int`): The id written where a shorter row is padded (masked, never scored).

    Returns:
        `(input_ids, position_ids, attention_mask, labels)`: `[G, W]` ids (`prompt[-1]` then
        the completion, right-padded) and their positions, the `[G, len(prompt) - 1 + W]`
        padding mask over cache and rows, and `[G, W]` next-token labels (`-100` where a
        position predicts no completion token: TRL's `shift_labels`).

    Example:
        >>> ids, pos, mask, labels = completion_batch([7, 8, 9], [[1], [2, 3]])
        >>> ids.tolist(), pos.tolist(), labels.tolist()
        ([[9, 1, 0], [9, 2, 3]], [[2, 3, 4], [2, 3, 4]], [[1, -100, -100], [2, 3, -100]])
        >>> mask.tolist()
        [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]
    """
    cached, width = len(prompt) - 1, 1 + max(map(len, completions))
    ids, mask, labels = [], [], []
    for completion in completions:
        padding = width - 1 - len(completion)
        ids.append([prompt[-1], *completion] + [pad] * padding)
        mask.append([1] * (cached + 1 + len(completion)) + [0] * padding)
        labels.append([*completion] + [-100] * (padding + 1))
    positions = torch.arange(cached, cached + width).expand(len(completions), -1)
    return torch.tensor(ids), positions, torch.tensor(mask), torch.tensor(labels)


def first_trained_layer(model: Any) -> int | None:
    """The index of the lowest decoder layer holding a trainable parameter, when every
    trainable parameter is in a decoder layer or above them (final norm, LM head) and that
    layer is not the first; else `None` (nothing below can be skipped).

    Example:
        >>> first_trained_layer(model)  # LoRA on the top 8 of 30 layers  # doctest: +SKIP
        22
    """
    if _decoder_body(model) is None:
        return None
    lowest = None
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        found = re.search(r"\.layers\.(\d+)\.", name)
        if found is None:
            if "embed" in name:
                return None  # trained below every layer
            continue
        index = int(found.group(1))
        lowest = index if lowest is None else min(lowest, index)
    return lowest or None


def _decoder_body(model: Any) -> Any:
    """The module holding the decoder layers (`LlamaModel` and the like), or `None`."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    body = getattr(base, "model", None)
    layers = getattr(body, "layers", None)
    if not isinstance(layers, torch.nn.ModuleList) or not all(
        hasattr(getattr(layer, "self_attn", None), "layer_idx") for layer in layers
    ):
        return None
    return body


@contextlib.contextmanager
def _layers_from(body: Any, start: int) -> Iterator[int]:
    """Within, `body` runs only its layers from `start` on, renumbered from 0 for the cache
    (each attention indexes the cache by its `layer_idx`); yields how many that is."""
    layers = body.layers
    kept = list(layers)[start:]
    indices = [layer.self_attn.layer_idx for layer in kept]
    body.layers = torch.nn.ModuleList(kept)
    for number, layer in enumerate(kept):
        layer.self_attn.layer_idx = number
    try:
        yield len(kept)
    finally:
        body.layers = layers
        for layer, index in zip(kept, indices, strict=True):
            layer.self_attn.layer_idx = index


class SharedPromptGRPOTrainer(GRPOTrainer):
    """TRL's `GRPOTrainer`, running the prompt of a group of completions once, and only its
    trained layers where the rollouts handed over the states below them."""

    @property
    def frozen_below(self) -> int | None:
        """The first trained layer, whose input the rollouts should capture (`None`: none
        to skip, or the update cannot use them)."""
        if self.args.gradient_checkpointing:
            return None
        if not hasattr(self, "_frozen_below"):
            self._frozen_below = first_trained_layer(self.model)
        return self._frozen_below

    def keep_rollout_states(
        self, prompts: list[list[int]], completions: list[list[int]], states: list[torch.Tensor]
    ) -> None:
        """Keep, for this generation round, the states that entered layer `frozen_below`
        for each (prompt, completion): `[len(prompt) + len(completion) - 1, hidden]` at
        least (prompt tokens, then the completion's but its last)."""
        self._rollout_states = {
            (tuple(p), tuple(c)): s for p, c, s in zip(prompts, completions, states, strict=True)
        }

    def _get_per_token_logps_and_entropies(
        self, model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
        logits_to_keep: int, batch_size: int | None = None, compute_entropy: bool = False,
        compute_aux_loss: bool = False, **multimodal: Any,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:  # fmt: skip
        prompt_width = input_ids.size(1) - logits_to_keep
        groups = shared_prompt_groups(input_ids, attention_mask, prompt_width)
        plain = (
            compute_aux_loss
            or any(value is not None for value in multimodal.values())
            or all(len(group) == 1 for group in groups)
            or hasattr(model, "module")  # DDP / FSDP / DeepSpeed wrappers
            or self.args.gradient_checkpointing  # checkpointed layers keep no cache
        )
        if plain:
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size=batch_size,
                compute_entropy=compute_entropy, compute_aux_loss=compute_aux_loss, **multimodal,
            )  # fmt: skip
        logps: list[torch.Tensor] = [None] * input_ids.size(0)  # type: ignore[list-item]
        entropies: list[torch.Tensor] = [None] * input_ids.size(0)  # type: ignore[list-item]
        for group in groups:
            seen = attention_mask[group, prompt_width:].bool()
            keep = attention_mask[group[0], :prompt_width].bool()
            prompt = input_ids[group[0], :prompt_width][keep].tolist()
            completions = [input_ids[row, prompt_width:][seen[i]].tolist()
                           for i, row in enumerate(group)]  # fmt: skip
            out = self._score_group(model, prompt, completions)
            for i, row in enumerate(group):
                logps[row] = _place(out.log_probs[i], seen[i], logits_to_keep)
                if compute_entropy:
                    entropies[row] = _place(out.entropy[i], seen[i], logits_to_keep)
        return torch.stack(logps), torch.stack(entropies) if compute_entropy else None, None

    def _score_group(self, model: Any, prompt: list[int], completions: list[list[int]]) -> Any:
        """The fused LM head's output for each completion, the prompt run once into a cache."""
        states = self._group_states(prompt, completions)
        if states is not None:
            return self._score_group_above(model, prompt, completions, *states)
        device = model.device
        cache = DynamicCache(config=model.config)
        ids, positions, mask, labels = completion_batch(prompt, completions)
        with self.accelerator.autocast():
            if len(prompt) > 1:
                model(input_ids=torch.tensor([prompt[:-1]], device=device), cache=cache,
                      use_cache=True, logits_to_keep=1)  # fmt: skip
                if cache.get_seq_length() != len(prompt) - 1:  # never score without the prompt
                    raise RuntimeError(
                        f"SharedPromptGRPOTrainer: the prompt's cache holds "
                        f"{cache.get_seq_length()} of {len(prompt) - 1} tokens"
                    )
                cache.batch_repeat_interleave(len(completions))
            return model(
                input_ids=ids.to(device), position_ids=positions.to(device),
                attention_mask=mask.to(device), cache=cache, shift_labels=labels.to(device),
                fused_lm_head=True,
            )  # fmt: skip

    def _group_states(
        self, prompt: list[int], completions: list[list[int]]
    ) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The group's states from its rollouts: the prompt's (but its last token's)
        `[len(prompt) - 1, hidden]`, and each completion row's `[G, W, hidden]` (zeros
        where nothing is scored: the completion's last token, padding); `None` if any is
        missing."""
        kept = getattr(self, "_rollout_states", None)
        if not kept or len(prompt) < 2 or self.frozen_below is None:
            return None
        found = [kept.get((tuple(prompt), tuple(c))) for c in completions]
        if any(s is None or s.shape[0] < len(prompt) + len(c) - 1
               for s, c in zip(found, completions, strict=True)):  # fmt: skip
            return None
        width = 1 + max(map(len, completions))
        rows = found[0].new_zeros(len(completions), width, found[0].shape[-1])
        start = len(prompt) - 1  # each row: the prompt's last token, then the completion's
        for row, (state, completion) in enumerate(zip(found, completions, strict=True)):
            rows[row, : len(completion)] = state[start : start + len(completion)]
        return found[0][: len(prompt) - 1], rows

    def _score_group_above(
        self, model: Any, prompt: list[int], completions: list[list[int]],
        prompt_states: torch.Tensor, rows: torch.Tensor,
    ) -> Any:  # fmt: skip
        """`_score_group` running only the layers from `frozen_below` up, on the states
        the rollouts captured at their input."""
        device = model.device
        dtype = model.get_input_embeddings().weight.dtype
        ids, positions, mask, labels = completion_batch(prompt, completions)
        body = _decoder_body(model)
        with _layers_from(body, self.frozen_below) as count, self.accelerator.autocast():
            cache = DynamicCache(config=model.config)
            del cache.layers[count:]
            # a clone outside inference mode: the rollout's tensors cannot enter autograd
            model(inputs_embeds=prompt_states.to(device, dtype).clone()[None], cache=cache,
                  use_cache=True, logits_to_keep=1)  # fmt: skip
            cache.batch_repeat_interleave(len(completions))
            return model(
                inputs_embeds=rows.to(device, dtype).clone(), position_ids=positions.to(device),
                attention_mask=mask.to(device), cache=cache, shift_labels=labels.to(device),
                fused_lm_head=True,
            )  # fmt: skip


def _place(values: torch.Tensor, seen: torch.Tensor, width: int) -> torch.Tensor:
    """One row's values (its completion tokens first) placed where it attends (else 0)."""
    count = int(seen.sum())
    return values.new_zeros(width).masked_scatter(seen.to(values.device), values[:count])
