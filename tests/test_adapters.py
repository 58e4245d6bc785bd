"""`mads_bench.adapters`: a saved QLoRA adapter loads back as the exact policy it was trained as."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from trl import ModelConfig, SFTConfig

from mads_bench.adapters import (
    BASE_QUANTIZATION_FILE,
    is_adapter_folder,
    load_for_inference,
    load_merged_policy,
    save_base_quantization,
)
from mads_bench.training import build_quantization_config, load_model_and_tokenizer

INPUT = torch.tensor([[1, 50, 200, 3000, 42, 7, 999, 12]])


def _relative_error(logits: torch.Tensor, reference: torch.Tensor) -> float:
    return ((logits - reference).abs().max() / reference.abs().max()).item()


def _kernel_tolerance() -> float:
    """How far the 4-bit policy may be from its merged float32 twin, from the kernel used here.

    On CPUs with avx512_bf16, bitsandbytes' 4-bit CPU kernel casts activations and block
    scales to bfloat16 (8 significant bits: each rounding is within 2**-9) and returns bf16;
    through the tiny model's 2 layers of quantised matmuls (3 in series per layer) these add up
    to a few units of 2**-9 of the logit scale: 2**-7 bounds it. Elsewhere the kernel
    dequantises to float32 and only the summation order differs from the merged matmul
    (~1e-6 relative); 1e-4 leaves room. Either way the adapter on the unquantised base is
    off by the NF4 rounding of the weights (several per cent), far outside both.
    """
    from bitsandbytes.functional import has_avx512bf16

    return 2**-7 if has_avx512bf16() else 1e-4


def _trained_qlora_adapter(tmp_path: Path) -> tuple[Path, torch.Tensor]:
    """A 4-bit tiny-lm with a non-zero LoRA adapter, saved like the recipes save it."""
    from peft import LoraConfig, get_peft_model

    model_args = ModelConfig(
        model_name_or_path="tiny-lm", load_in_4bit=True, use_bnb_nested_quant=True
    )
    args = SFTConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, report_to="none")
    model, _ = load_model_and_tokenizer(model_args, args)
    policy = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "v_proj", "o_proj"]))
    torch.manual_seed(0)
    for name, param in policy.named_parameters():
        if "lora_B" in name:
            torch.nn.init.normal_(param, std=0.5)  # a clearly "trained" adapter
    policy.eval()
    with torch.no_grad():
        logits = policy(input_ids=INPUT).logits
    out = tmp_path / "adapter"
    policy.save_pretrained(out)
    save_base_quantization(build_quantization_config(model_args, use_cpu=True), out)
    return out, logits


def test_merged_policy_computes_what_the_4bit_policy_computes(tmp_path: Path) -> None:
    adapter, trained_logits = _trained_qlora_adapter(tmp_path)
    assert is_adapter_folder(adapter) and not is_adapter_folder(tmp_path)
    merged = load_merged_policy(adapter)
    # a plain model: no peft wrappers, no bitsandbytes layers, no quantisation config left
    assert not any("lora" in name for name, _ in merged.named_modules())
    assert not any("bitsandbytes" in type(m).__module__ for m in merged.modules())
    assert getattr(merged.config, "quantization_config", None) is None
    with torch.no_grad():
        merged_logits = merged(input_ids=INPUT).logits
    # the same function as the trained QLoRA policy, to the kernel's rounding
    assert _relative_error(merged_logits, trained_logits) < _kernel_tolerance()
    # whereas the adapter on the full-precision base is a different model
    recorded = adapter / BASE_QUANTIZATION_FILE
    recorded.rename(tmp_path / "kept.json")
    with torch.no_grad():
        unquantised_logits = load_merged_policy(adapter)(input_ids=INPUT).logits
    assert _relative_error(unquantised_logits, trained_logits) > 2 * _kernel_tolerance()


def test_recorded_quantization_is_the_training_config(tmp_path: Path) -> None:
    adapter, _ = _trained_qlora_adapter(tmp_path)
    recorded = json.loads((adapter / BASE_QUANTIZATION_FILE).read_text())
    assert recorded["load_in_4bit"] is True and recorded["bnb_4bit_quant_type"] == "nf4"
    assert recorded["bnb_4bit_use_double_quant"] is True


def test_load_for_inference_takes_models_and_adapters(tmp_path: Path, tiny_lm_path) -> None:
    adapter, trained_logits = _trained_qlora_adapter(tmp_path)
    with torch.no_grad():
        logits = load_for_inference(str(adapter))(input_ids=INPUT).logits
    assert _relative_error(logits, trained_logits) < _kernel_tolerance()
    plain = load_for_inference("tiny-lm")
    assert not plain.training and type(plain).__name__ == "LlamaForCausalLM"
    with pytest.raises(FileNotFoundError, match="no adapter_config.json"):
        load_merged_policy(tiny_lm_path)
