"""Run the two training stages end to end: SFT, then GRPO from the SFT adapter.

Each stage is the real recipe under `accelerate launch` in a subprocess (the way a user runs
it), so this is exactly `recipes/sft.py` then `recipes/grpo.py --sft_adapter_path <sft out>`.
The summary holds, per stage, the output folder, steps, seconds per step (the trainer's
`train_runtime / global_step`, model loading excluded), the peak RSS of the training process,
the wall time of the launch, whether it trained in bf16 (`native_bf16`), and for GRPO the mean
total reward of the first and last step.

Both stages are checked before SFT starts (`mads_bench.training.preflight`): each YAML, the
dataset configs they train on, the models and the accelerate config. A launch that fails
raises `TrainingRunError` with the last lines of its log (`<output_dir>.log`), without the
launcher's own traceback. Relative config paths are read from `REPO_ROOT`, where the recipes
run (the command line resolves its own flags from the working folder first).

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
    """A recipe launch that exited non-zero; the message ends with the last lines of its log.

    Args:
        stage (`str`): `SFT` or `GRPO`.
        code (`int`): The launch's exit status.
        log_path (`Path`): Everything the launch printed.
        tail (`str`): Its last lines, without the launcher's traceback.
    """

    def __init__(self, stage: str, code: int, log_path: Path, tail: str) -> None:
        self.stage, self.code, self.log_path, self.tail = stage, code, log_path, tail
        super().__init__(
            f"{stage} stage failed (exit {code}); last lines of {log_path}:\n{tail}".rstrip()
        )


__all__ = [
    "DEMO_GRPO_CONFIG",
    "DEMO_SFT_CONFIG",
    "REPO_ROOT",
    "TrainingRunError",
    "check_launch",
    "in_repo",
    "log_tail",
    "run_recipe",
    "run_sft_then_grpo",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The checkout holding `recipes/` and `accelerate_configs/` (editable install)."""

DEMO_SFT_CONFIG = "recipes/smollm2-135m/sft/config_demo.yaml"
DEMO_GRPO_CONFIG = "recipes/smollm2-135m/grpo/config_demo.yaml"
CPU_ACCELERATE_CONFIG = "accelerate_configs/cpu.yaml"
TAIL_LINES = 20
"""Lines of a failed launch's log shown in its error."""


def in_repo(path: str | Path) -> Path:
    """`path` as the recipe launch reads it: relative paths from `REPO_ROOT`."""
    return REPO_ROOT / path if not Path(path).is_absolute() else Path(path)


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
    flat = [row["frac_reward_zero_std"] for row in state["log_history"]
            if "frac_reward_zero_std" in row]  # fmt: skip
    if flat:  # GRPO: share of groups whose completions all scored the same (no gradient)
        summary["zero_spread_share"] = round(sum(flat) / len(flat), 4)
    curriculum = output_dir / "curriculum.json"
    if curriculum.is_file():
        summary["curriculum"] = json.loads(curriculum.read_text())
    losses = [row["loss"] for row in state["log_history"] if "loss" in row]
    if losses:
        summary.update(loss_first=losses[0], loss_last=losses[-1])
    return summary


def _launch(command: list[str], env: dict[str, str], log_path: Path, echo: bool) -> int:
    """Run `command` from `REPO_ROOT`, writing its output to `log_path` (and stderr if
    `echo`); return its exit status."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
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
        return proc.wait()


# Frames of the launchers (accelerate, torchrun): their traceback only repeats the exit status.
_LAUNCHER_FRAMES = ("accelerate/commands/", "torch/distributed/")


def log_tail(log_path: Path, lines: int = TAIL_LINES) -> str:
    r"""The last `lines` lines of a launch log, less the launchers' tracebacks.

    A progress bar redraws its line with carriage returns: only its last state is kept.

    Example:
        >>> import tempfile
        >>> log = Path(tempfile.mkdtemp()) / "sft.log"
        >>> _ = log.write_text("step 1\rstep 2\nerror: x\nTraceback (most recent call last):\n"
        ...     '  File "accelerate/commands/launch.py", line 1\nCalledProcessError: 2\n')
        >>> log_tail(log)
        'step 2\nerror: x'
    """
    with log_path.open("rb") as log_file:
        log_file.seek(max(0, log_path.stat().st_size - 65536))
        text = log_file.read().decode("utf-8", errors="replace")
    kept: list[str] = []
    block: list[str] = []  # the traceback being read
    for raw in text.split("\n"):
        line = next((part for part in reversed(raw.split("\r")) if part.strip()), "")
        if block and line[:1].isspace():
            block.append(line)
        elif block:  # the exception line that ends it
            if not any(frame in row for row in block for frame in _LAUNCHER_FRAMES):
                kept += [*block, line]
            block = []
        elif line.startswith("Traceback (most recent call last):"):
            block = [line]
        elif line.strip():
            kept.append(line)
    return "\n".join([*kept, *block][-lines:])


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
    """Check one recipe launch, run it with `accelerate launch` and summarise its run.

    Args:
        recipe (`str`): `recipes/sft.py` or `recipes/grpo.py` (relative to `REPO_ROOT`).
        config (`str`): The YAML config (a relative path is read from `REPO_ROOT`).
        dataset (`str | Path`): `--dataset_name` (a `build-dataset` folder or Hub id).
        output_dir (`str | Path`): `--output_dir`.
        extra_args (`Sequence[str]`): More CLI overrides (`--max_steps 5`, ...).
        accelerate_config (`str`): `--config_file` of `accelerate launch` (relative: from
            `REPO_ROOT`).
        env (`dict`, *optional*): Environment of the launch (default: this process's).
        log (`Callable`): Progress messages.
        echo (`bool`): Copy the launch's output (trainer progress bar, logged metrics) to
            stderr as it comes; it is always written to `<output_dir>.log`.

    Returns:
        `dict`: The stage summary (see the module docstring).

    Raises:
        `UsageError`: The config, dataset or accelerate config cannot be used (nothing ran).
        `TrainingRunError`: When the launch fails; the message names the log and ends with its
            last lines.
    """
    stage = Path(recipe).stem
    config_path, accelerate_path = in_repo(config), in_repo(accelerate_config)
    check_launch(stage, config_path, dataset, extra_args, accelerate_path)
    output_dir = Path(output_dir).resolve()
    dataset = str(Path(dataset).resolve()) if Path(dataset).exists() else str(dataset)
    # -q: a failed recipe ends the launcher without its CalledProcessError traceback
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "-q", "--config_file",
        str(accelerate_path), recipe, "--config", str(config_path), "--dataset_name", dataset,
        "--output_dir", str(output_dir), *extra_args,
    ]  # fmt: skip
    log_path = Path(f"{output_dir}.log")
    log(f"[train] {stage}: {config_path} -> {output_dir} (output: {log_path})")
    start = time.perf_counter()
    code = _launch(command, env or dict(os.environ), log_path, echo)
    wall = time.perf_counter() - start
    if code != 0:
        raise TrainingRunError(stage.upper(), code, log_path, log_tail(log_path))
    summary = stage_summary(output_dir, wall)
    log(
        f"[train] {stage}: {summary['steps']} steps, "
        f"{summary['seconds_per_step']} s/step, peak RSS {summary['peak_rss_mb']} MiB"
    )
    return summary


def check_launch(
    stage: str,
    config: Path,
    dataset: str | Path,
    extra_args: Sequence[str],
    accelerate_config: Path,
) -> None:
    """Check a launch of recipe `stage` (`sft`, `grpo`) before it starts (see `preflight`).

    Raises:
        `UsageError`: Naming the file or setting at fault.
    """
    from mads_bench.training.preflight import check_stage, read_yaml_mapping

    read_yaml_mapping(accelerate_config, "accelerate config")
    if stage in ("sft", "grpo"):
        check_stage(stage, config, dataset, extra_args)


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
        sft_config (`str`): SFT YAML (a relative path is read from `REPO_ROOT`).
        grpo_config (`str`): GRPO YAML (likewise).
        sft_args (`Sequence[str]`): Extra SFT overrides.
        grpo_args (`Sequence[str]`): Extra GRPO overrides.
        accelerate_config (`str`): `accelerate launch --config_file`.
        env (`dict`, *optional*): Environment of both launches.
        log (`Callable`): Progress messages.
        echo (`bool`): Copy each launch's output to stderr as it comes (see `run_recipe`).

    Returns:
        `dict`: `{"sft": summary, "grpo": summary}`.

    Raises:
        `UsageError`: Either stage cannot start (checked before SFT is launched).
        `TrainingRunError`: A launch failed.
    """
    out = Path(out_dir)
    accelerate = in_repo(accelerate_config)
    check_launch("sft", in_repo(sft_config), dataset, sft_args, accelerate)
    check_launch("grpo", in_repo(grpo_config), dataset, grpo_args, accelerate)
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
