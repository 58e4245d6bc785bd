"""Load the policy for the recipes: base model through the project resolver, QLoRA, adapters.

Every model goes through `mads_bench.models` (`resolve_model`, `load_causal_lm`,
`load_tokenizer`), so offline names (`tiny-lm`, `smollm2-135m`) work in configs next to local
folders and cached Hub ids. QLoRA is TRL's `ModelConfig` switches turned into a
`transformers.BitsAndBytesConfig`: `load_in_4bit: true`, `bnb_4bit_quant_type: nf4`,
`use_bnb_nested_quant: true` (double quantisation); bitsandbytes 0.50 runs these 4-bit layers on
CPU too. The LoRA side is TRL's `get_peft_config(model_args)`, optionally limited to the top
decoder layers (`build_peft_config`), handed to the trainer.

Example:
    >>> from trl import ModelConfig
    >>> args = ModelConfig(model_name_or_path="tiny-lm", load_in_4bit=True,
    ...                    use_bnb_nested_quant=True)
    >>> build_quantization_config(args, use_cpu=True).bnb_4bit_quant_type
    'nf4'
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from mads_bench.errors import UsageError
from mads_bench.models import load_causal_lm, load_tokenizer, reading_model_folder, resolve_model

if TYPE_CHECKING:
    from peft import PeftConfig, PeftModel
    from transformers import (
        BitsAndBytesConfig,
        PreTrainedModel,
        PreTrainedTokenizerBase,
        TrainingArguments,
    )
    from trl import ModelConfig

__all__ = [
    "build_peft_config",
    "build_quantization_config",
    "load_model_and_tokenizer",
    "load_trainable_adapter",
    "merge_adapter",
]


def _dtype(name: str | None, use_cpu: bool) -> torch.dtype | str:
    if name in (None, "auto"):
        return torch.float32 if use_cpu else "auto"
    return getattr(torch, name)


def build_quantization_config(
    model_args: ModelConfig, *, use_cpu: bool, bf16: bool = False
) -> BitsAndBytesConfig | None:
    """Turn `ModelConfig`'s 4-bit / 8-bit switches into a `BitsAndBytesConfig`.

    Args:
        model_args (`trl.ModelConfig`): `load_in_4bit`, `load_in_8bit`, `bnb_4bit_quant_type`,
            `use_bnb_nested_quant`, `bnb_4bit_quant_storage`, `dtype` (compute dtype).
        use_cpu (`bool`): Compute in float32 when the dtype is unset or `auto`.
        bf16 (`bool`): Training runs in bf16 autocast (`TrainingArguments.bf16`): the 4-bit
            layers compute in bf16 too, whatever the weights dtype.

    Returns:
        `BitsAndBytesConfig | None`: None when neither switch is on.
    """
    from transformers import BitsAndBytesConfig

    if model_args.load_in_4bit and model_args.load_in_8bit:
        raise UsageError("ModelConfig: set only one of `load_in_4bit` and `load_in_8bit`.")
    if model_args.load_in_8bit:
        return BitsAndBytesConfig(load_in_8bit=True)
    if not model_args.load_in_4bit:
        return None
    compute = torch.bfloat16 if bf16 else _dtype(model_args.dtype, use_cpu)
    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type=model_args.bnb_4bit_quant_type,
        bnb_4bit_use_double_quant=model_args.use_bnb_nested_quant,
        bnb_4bit_compute_dtype=torch.float32 if compute == "auto" else compute,
        bnb_4bit_quant_storage=model_args.bnb_4bit_quant_storage,
    )


def _device_map(training_args: TrainingArguments, quantized: bool) -> Any:
    if not quantized:
        return None  # the Trainer moves the model itself
    if training_args.use_cpu or not torch.cuda.is_available():
        return "cpu"
    if training_args.distributed_state.distributed_type in ("DEEPSPEED", "FSDP"):
        return None  # ZeRO-3 / FSDP shard the weights themselves
    return {"": training_args.distributed_state.local_process_index}


def load_model_and_tokenizer(
    model_args: ModelConfig, training_args: TrainingArguments, *, padding_side: str = "right"
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load the base model (quantised when asked) and its tokenizer via `mads_bench.models`.

    Args:
        model_args (`trl.ModelConfig`): `model_name_or_path` (known name, folder or cached Hub
            id), `model_revision`, `dtype`, `attn_implementation`, quantisation switches.
        training_args (`TrainingArguments`): `use_cpu` and the distributed state pick the
            device map of a quantised model.
        padding_side (`str`): `"left"` for generation (GRPO), `"right"` for SFT.

    Returns:
        `tuple`: `(model, tokenizer)`; the tokenizer always has a pad token.
    """
    if not model_args.model_name_or_path:
        raise UsageError("ModelConfig: `model_name_or_path` is required (e.g. `tiny-lm`).")
    path = resolve_model(model_args.model_name_or_path)
    tokenizer = load_tokenizer(path, padding_side=padding_side)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    quantization = build_quantization_config(
        model_args, use_cpu=training_args.use_cpu, bf16=training_args.bf16
    )
    kwargs: dict[str, Any] = {"dtype": _dtype(model_args.dtype, training_args.use_cpu)}
    if quantization is not None:
        kwargs["quantization_config"] = quantization
        kwargs["device_map"] = _device_map(training_args, quantized=True)
    if model_args.attn_implementation:
        kwargs["attn_implementation"] = model_args.attn_implementation
    if model_args.model_revision not in (None, "main") and not Path(path).exists():
        kwargs["revision"] = model_args.model_revision
    model = load_causal_lm(path, **kwargs)
    model.config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def build_peft_config(
    model_args: ModelConfig, model: PreTrainedModel, *, top_layers: int | None = None
) -> PeftConfig | None:
    """TRL's LoRA config from `model_args`, on the last `top_layers` decoder layers if given.

    Args:
        model_args (`trl.ModelConfig`): `use_peft`, `lora_r`, `lora_target_modules`, ...
        model (`PreTrainedModel`): The base model (its `config.num_hidden_layers`).
        top_layers (`int`, *optional*): Adapt only the last N decoder layers (all of them
            when the model has N or fewer).

    Returns:
        `peft.LoraConfig | None`: None when `use_peft` is off.

    Raises:
        `UsageError`: When `top_layers` is below 1.
    """
    from trl import get_peft_config

    config = get_peft_config(model_args)
    if config is None or top_layers is None:
        return config
    if top_layers < 1:
        raise UsageError(f"lora_top_layers must be at least 1, got {top_layers}.")
    depth = model.config.num_hidden_layers
    if top_layers < depth:
        config.layers_to_transform = list(range(depth - top_layers, depth))
    return config


def load_trainable_adapter(model: PreTrainedModel, adapter_path: str | Path) -> PeftModel:
    """Put a saved LoRA adapter on `model` with its weights trainable (GRPO after SFT).

    Args:
        model (`PreTrainedModel`): The base model, quantised or not, as SFT saw it.
        adapter_path (`str | Path`): Folder with `adapter_config.json` (an SFT output dir).

    Returns:
        `peft.PeftModel`: The model with the adapter as its trainable `default` adapter.
    """
    from peft import PeftModel

    from mads_bench.adapters import is_adapter_folder

    if not is_adapter_folder(adapter_path):
        raise FileNotFoundError(
            f"sft_adapter_path {str(adapter_path)!r}: no adapter_config.json; point it at the "
            "output_dir of recipes/sft.py (trained with use_peft: true)."
        )
    with reading_model_folder(adapter_path):
        return PeftModel.from_pretrained(model, str(adapter_path), is_trainable=True)


def merge_adapter(
    base_model: str, adapter_path: str | Path, out_dir: str | Path, *, dtype: str = "float32"
) -> Path:
    """Merge a LoRA adapter into its base and save the result with the tokenizer.

    The merge is `mads_bench.adapters.load_merged_policy`: a QLoRA adapter goes onto its base
    quantised as in training and then dequantised, so the saved model is the trained policy
    (not the adapter on the full-precision base, which is a different model).

    Args:
        base_model (`str`): The base model name/path (as in the adapter's config).
        adapter_path (`str | Path`): The adapter folder.
        out_dir (`str | Path`): Where the merged model and tokenizer are written.
        dtype (`str`): Torch dtype of the merged weights.

    Returns:
        `Path`: `out_dir`.
    """
    from mads_bench.adapters import load_merged_policy

    merged = load_merged_policy(adapter_path, base_model=base_model, dtype=getattr(torch, dtype))
    out = Path(out_dir)
    merged.save_pretrained(out)
    load_tokenizer(base_model).save_pretrained(out)
    return out
