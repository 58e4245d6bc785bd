"""Trained LoRA adapters as plain models for inference and publishing: the exact policy, merged.

The recipes save a LoRA adapter (`adapter_config.json` + weights) and, when the base model was
loaded in 4-bit or 8-bit (QLoRA), `base_quantization.json`: the `BitsAndBytesConfig` the
adapter was trained against. A QLoRA policy is *quantised base + adapter*; the full-precision
base is a different model (on SmolLM2-135M the logits differ by up to ~15). So
`load_merged_policy` loads the base quantised exactly as in training, dequantises it (the same
weights the 4-bit kernels compute with), then merges the adapter: the merged model computes
what the trained policy computes, to float rounding, without bitsandbytes at inference time (on
CPU that halves decoding time) and without peft's per-layer overhead.

Example:
    >>> from mads_bench.adapters import load_for_inference
    >>> model = load_for_inference("outputs/demo/train/grpo")  # doctest: +SKIP
    >>> type(model).__name__  # doctest: +SKIP
    'LlamaForCausalLM'
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch
    from transformers import BitsAndBytesConfig, PreTrainedModel

__all__ = [
    "BASE_QUANTIZATION_FILE",
    "is_adapter_folder",
    "load_for_inference",
    "load_merged_policy",
    "save_base_quantization",
]

BASE_QUANTIZATION_FILE = "base_quantization.json"


def is_adapter_folder(path: str | Path) -> bool:
    """Whether `path` is a folder holding a peft adapter (`adapter_config.json`)."""
    return (Path(path) / "adapter_config.json").is_file()


def largest_weight_change(before: str | Path, after: str | Path) -> float:
    """The largest absolute difference between two adapters' saved weights (same layout).

    Raises:
        `ValueError`: When the two adapters do not hold the same tensors.
    """
    from safetensors.torch import load_file

    first = load_file(str(Path(before) / "adapter_model.safetensors"))
    second = load_file(str(Path(after) / "adapter_model.safetensors"))
    if first.keys() != second.keys():
        raise ValueError(f"{before} and {after} hold different adapter tensors")
    return max(
        ((first[k].float() - second[k].float()).abs().max().item() for k in first), default=0.0
    )


def save_base_quantization(config: BitsAndBytesConfig, out_dir: str | Path) -> Path:
    """Record the quantisation of the base an adapter was trained on, next to the adapter."""
    path = Path(out_dir) / BASE_QUANTIZATION_FILE
    path.write_text(config.to_json_string(use_diff=False))
    return path


def load_merged_policy(
    adapter_dir: str | Path,
    *,
    base_model: str | None = None,
    dtype: torch.dtype | None = None,
) -> PreTrainedModel:
    """The adapter merged into its base, quantised then dequantised first if it was trained so.

    Args:
        adapter_dir (`str | Path`): A recipe's output folder (`adapter_config.json`).
        base_model (`str`, *optional*): The base model; default: the adapter config's
            `base_model_name_or_path` (resolved with `mads_bench.models.resolve_model`).
        dtype (`torch.dtype`, *optional*): dtype of the merged weights (default float32).

    Returns:
        `PreTrainedModel`: A plain (unquantised, peft-free) model in eval mode.

    Raises:
        `FileNotFoundError`: When `adapter_dir` holds no adapter.
        `mads_bench.models.ModelLoadError`: When the adapter or its base cannot be read.
    """
    import torch
    from peft import PeftModel
    from transformers import BitsAndBytesConfig

    from mads_bench.models import load_causal_lm, reading_model_folder

    adapter_dir = Path(adapter_dir)
    if not is_adapter_folder(adapter_dir):
        raise FileNotFoundError(f"{adapter_dir}: no adapter_config.json (not a LoRA adapter)")
    quantization = adapter_dir / BASE_QUANTIZATION_FILE
    quantized = quantization.is_file()
    with reading_model_folder(adapter_dir):
        config = json.loads((adapter_dir / "adapter_config.json").read_text())
        settings = json.loads(quantization.read_text()) if quantized else None
    base = base_model or config["base_model_name_or_path"]
    dtype = dtype or torch.float32
    kwargs: dict[str, Any] = {"dtype": dtype}
    if settings is not None:
        kwargs["quantization_config"] = BitsAndBytesConfig.from_dict(settings)
        kwargs["device_map"] = "cpu"  # quantised at load, dequantised right away
    model = load_causal_lm(base, **kwargs)
    if quantized:
        model = model.dequantize().to(dtype)
    with reading_model_folder(adapter_dir):
        adapted = PeftModel.from_pretrained(model, str(adapter_dir))
    return adapted.merge_and_unload().eval()


def load_for_inference(name: str, *, dtype: torch.dtype | None = None) -> PreTrainedModel:
    """A causal LM for generation: a model (name, folder, cached Hub id) or an adapter folder.

    Args:
        name (`str`): Anything `mads_bench.models.resolve_model` takes, or an adapter folder
            written by the recipes (loaded with `load_merged_policy`).
        dtype (`torch.dtype`, *optional*): Weights dtype; the checkpoint's (`auto`) by default,
            float32 for adapters.

    Returns:
        `PreTrainedModel`: The model in eval mode.
    """
    from mads_bench.models import load_causal_lm, resolve_model

    path = resolve_model(name)
    if is_adapter_folder(path):
        return load_merged_policy(path, dtype=dtype)
    return load_causal_lm(path, dtype=dtype if dtype is not None else "auto").eval()
