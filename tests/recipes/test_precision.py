"""bf16 where native: detection, the recipes' switch, and the same loss as float32."""

from __future__ import annotations

import pytest
import torch
from accelerate import Accelerator
from trl import ModelConfig, SFTConfig, TrlParser

from mads_bench.precision import BF16_ENV, inference_dtype, native_bf16
from mads_bench.training import SFTScriptArguments, load_model_and_tokenizer
from mads_bench.training.config import _wants_native_bf16

DEMO_SFT = "recipes/smollm2-135m/sft/config_demo.yaml"


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("true", True), ("0", False)])
def test_the_environment_overrides_detection(monkeypatch, value, expected):
    monkeypatch.setenv(BF16_ENV, value)
    assert native_bf16("cpu") is expected
    assert inference_dtype("cpu", checkpoint=torch.float32) == (
        torch.bfloat16 if expected else torch.float32
    )
    # a checkpoint that is not float32 keeps its dtype
    assert inference_dtype("cpu", checkpoint=torch.float16) == torch.float16


def test_a_bad_override_is_an_error(monkeypatch):
    monkeypatch.setenv(BF16_ENV, "maybe")
    with pytest.raises(ValueError, match=BF16_ENV):
        native_bf16("cpu")


@pytest.mark.parametrize("native", ["1", "0"])
def test_the_demo_config_trains_in_bf16_exactly_where_it_is_native(monkeypatch, native):
    monkeypatch.setenv(BF16_ENV, native)
    parser = TrlParser((SFTScriptArguments, SFTConfig, ModelConfig))
    script_args, training_args, _ = parser.parse_args_and_config(
        ["--config", DEMO_SFT, "--dataset_name", "x"]
    )
    assert script_args.native_bf16 and training_args.use_cpu and not training_args.bf16
    assert _wants_native_bf16(script_args, training_args) is (native == "1")
    # an explicit bf16: true is left alone (nothing to switch on)
    _, forced, _ = parser.parse_args_and_config(
        ["--config", DEMO_SFT, "--dataset_name", "x", "--bf16", "true"]
    )
    assert forced.mixed_precision == "bf16" and not _wants_native_bf16(script_args, forced)


def _loss(bf16: bool, tmp_path) -> float:
    # the recipes' own loading (QLoRA NF4 on tiny-lm, 4-bit compute dtype from `bf16`) under
    # the autocast accelerate applies for mixed_precision="bf16"
    model_args = ModelConfig(model_name_or_path="tiny-lm", load_in_4bit=True,
                             use_bnb_nested_quant=True, dtype="float32")  # fmt: skip
    args = SFTConfig(output_dir=str(tmp_path), use_cpu=True, bf16=bf16, report_to="none")
    model, tokenizer = load_model_and_tokenizer(model_args, args)
    batch = tokenizer(
        ['<think>The user wants the balance.</think><action type="say">It is 12.50.</action>'],
        return_tensors="pt",
    )
    accelerator = Accelerator(cpu=True, mixed_precision="bf16" if bf16 else "no")
    with torch.no_grad(), accelerator.autocast():
        return model(**batch, labels=batch["input_ids"]).loss.item()


def test_bf16_and_float32_give_the_same_loss_on_a_fixed_batch(tmp_path):
    # bf16 keeps 8 bits of mantissa (relative rounding 2**-9 per value); through the tiny
    # model's few layers and a cross-entropy over its vocabulary the mean loss moves by far
    # less than 1%. A wrong dtype path (bf16 weights read as float32, a missing cast) gives
    # garbage or a loss off by orders of magnitude.
    fp32, bf16 = _loss(False, tmp_path), _loss(True, tmp_path)
    assert fp32 > 0
    assert bf16 == pytest.approx(fp32, rel=1e-2)
