"""Publish trained checkpoints to the Hugging Face Hub: an adapter or a merged model, with a card.

The recipes do not let the `Trainer` push (its `push_to_hub` would create the repo at start-up
and upload every checkpoint, with TRL's generic card). Instead, at the end of a run,
`prepare_upload_folder` gathers what to publish (the LoRA adapter as saved, or the adapter
merged into the unquantised base), points the adapter's `base_model_name_or_path` at the
base model's Hub id instead of a local cache folder, and writes the card from
`mads_bench.training.cards`; `push_checkpoint` then creates the repo and uploads the folder
through `huggingface_hub.HfApi` in one commit. The token comes from the argument or the usual
`HF_TOKEN` / `huggingface-cli login` and is never written to any file.

Example:
    >>> hub_base_model_id("smollm2-135m")
    'HuggingFaceTB/SmolLM2-135M-Instruct'
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from mads_bench.models import MODEL_SPECS
from mads_bench.training.model_loading import merge_adapter

__all__ = ["UPLOAD_IGNORE", "hub_base_model_id", "prepare_upload_folder", "push_checkpoint"]

UPLOAD_IGNORE = [
    "checkpoint-*/**",  # intermediate trainer checkpoints
    "wandb/**",
    "runs/**",
    "training_args.bin",  # a pickle of the arguments: never published
    "*.lock",
]
"""Files under an upload folder that are never uploaded."""

_COPY_IGNORE = ("checkpoint-*", "hub", "wandb", "runs", "training_args.bin", "*.lock")


def hub_base_model_id(name_or_path: str) -> str:
    """Map a model name as configured to the Hub id a card and adapter config should name.

    Args:
        name_or_path (`str`): A known short name, a Hub id or a local folder.

    Returns:
        `str`: The Hub id of a known model, the Hub id itself, or the folder's name.
    """
    if name_or_path in MODEL_SPECS:
        return MODEL_SPECS[name_or_path].hf_id or name_or_path
    if Path(name_or_path).expanduser().exists():
        return Path(name_or_path).name
    return name_or_path


def prepare_upload_folder(
    output_dir: str | Path,
    *,
    card: str,
    base_model: str,
    merged: bool = False,
    dtype: str = "float32",
) -> Path:
    """Make the folder to upload: the adapter (default) or a merged model, plus `README.md`.

    Args:
        output_dir (`str | Path`): A recipe's output folder (holds `adapter_config.json`).
        card (`str`): The model card text.
        base_model (`str`): The base model as configured (`smollm2-135m`, a Hub id, a folder).
        merged (`bool`): Merge the adapter into its base (`merge_adapter`) instead of copying it.
        dtype (`str`): dtype of merged weights.

    Returns:
        `Path`: `output_dir/hub`, the folder to pass to `push_checkpoint`.
    """
    output_dir = Path(output_dir)
    folder = output_dir / "hub"
    shutil.rmtree(folder, ignore_errors=True)
    if merged:
        merge_adapter(base_model, output_dir, folder, dtype=dtype)
    else:  # a copy, so the local adapter keeps pointing at the local base
        shutil.copytree(output_dir, folder, ignore=shutil.ignore_patterns(*_COPY_IGNORE))
    adapter_config = folder / "adapter_config.json"
    if adapter_config.is_file():
        config = json.loads(adapter_config.read_text())
        config["base_model_name_or_path"] = hub_base_model_id(base_model)
        adapter_config.write_text(json.dumps(config, indent=2) + "\n")
    else:
        config_file = folder / "config.json"
        if config_file.is_file():  # merged weights: do not publish a local cache path
            config = json.loads(config_file.read_text())
            config["_name_or_path"] = hub_base_model_id(base_model)
            config_file.write_text(json.dumps(config, indent=2) + "\n")
    (folder / "README.md").write_text(card)
    return folder


def push_checkpoint(
    folder: str | Path,
    repo_id: str,
    *,
    token: str | None = None,
    private: bool | None = None,
    commit_message: str = "Upload mads-bench checkpoint",
    api: Any = None,
) -> str:
    """Create `repo_id` if needed and upload `folder` in one commit.

    Args:
        folder (`str | Path`): From `prepare_upload_folder`.
        repo_id (`str`): `user/name` on the Hub.
        token (`str`, *optional*): Hub token; None uses `HF_TOKEN` or the saved login.
        private (`bool`, *optional*): Visibility of a newly created repo.
        commit_message (`str`): Commit message.
        api (`huggingface_hub.HfApi`, *optional*): Client to use (tests pass a fake).

    Returns:
        `str`: The commit URL (or the repo URL when the client returns none).
    """
    from huggingface_hub import HfApi

    if not (Path(folder) / "README.md").is_file():
        raise FileNotFoundError(f"{folder}: no README.md; build it with prepare_upload_folder")
    api = api or HfApi()
    repo = api.create_repo(repo_id, token=token, private=private, exist_ok=True, repo_type="model")
    info = api.upload_folder(
        repo_id=repo_id,
        folder_path=str(folder),
        commit_message=commit_message,
        token=token,
        repo_type="model",
        ignore_patterns=UPLOAD_IGNORE,
    )
    return str(getattr(info, "commit_url", None) or repo)
