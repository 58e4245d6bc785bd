"""Attention for one-token decoding steps on CPU, registered with transformers as `mads_decode`.

A decoding step asks attention for one query row per sequence against the whole cache.
PyTorch's CPU SDPA routes that through its flash kernel, which tiles for long queries: on the
2-core Zen 5, for SmolLM2-135M's shapes (9 query heads over 3 key/value heads, head size 64,
1.3k cached tokens, bf16) it took 0.56 ms per layer for one row and 4.0 ms for eight, over
half of a decoding step, and it grew with the batch as fast as the rows did. The same
attention as two batched matmuls over the key/value heads (each head's query rows grouped
under it, no copy of the keys) with a float32 softmax: a decoding step of the engine
(`mads_bench.decoding`, rows of 0.9k-1.3k cached tokens, one run each, side by side in one
process, not yet a `make bench` row) went from 41 to 25 ms for one row and from 52 to 39 ms
for eight.

`mads_decode` is SDPA for every call with more than one query token (prefill and training
forwards are untouched) and the matmul form for one-token steps; its masks are SDPA's. The
outputs differ from SDPA's by rounding only (`tests/test_decode_attention.py`).
`use_decode_attention(model)` switches a model that uses SDPA; `mads_bench.decoding` does it
for every model it decodes with.

Example:
    >>> from mads_bench.decode_attention import use_decode_attention
    >>> use_decode_attention(model)  # doctest: +SKIP
    True
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

__all__ = ["NAME", "decode_attention_forward", "use_decode_attention"]

NAME = "mads_decode"


def decode_attention_forward(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """transformers' attention signature: query `[batch, heads, q, dim]`, key and value
    `[batch, kv_heads, kv, dim]`, mask (SDPA's: boolean, additive or `None`) broadcastable to
    `[batch, 1, q, kv]`; returns `([batch, q, heads, dim], None)`."""
    if query.shape[2] != 1 or dropout or kwargs.get("position_bias") is not None:
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    batch, heads, _, dim = query.shape
    groups = key.shape[1]
    scale = dim**-0.5 if scaling is None else scaling
    grouped = query.reshape(batch, groups, heads // groups, dim)  # heads sharing a kv head
    # keys @ queries^T, not queries @ keys^T: the keys are a view into a cache with spare
    # room, and CPU bmm copies a transposed view of them first (4.5x slower at 8 rows)
    scores = torch.matmul(key, grouped.transpose(-1, -2)).transpose(-1, -2).float() * scale
    if attention_mask is not None:
        mask = attention_mask.reshape(batch, 1, 1, -1) if attention_mask.shape[0] == batch else (
            attention_mask.reshape(1, 1, 1, -1)
        )  # fmt: skip
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(~mask, float("-inf"))
        else:
            scores = scores + mask.float()
    weights = torch.softmax(scores, dim=-1).to(value.dtype)
    output = torch.matmul(weights, value)  # [batch, groups, heads per group, dim]
    return output.reshape(batch, 1, heads, dim), None


AttentionInterface.register(NAME, decode_attention_forward)
AttentionMaskInterface.register(NAME, sdpa_mask)


def use_decode_attention(model: Any) -> bool:
    """Switch `model` (a transformers model, or a peft model around one) from SDPA to
    `mads_decode` when it runs on CPU; returns whether it uses `mads_decode` now."""
    config = getattr(model, "config", None)
    current = getattr(config, "_attn_implementation", None)
    if current == NAME:
        return True
    if current != "sdpa" or getattr(model, "device", torch.device("cpu")).type != "cpu":
        return False
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    base.set_attn_implementation(NAME)
    return True
