"""Run the two training stages end to end: SFT, then GRPO from the SFT adapter.

Each stage is the real recipe under `accelerate launch` in a subprocess (the way a user runs
it), so this is exactly `recipes/sft.py` then `recipes/grpo.py --sft_adapter_path <sft out>`.
The summary holds, per stage, the output folder, steps, seconds per step (the trainer's
`train_runtime / global_step`, model loading excluded), the peak RSS of the training process,
the wall time of the launch, whether it trained in bf16 (`native_bf16`), and for GRPO the mean
total reward of the first and last step.

Example:
    >>> summary = run_sft_then_grpo("outputs/demo/dataset", "outputs/demo")  # doctest: +SKIP
    >>> summary["grpo"]["output_dir"]  # doctest: +SKIP
    'outputs/demo/grpo'
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mads_bench.errors import MadsBenchError


class TrainingRunError(MadsBenchError, RuntimeError):
    """A recipe launch that exited non-zero (its output is in the run's log file)."""


__all__ = ["DEMO_GRPO_CONFIG", "DEMO_SFT_CONFIG", "REPO_ROOT", "run_recipe", "run_sft_then_grpo"]

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The checkout holding `recipes/` and `accelerate_configs/` (editable install)."""

DEMO_SFT_CONFIG = "recipes/smollm2-135m/sft/config_demo.yaml"
DEMO_GRPO_CONFIG = "recipes/smollm2-135m/grpo/config_demo.yaml"
CPU_ACCELERATE_CONFIG = "accelerate_configs/cpu.yaml"


def stage_summary(output_dir: Path, wall_s: float) -> dict[str, Any]:
    """What a finished recipe run wrote (steps, s/step, peak RSS, bf16, reward and loss
    curves), from its `train_results.json` and `trainer_state.json`."""
    metrics = json.loads((output_dir / "train_results.json").read_text())
    state = json.loads((output_dir / "trainer_state.json").read_text())
    steps = int(state["global_step"])
    summary = {
        "output_dir": str(output_dir),
        "steps": steps,
        "seconds_per_step": round(metrics["train_runtime"] / max(steps, 1), 3),
        "peak_rss_mb": metrics.get("peak_rss_mb"),
        "bf16": bool(metrics.get("bf16", False)),
        "wall_s": round(wall_s, 1),
    }
    if "steps_per_sequence" in metrics:  # SFT with merge_step_chains
        summary["steps_per_sequence"] = metrics["steps_per_sequence"]
    rewards = [row["reward"] for row in state["log_history"] if "reward" in row]
    if rewards:
        summary.update(reward_first=rewards[0], reward_last=rewards[-1], rewards=rewards)
    losses = [row["loss"] for row in state["log_history"] if "loss" in row]
    if losses:
        summary.update(loss_first=losses[0], loss_last=losses[-1])
    return summary


def _launch(command: list[str], env: dict[str, str], log_path: Path, echo: bool) -> tuple[int, str]:
    """Run `command`, streaming its output to `log_path` (and stderr); return code and tail."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    tail = bytearray()
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        assert proc.stdout is not None
        while chunk := proc.stdout.read1(65536):
            log_file.write(chunk)
            if echo:
                sys.stderr.write(chunk.decode("utf-8", errors="replace"))
                sys.stderr.flush()
            tail = (tail + chunk)[-4000:]
        code = proc.wait()
    return code, tail.decode("utf-8", errors="replace")


def run_recipe(
    recipe: str,
    config: str,
    dataset: str | Path,
    output_dir: str | Path,
    *,
    extra_args: Sequence[str] = (),
    accelerate_config: str = CPU_ACCELERATE_CONFIG,
    env: dict[str, str] | None = None,
    log: Callable[[str], None] = print,
    echo: bool = True,
) -> dict[str, Any]:
    """Launch one recipe with `accelerate launch` and summarise its run.

    Args:
        recipe (`str`): `recipes/sft.py` or `recipes/grpo.py` (relative to `REPO_ROOT`).
        config (`str`): The YAML config.
        dataset (`str | Path`): `--dataset_name` (a `build-dataset` folder or Hub id).
        output_dir (`str | Path`): `--output_dir`.
        extra_args (`Sequence[str]`): More CLI overrides (`--max_steps 5`, ...).
        accelerate_config (`str`): `--config_file` of `accelerate launch`.
        env (`dict`, *optional*): Environment of the launch (default: this process's).
        log (`Callable`): Progress messages.
        echo (`bool`): Copy the launch's output (trainer progress bar, logged metrics) to
            stderr as it comes; it is always written to `<output_dir>.log`.

    Returns:
        `dict`: The stage summary (see the module docstring).

    Raises:
        `TrainingRunError`: When the launch fails; the message names the log and ends with its
            last output lines.
    """
    output_dir = Path(output_dir).resolve()
    dataset = str(Path(dataset).resolve()) if Path(dataset).exists() else str(dataset)
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--config_file", accelerate_config,
        recipe, "--config", config, "--dataset_name", dataset, "--output_dir", str(output_dir),
        *extra_args,
    ]  # fmt: skip
    log(f"[train] {Path(recipe).stem}: {config} -> {output_dir} (output: {output_dir}.log)")
    start = time.perf_counter()
    code, tail = _launch(command, env or dict(os.environ), Path(f"{output_dir}.log"), echo)
    wall = time.perf_counter() - start
    if code != 0:
        raise TrainingRunError(f"{recipe} failed (exit {code}), log {output_dir}.log:\n{tail}")
    summary = stage_summary(output_dir, wall)
    log(
        f"[train] {Path(recipe).stem}: {summary['steps']} steps, "
        f"{summary['seconds_per_step']} s/step, peak RSS {summary['peak_rss_mb']} MiB"
    )
    return summary


def run_sft_then_grpo(
    dataset: str | Path,
    out_dir: str | Path,
    *,
    sft_config: str = DEMO_SFT_CONFIG,
    grpo_config: str = DEMO_GRPO_CONFIG,
    sft_args: Sequence[str] = (),
    grpo_args: Sequence[str] = (),
    accelerate_config: str = CPU_ACCELERATE_CONFIG,
    env: dict[str, str] | None = None,
    log: Callable[[str], None] = print,
    echo: bool = True,
) -> dict[str, Any]:
    """Train SFT, then GRPO continuing the SFT adapter; defaults: the SmolLM2-135M CPU demo.

    Args:
        dataset (`str | Path`): A `build-dataset` folder (or Hub id) with `sft` and `grpo`.
        out_dir (`str | Path`): Outputs go to `out_dir/sft` and `out_dir/grpo`.
        sft_config (`str`): SFT YAML.
        grpo_config (`str`): GRPO YAML.
        sft_args (`Sequence[str]`): Extra SFT overrides.
        grpo_args (`Sequence[str]`): Extra GRPO overrides.
        accelerate_config (`str`): `accelerate launch --config_file`.
        env (`dict`, *optional*): Environment of both launches.
        log (`Callable`): Progress messages.
        echo (`bool`): Copy each launch's output to stderr as it comes (see `run_recipe`).

    Returns:
        `dict`: `{"sft": summary, "grpo": summary}`.
    """
    out = Path(out_dir)
    sft = run_recipe(
        "recipes/sft.py", sft_config, dataset, out / "sft", extra_args=sft_args,
        accelerate_config=accelerate_config, env=env, log=log, echo=echo,
    )  # fmt: skip
    grpo = run_recipe(
        "recipes/grpo.py", grpo_config, dataset, out / "grpo",
        extra_args=["--sft_adapter_path", sft["output_dir"], *grpo_args],
        accelerate_config=accelerate_config, env=env, log=log, echo=echo,
    )  # fmt: skip
    return {"sft": sft, "grpo": grpo}
