"""W&B for the recipes: one run per training job, with the config and data revision recorded.

`init_wandb` starts the run before the trainer does, so the project, run name and tags come
from the YAML config (`wandb_project`, `run_name`, `wandb_tags`); transformers'
`WandbCallback` then finds the run and logs into it (training arguments, loss, learning rate,
and for GRPO TRL's per-reward `rewards/<name>/mean` every logging step). We add the script
and model arguments and the dataset record (`dataset/revision`, ...). Secrets never reach the
run: `hub_token` is masked by `TrainingArguments.to_dict()`, and every value we add goes
through `redact_secrets`. Offline use: `WANDB_MODE=offline` (set it in your shell or test
environment; the project never sets it globally).

Example:
    >>> redact_secrets({"token": "hf_abcdefghijklmnopqrstuvwxyz0123", "lr": 2e-4})
    {'token': '<redacted>', 'lr': 0.0002}
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any

__all__ = [
    "SECRET_PATTERN",
    "init_wandb",
    "peak_rss_mb",
    "redact_argv",
    "redact_secrets",
    "wants_wandb",
]

SECRET_PATTERN = re.compile(
    r"hf_[A-Za-z0-9]{20,}"  # Hugging Face user/org tokens
    r"|sk-[A-Za-z0-9_\-]{20,}"  # OpenAI-style API keys
    r"|\b[0-9a-f]{40}\b"  # W&B API keys (40 hex characters)
)
"""What `redact_secrets` removes from strings."""

_SECRET_KEYS = re.compile(r"(token|api_key|apikey|password|secret)$", re.IGNORECASE)


def redact_secrets(value: Any, key: str = "") -> Any:
    """Return `value` with secrets replaced by `<redacted>` (dicts and lists recursively).

    A value is a secret when its key ends in `token`, `api_key`, `password` or `secret` (and
    is set), or when a string contains something shaped like a Hub token, an API key or a
    W&B key (`SECRET_PATTERN`).

    Args:
        value (`Any`): A config value, dict, list or string.
        key (`str`): The key `value` was found under.

    Returns:
        `Any`: The same structure, secrets redacted.
    """
    if isinstance(value, dict):
        return {k: redact_secrets(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_secrets(v) for v in value)
    if _SECRET_KEYS.search(key) and value not in (None, "", "<HUB_TOKEN>"):
        return "<redacted>"
    if isinstance(value, str):
        return SECRET_PATTERN.sub("<redacted>", value)
    return value


def redact_argv(argv: list[str], secrets: list[str | None] = ()) -> list[str]:
    """Return `argv` with secret values (and the values of `--*token*` flags) redacted.

    W&B records the command line of a run (`sys.argv`), so a token passed as `--hub_token`
    would land in the run; the recipes redact `sys.argv` once the arguments are parsed.

    Args:
        argv (`list[str]`): A command line.
        secrets (`list[str]`): Exact values to redact wherever they appear.

    Returns:
        `list[str]`: The redacted copy.

    Example:
        >>> redact_argv(["--hub_token", "abc", "--lr=1", "--hub_token=abc"])
        ['--hub_token', '<redacted>', '--lr=1', '--hub_token=<redacted>']
    """
    known = [s for s in secrets if s]
    out: list[str] = []
    for i, arg in enumerate(argv):
        flag, eq, _ = arg.partition("=")
        if eq and flag.startswith("--") and _SECRET_KEYS.search(flag):
            arg = f"{flag}=<redacted>"
        elif i and argv[i - 1].startswith("--") and _SECRET_KEYS.search(argv[i - 1]):
            arg = "<redacted>"
        for secret in known:
            arg = arg.replace(secret, "<redacted>")
        out.append(SECRET_PATTERN.sub("<redacted>", arg))
    return out


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (Linux `ru_maxrss` is in KiB)."""
    import resource
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024, 1)


def wants_wandb(training_args: Any) -> bool:
    """Tell whether the trainer reports to W&B (`report_to` contains `wandb` or `all`)."""
    report_to = training_args.report_to or []
    report_to = [report_to] if isinstance(report_to, str) else report_to
    return "wandb" in report_to or "all" in report_to


def init_wandb(
    script_args: Any,
    training_args: Any,
    model_args: Any,
    dataset_info: dict[str, Any],
    *,
    job_type: str,
) -> Any | None:
    """Start the W&B run on the main process when the trainer reports to W&B.

    Args:
        script_args: The recipe's `MadsScriptArguments` (project, entity, tags).
        training_args: `SFTConfig` / `GRPOConfig` (`report_to`, `run_name`, `output_dir`).
        model_args (`trl.ModelConfig`): Recorded under `model_args`.
        dataset_info (`dict`): `mads_bench.training.data.dataset_record(...)`.
        job_type (`str`): `sft` or `grpo`.

    Returns:
        `wandb.Run | None`: The run, or None when W&B is off or this is not the main process.
    """
    if not wants_wandb(training_args) or not training_args.process_index == 0:
        return None
    import wandb

    config = {
        "script_args": redact_secrets(dataclasses.asdict(script_args)),
        "model_args": redact_secrets(dataclasses.asdict(model_args)),
        "dataset": redact_secrets(dataset_info),
        "dataset/revision": dataset_info.get("revision"),
    }
    return wandb.init(
        project=script_args.wandb_project or os.environ.get("WANDB_PROJECT") or "mads-bench",
        entity=script_args.wandb_entity,
        name=training_args.run_name,
        tags=script_args.wandb_tags,
        job_type=job_type,
        dir=os.environ.get("WANDB_DIR") or training_args.output_dir,
        config=config,
    )
