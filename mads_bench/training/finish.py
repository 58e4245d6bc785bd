"""End of a training run: save the adapter and tokenizer, write the card, publish if asked.

Both recipes call `take_hub_settings` before building the trainer (so the `Trainer` never
pushes on its own and the token never lands in `training_args.bin`, W&B or the logs) and
`save_and_publish` after training.

Example:
    >>> class Args:  # doctest: +SKIP
    ...     push_to_hub, hub_token, hub_model_id, hub_private_repo = True, "hf_x", "me/m", None
    >>> take_hub_settings(Args())  # doctest: +SKIP
    HubSettings(push=True, repo_id='me/m', token='hf_x', private=None)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mads_bench.adapters import save_base_quantization
from mads_bench.training.cards import card_hyperparameters, load_eval_results, render_model_card
from mads_bench.training.hub import hub_base_model_id, prepare_upload_folder, push_checkpoint
from mads_bench.training.model_loading import build_quantization_config
from mads_bench.training.tracking import redact_argv

__all__ = ["HubSettings", "save_and_publish", "take_hub_settings"]


@dataclass(repr=False)
class HubSettings:
    """Where to publish at the end of the run; `token` is kept out of every repr and file."""

    push: bool
    repo_id: str | None
    token: str | None
    private: bool | None

    def __repr__(self) -> str:
        token = None if self.token is None else "<redacted>"
        return (
            f"HubSettings(push={self.push}, repo_id={self.repo_id!r}, token={token!r}, "
            f"private={self.private})"
        )


def take_hub_settings(training_args: Any) -> HubSettings:
    """Move the Hub settings out of the training arguments (the Trainer then never pushes).

    Args:
        training_args: `SFTConfig` / `GRPOConfig`; `push_to_hub` is set to False and
            `hub_token` to None on it.

    Returns:
        `HubSettings`: What `save_and_publish` needs; the repo id defaults to the output
        folder's name, like the Trainer's. `sys.argv` is redacted too (W&B records it).
    """
    settings = HubSettings(
        push=bool(training_args.push_to_hub),
        repo_id=training_args.hub_model_id or Path(training_args.output_dir).name,
        token=training_args.hub_token,
        private=training_args.hub_private_repo,
    )
    training_args.push_to_hub = False
    training_args.hub_token = None
    sys.argv[:] = redact_argv(sys.argv, [settings.token])  # W&B records the command line
    return settings


def save_and_publish(
    trainer: Any,
    script_args: Any,
    training_args: Any,
    model_args: Any,
    hub: HubSettings,
    *,
    stage: str,
    dataset_info: dict[str, Any],
    rewards: list[tuple[str, float]] | None = None,
    starts_from: str | None = None,
) -> Path:
    """Save the trained adapter + tokenizer and card to `output_dir`; push on the main process.

    With a quantised base the folder also gets `base_quantization.json`
    (`mads_bench.adapters`), so evaluation and merging rebuild the policy that was trained.

    Args:
        trainer: The finished `SFTTrainer` / `GRPOTrainer`.
        script_args: `MadsScriptArguments` (`eval_results_path`, `push_merged`).
        training_args: The trainer config (`output_dir`, hyperparameters for the card).
        model_args (`trl.ModelConfig`): Base model and QLoRA/LoRA settings.
        hub (`HubSettings`): From `take_hub_settings`.
        stage (`str`): `sft` or `grpo`.
        dataset_info (`dict`): `dataset_record(...)`.
        rewards (`list[tuple[str, float]]`, *optional*): GRPO reward names and weights.
        starts_from (`str`, *optional*): The SFT adapter GRPO continued.

    Returns:
        `Path`: The output folder.
    """
    out = Path(training_args.output_dir)
    trainer.save_model(str(out))
    if not trainer.accelerator.is_main_process:
        return out
    trainer.processing_class.save_pretrained(str(out))
    quantization = build_quantization_config(
        model_args, use_cpu=training_args.use_cpu, bf16=training_args.bf16
    )
    if quantization is not None:  # inference rebuilds the exact QLoRA policy from it
        save_base_quantization(quantization, out)
    card = render_model_card(
        stage=stage,
        base_model=hub_base_model_id(model_args.model_name_or_path),
        dataset=dataset_info,
        hyperparameters=card_hyperparameters(training_args, model_args),
        rewards=rewards,
        eval_results=load_eval_results(script_args.eval_results_path),
        merged=script_args.push_merged,
        starts_from=hub_base_model_id(starts_from) if starts_from else None,
    )
    (out / "README.md").write_text(card)
    if hub.push:
        folder = prepare_upload_folder(
            out, card=card, base_model=model_args.model_name_or_path, merged=script_args.push_merged
        )
        url = push_checkpoint(folder, hub.repo_id, token=hub.token, private=hub.private)
        trainer.accelerator.print(f"pushed {folder} to {url}")
    return out
