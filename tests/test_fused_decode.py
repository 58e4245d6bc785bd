"""`FusedDecoder`: a decoding step gives the logits of the model's own forward, follows weights
changed in place, and refuses the models it cannot run.

Models are tiny random ones: `tiny-lm` (Llama, SmolLM2's shape scaled down) and a Qwen2 built
from config (biased q/k/v projections). The reference is the model's forward on a copy of the
same cache: two rows of different lengths, the shorter left-padded and masked.
"""

from __future__ import annotations

import copy

import pytest
import torch
from transformers import AutoModelForCausalLM

from mads_bench import fused_decode
from mads_bench.decoding import _growing_cache, _left_pad
from mads_bench.fused_decode import ENV, FusedDecoder, fused_decoder, unsupported_reason


@pytest.fixture(scope="module")
def llama(tiny_lm_path):
    return AutoModelForCausalLM.from_pretrained(tiny_lm_path, dtype=torch.float32).eval()


def _qwen2() -> torch.nn.Module:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=320, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
    )  # fmt: skip
    model = Qwen2ForCausalLM(config).eval()
    with torch.no_grad():  # random biases, so a dropped bias would show
        for layer in model.model.layers:
            for projection in (layer.self_attn.q_proj, layer.self_attn.k_proj):
                projection.bias.normal_(0, 0.5)
    return model


def _batch(model, lengths=(23, 14)):
    """A cache of rows of `lengths` random tokens (left-padded) and the next step's inputs."""
    generator = torch.Generator().manual_seed(1)
    vocab = model.config.vocab_size
    width = max(lengths)
    rows = []
    with torch.no_grad():
        for length in lengths:
            cache = _growing_cache(model.config)
            ids = torch.randint(3, vocab, (1, length), generator=generator)
            model(input_ids=ids, cache=cache, use_cache=True)
            rows.append(cache)
    merged = _growing_cache(model.config)
    for layer, parts in zip(
        merged.layers, zip(*(c.layers for c in rows), strict=True), strict=True
    ):
        layer.lazy_initialization(parts[0].keys, parts[0].values)
        layer.keys = torch.cat([_left_pad(p.keys, width) for p in parts])
        layer.values = torch.cat([_left_pad(p.values, width) for p in parts])
    mask = torch.stack(
        [torch.cat([torch.zeros(width - n, dtype=torch.long), torch.ones(n + 1, dtype=torch.long)])
         for n in lengths]
    )  # fmt: skip
    ids = torch.randint(3, vocab, (len(lengths),), generator=generator)
    return merged, mask, ids, torch.tensor(lengths)


def _reference(model, cache, mask, ids, positions) -> torch.Tensor:
    with torch.no_grad():
        out = model(input_ids=ids[:, None], attention_mask=mask, position_ids=positions[:, None],
                    cache=cache, use_cache=True)  # fmt: skip
    return out.logits[:, -1].float()


@pytest.mark.parametrize("packed", [True, False], ids=["onednn-packed", "plain"])
@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_a_step_gives_the_forwards_logits_and_cache(llama, family, packed, monkeypatch) -> None:
    if not packed:
        monkeypatch.setattr(fused_decode, "_pack", lambda weight: None)
    model = llama if family == "llama" else _qwen2()
    cache, mask, ids, positions = _batch(model)
    mine = copy.deepcopy(cache)
    expected = _reference(model, cache, mask, ids, positions)
    got = FusedDecoder(model)(ids, positions, mask, mine).float()
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)
    for theirs, ours in zip(cache.layers, mine.layers, strict=True):  # the new keys are cached
        torch.testing.assert_close(ours.keys, theirs.keys, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(ours.values, theirs.values, atol=1e-5, rtol=1e-5)


def test_bfloat16_logits_match_the_forward_within_rounding(tiny_lm_path) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny_lm_path, dtype=torch.bfloat16).eval()
    cache, mask, ids, positions = _batch(model)
    mine = copy.deepcopy(cache)
    expected = _reference(model, cache, mask, ids, positions)
    got = FusedDecoder(model)(ids, positions, mask, mine).float()
    assert (got - expected).abs().max() < 0.05 * expected.abs().max()


def test_weights_changed_in_place_are_repacked(llama) -> None:
    model = copy.deepcopy(llama)
    decoder = FusedDecoder(model)
    assert decoder.refresh() == 0
    with torch.no_grad():  # what a GRPO rollout copy's re-merge after an optimizer step does
        model.model.layers[-1].mlp.down_proj.weight.mul_(3.0)
        model.model.layers[0].self_attn.k_proj.weight.add_(0.05)
    cache, mask, ids, positions = _batch(model)
    mine = copy.deepcopy(cache)
    expected = _reference(model, cache, mask, ids, positions)
    got = decoder(ids, positions, mask, mine).float()  # refreshes first
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)
    assert decoder.refresh() == 0


def test_models_it_cannot_run_get_a_reason_and_no_decoder(llama, monkeypatch) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import GPT2Config, GPT2LMHeadModel

    gpt2 = GPT2LMHeadModel(
        GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64, bos_token_id=0, eos_token_id=0)
    )
    assert "model_type 'gpt2'" in unsupported_reason(gpt2)
    assert fused_decoder(gpt2) is None
    adapted = get_peft_model(copy.deepcopy(llama), LoraConfig(r=2, target_modules=["q_proj"]))
    assert "nn.Linear" in unsupported_reason(adapted.get_base_model())
    with pytest.raises(ValueError, match="cannot run"):
        FusedDecoder(gpt2)
    assert unsupported_reason(llama) is None and fused_decoder(llama) is not None
    monkeypatch.setenv(ENV, "0")
    assert fused_decoder(llama) is None
