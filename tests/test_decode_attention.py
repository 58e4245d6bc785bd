"""`mads_decode`: SDPA's attention, computed as two matmuls for one-token decoding steps."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from mads_bench.decode_attention import NAME, decode_attention_forward, use_decode_attention


class _Heads(nn.Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.num_key_value_groups = groups
        self.is_causal = True


def _inputs(batch: int, heads: int, kv_heads: int, queries: int, length: int, dtype):
    generator = torch.Generator().manual_seed(batch * 100 + heads * 10 + queries)
    query = torch.randn(batch, heads, queries, 16, generator=generator).to(dtype)
    room = torch.randn(batch, kv_heads, length + 7, 16, generator=generator).to(dtype)
    values = torch.randn(batch, kv_heads, length + 7, 16, generator=generator).to(dtype)
    # the cache hands attention views into buffers with spare room, as GrowingLayer does
    return query, room[:, :, :length], values[:, :, :length]


def _padding_mask(batch: int, length: int, *, additive: bool) -> torch.Tensor:
    mask = torch.ones(batch, 1, 1, length, dtype=torch.bool)
    for row in range(batch):
        mask[row, ..., : 3 * row] = False  # left padding, longer for later rows
    if not additive:
        return mask
    return torch.zeros(mask.shape).masked_fill(~mask, torch.finfo(torch.float32).min)


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize(("heads", "kv_heads"), [(4, 4), (6, 2)])
@pytest.mark.parametrize("mask", ["none", "bool", "additive"])
def test_one_token_steps_match_sdpa(batch, heads, kv_heads, mask) -> None:
    module = _Heads(heads // kv_heads)
    query, key, value = _inputs(batch, heads, kv_heads, 1, 40, torch.float32)
    attention_mask = (
        None if mask == "none" else _padding_mask(batch, 40, additive=mask == "additive")
    )
    ours, _ = decode_attention_forward(module, query, key, value, attention_mask, scaling=0.25)
    theirs, _ = sdpa_attention_forward(module, query, key, value, attention_mask, scaling=0.25)
    assert ours.shape == theirs.shape == (batch, 1, heads, 16)
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-5)


def test_bf16_steps_are_as_close_to_float64_as_sdpa() -> None:
    module = _Heads(3)
    query, key, value = _inputs(4, 9, 3, 1, 300, torch.bfloat16)
    mask = _padding_mask(4, 300, additive=False)
    exact, _ = sdpa_attention_forward(
        module, query.double(), key.double(), value.double(), mask, scaling=0.125
    )
    ours, _ = decode_attention_forward(module, query, key, value, mask, scaling=0.125)
    theirs, _ = sdpa_attention_forward(module, query, key, value, mask, scaling=0.125)
    ours_error = (ours.double() - exact).abs().max()
    sdpa_error = (theirs.double() - exact).abs().max()
    assert ours_error <= 2 * sdpa_error + 1e-3


def test_prompts_go_to_sdpa_unchanged() -> None:
    module = _Heads(2)
    query, key, value = _inputs(2, 4, 2, 5, 5, torch.float32)
    ours, _ = decode_attention_forward(module, query, key, value, None, scaling=0.25)
    theirs, _ = sdpa_attention_forward(module, query, key, value, None, scaling=0.25)
    assert torch.equal(ours, theirs)


def test_a_model_on_cpu_switches_from_sdpa_and_generates_the_same(tiny_lm_path) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_lm_path, dtype=torch.float32).eval()
    ids = torch.tensor([[5, 17, 42, 9, 33, 8], [2, 2, 61, 7, 19, 4]])
    mask = torch.tensor([[1] * 6, [0, 0, 1, 1, 1, 1]])
    settings = {"max_new_tokens": 6, "do_sample": False, "pad_token_id": 2, "eos_token_id": None}
    with torch.no_grad():
        before = model.generate(input_ids=ids, attention_mask=mask, **settings)
        assert use_decode_attention(model)
        assert model.config._attn_implementation == NAME
        after = model.generate(input_ids=ids, attention_mask=mask, **settings)
    assert torch.equal(before, after)
    assert use_decode_attention(model)  # already switched: nothing to do


def test_a_model_on_eager_attention_is_left_alone(tiny_lm_path) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_lm_path, attn_implementation="eager")
    assert not use_decode_attention(model)
    assert model.config._attn_implementation == "eager"
