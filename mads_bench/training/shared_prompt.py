"""GRPO log-probabilities of a group's completions in one sequence: the prompt runs once.

TRL 1.16 scores every completion of a group as its own row, `prompt + completion`, so a
1.3k-token MADS prompt is run forward and backward once per completion (8 times for the paper's
8 generations) while each completion is ~100-200 tokens. `SharedPromptGRPOTrainer` packs the
rows of a micro-batch that share a prompt into one sequence instead:

    prompt[:-1] | prompt[-1] completion_1 | prompt[-1] completion_2 | ...

Each segment starts with a copy of the prompt's last token at the same position (it predicts
the completion's first token), carries its own position ids (continuing the prompt's), and an
attention mask lets a segment see the shared prompt and itself only. Under that mask every
completion token sees exactly what it sees in its own row, so its log-probability, its entropy
and the gradient of the loss are those of TRL's per-row forward up to floating-point
reassociation (`tests/recipes/test_shared_prompt.py` checks log-probabilities and gradients
against TRL's own path). What changes is the cost: `P + sum(C_i + 1)` tokens instead of
`G * (P + max C)` (padding included), and no padded attention.

Rows are grouped by their unpadded prompt ids, so any micro-batch works; a micro-batch whose
rows all have different prompts, multimodal inputs, or a model whose attention cannot take a
custom mask (only `sdpa` and `eager` can) go through TRL's own path. The gain needs a group's
completions in one micro-batch: `per_device_train_batch_size` a multiple of `num_generations`
(the CPU configs use one group per micro-batch).

Example:
    >>> trainer = SharedPromptGRPOTrainer(model=..., reward_funcs=..., args=...)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import torch
from trl import GRPOTrainer

__all__ = ["SharedPromptGRPOTrainer", "pack_group", "shared_prompt_groups"]

_MASKABLE = ("sdpa", "eager")
"""Attention implementations that take a custom 4D boolean mask."""


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


def pack_group(
    prompt: list[int], completions: list[list[int]]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One sequence holding a prompt once and every completion after it.

    Args:
        prompt (`list[int]`): The shared prompt ids (at least one).
        completions (`list[list[int]]`): Each completion's ids (those its row attends to).

    Returns:
        `(input_ids, position_ids, mask, labels)`: `[1, L]` ids and positions, a `[1, 1, L, L]`
        boolean attention mask (True: may attend) and `[1, L]` next-token labels (`-100` except
        where a position predicts a completion token: TRL's `shift_labels`).

    Example:
        >>> ids, pos, mask, labels = pack_group([7, 8], [[1, 2], [3]])
        >>> ids.tolist(), pos.tolist(), labels.tolist()
        ([[7, 8, 1, 2, 8, 3]], [[0, 1, 2, 3, 1, 2]], [[-100, 1, 2, -100, 3, -100]])
        >>> mask[0, 0, 4].tolist()  # the second segment's first token: prompt and itself
        [True, False, False, False, True, False]
    """
    shared = prompt[:-1]
    ids, positions = list(shared), list(range(len(shared)))
    labels, segment = [-100] * len(shared), [0] * len(shared)
    for index, completion in enumerate(completions, start=1):
        tokens = [prompt[-1], *completion]
        ids += tokens
        positions += range(len(shared), len(shared) + len(tokens))
        labels += [*completion, -100]
        segment += [index] * len(tokens)
    seg = torch.tensor(segment)
    order = torch.arange(len(ids))
    causal = order[None, :] <= order[:, None]
    visible = (seg[None, :] == 0) | (seg[None, :] == seg[:, None])
    return (
        torch.tensor([ids]),
        torch.tensor([positions]),
        (causal & visible)[None, None],
        torch.tensor([labels]),
    )


class SharedPromptGRPOTrainer(GRPOTrainer):
    """TRL's `GRPOTrainer`, scoring the completions of one prompt in one packed sequence."""

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
            or _attention(model) not in _MASKABLE
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
            ids, positions, mask, labels = pack_group(prompt, completions)
            device = input_ids.device
            with self.accelerator.autocast():
                out = model(
                    input_ids=ids.to(device), position_ids=positions.to(device),
                    attention_mask=mask.to(device), shift_labels=labels.to(device),
                    fused_lm_head=True,
                )  # fmt: skip
            scored = (labels[0] != -100).to(device)
            # the packed order is the rows' completion tokens one after the other
            for i, row in enumerate(group):
                logps[row] = _unpack(out.log_probs[0][scored], seen, i, logits_to_keep)
                if compute_entropy:
                    entropies[row] = _unpack(out.entropy[0][scored], seen, i, logits_to_keep)
        return torch.stack(logps), torch.stack(entropies) if compute_entropy else None, None


def _unpack(flat: torch.Tensor, seen: torch.Tensor, index: int, width: int) -> torch.Tensor:
    """Row `index`'s values out of the packed completions, placed where it attends (else 0)."""
    start = int(seen[:index].sum())
    values = flat[start : start + int(seen[index].sum())]
    return values.new_zeros(width).masked_scatter(seen[index].to(values.device), values)


def _attention(model: Any) -> str | None:
    config = getattr(model, "config", None)
    if config is None and hasattr(model, "module"):
        config = getattr(model.module, "config", None)
    return getattr(config, "_attn_implementation", None)
