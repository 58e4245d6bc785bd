"""Model cards for trained checkpoints: base model, data, hyperparameters, rewards, results.

`render_model_card` writes a Hub `README.md` (YAML front matter + markdown) from what a recipe
knows at the end of training. Hyperparameters come from an allow-list of trainer fields
(`card_hyperparameters`), never a dump of the arguments, and the finished text goes through
`redact_secrets`, so tokens cannot end up in a card. L-1/L-2 results are included when an
evaluation JSON is given (`eval_results_path`), otherwise the card says they are not yet there.

Example:
    >>> card = render_model_card(stage="sft", base_model="HuggingFaceTB/SmolLM2-135M-Instruct",
    ...     dataset={"source": "demo", "config": "sft", "revision": "local:abc"},
    ...     hyperparameters={"learning_rate": 2e-4})
    >>> card.splitlines()[0], "learning_rate" in card
    ('---', True)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from mads_bench.errors import UsageError
from mads_bench.training.tracking import redact_secrets

__all__ = ["CARD_HYPERPARAMETERS", "card_hyperparameters", "load_eval_results", "render_model_card"]

CARD_HYPERPARAMETERS = (
    "learning_rate",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "num_train_epochs",
    "max_steps",
    "lr_scheduler_type",
    "warmup_steps",
    "seed",
    "max_length",
    "completion_only_loss",
    "num_generations",
    "generation_batch_size",
    "max_completion_length",
    "temperature",
    "beta",
    "loss_type",
    "scale_rewards",
    "use_vllm",
    "vllm_mode",
    "bf16",
)
"""Trainer fields a card reports (whatever of them the config class has)."""

_MODEL_FIELDS = (
    "load_in_4bit",
    "bnb_4bit_quant_type",
    "use_bnb_nested_quant",
    "lora_r",
    "lora_alpha",
    "lora_dropout",
    "lora_target_modules",
)


def card_hyperparameters(training_args: Any, model_args: Any) -> dict[str, Any]:
    """Pick the reportable hyperparameters from the trainer and model arguments.

    Args:
        training_args: `SFTConfig` / `GRPOConfig`.
        model_args: `trl.ModelConfig` (quantisation and LoRA settings).

    Returns:
        `dict`: Field name to value, only fields from `CARD_HYPERPARAMETERS` and QLoRA/LoRA.
    """
    picked = {
        k: getattr(training_args, k) for k in CARD_HYPERPARAMETERS if hasattr(training_args, k)
    }
    picked.update({k: getattr(model_args, k) for k in _MODEL_FIELDS if hasattr(model_args, k)})
    return {k: v for k, v in picked.items() if v is not None}


def load_eval_results(path: str | Path | None) -> dict[str, Any] | None:
    """Read an L-1/L-2 results JSON (`mads-bench eval ... --out`); None when no path is given.

    Raises:
        `UsageError`: When the file is not a JSON object (the message names the file).
    """
    if not path:
        return None
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise UsageError(f"eval_results_path {str(path)!r}: cannot read JSON: {err}") from None
    if not isinstance(data, dict):
        raise UsageError(f"eval_results_path {str(path)!r}: expected a JSON object")
    return data


def _flat_scores(results: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    rows = []
    for key, value in results.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            rows.extend(_flat_scores(value, f"{name}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            rows.append((name, round(value, 4) if isinstance(value, float) else value))
    return rows


def render_model_card(
    *,
    stage: str,
    base_model: str,
    dataset: dict[str, Any],
    hyperparameters: dict[str, Any],
    rewards: list[tuple[str, float]] | None = None,
    eval_results: dict[str, Any] | None = None,
    merged: bool = False,
    starts_from: str | None = None,
) -> str:
    """Render the `README.md` of a trained adapter or merged checkpoint.

    Args:
        stage (`str`): `sft` or `grpo`.
        base_model (`str`): Hub id (or name) of the base model.
        dataset (`dict`): `dataset_record(...)`: `source`, `config`, `revision`, ...
        hyperparameters (`dict`): From `card_hyperparameters`.
        rewards (`list[tuple[str, float]]`, *optional*): GRPO reward names and weights.
        eval_results (`dict`, *optional*): L-1/L-2 results; numbers are tabulated.
        merged (`bool`): The upload holds full merged weights rather than a LoRA adapter.
        starts_from (`str`, *optional*): The SFT adapter a GRPO run continued.

    Returns:
        `str`: The card, secrets redacted.
    """
    tags = ["mads-bench", "trl", stage, "qlora" if hyperparameters.get("load_in_4bit") else "lora"]
    front = {
        "base_model": base_model,
        "library_name": "transformers" if merged else "peft",
        "tags": tags,
        "pipeline_tag": "text-generation",
    }
    if "/" in str(dataset.get("source", "")):
        front["datasets"] = [dataset["source"]]
    what = "full weights (LoRA merged into the base)" if merged else "a LoRA adapter"
    method = (
        "supervised fine-tuning with completion-only loss on the Pre-Act output"
        if stage == "sft"
        else "GRPO with verifiable rewards (MADS §4.3)"
    )
    lines = [
        "---",
        yaml.safe_dump(front, sort_keys=False).strip(),
        "---",
        "",
        f"# {base_model.split('/')[-1]} · mads-bench {stage.upper()}",
        "",
        f"This repository holds {what} for `{base_model}`, trained by {method} on MADS-Bench "
        "agent steps (Pre-Act format: `<think>`, `<plan>`, one `<action>`).",
        "",
        "## Training data",
        "",
        f"- dataset: `{dataset.get('source')}`, config `{dataset.get('config')}`",
        f"- revision: `{dataset.get('revision')}`",
        f"- training rows used: {dataset.get('num_train_used', 'n/a')}",
        "",
    ]
    if starts_from:
        lines += [f"GRPO continued the SFT adapter `{starts_from}` (same adapter, not merged).", ""]
    lines += ["## Hyperparameters", "", "| name | value |", "| --- | --- |"]
    lines += [f"| {k} | `{v}` |" for k, v in hyperparameters.items()]
    if rewards:
        lines += ["", "## Rewards", "", "| reward | weight |", "| --- | --- |"]
        lines += [f"| `{name}` | {weight:g} |" for name, weight in rewards]
        lines += ["", "A weight of 0 logs a reward without optimising it."]
    lines += ["", "## Evaluation (L-1 / L-2)", ""]
    scores = _flat_scores(eval_results or {})
    if scores:
        lines += ["| metric | value |", "| --- | --- |"] + [f"| {k} | {v} |" for k, v in scores]
    else:
        lines += ["Not evaluated yet: run `mads-bench eval l1` / `eval l2` on the test split."]
    lines += ["", "## Framework", "", "Trained with mads-bench (TRL, peft, bitsandbytes).", ""]
    return redact_secrets("\n".join(lines))
