"""Training cost on CPU: seconds per step and peak RSS of SFT and GRPO with SmolLM2-135M.

Builds a small real dataset (scripted simulation of the banking domain -> `build-dataset`),
then runs `mads_bench.training.pipeline.run_sft_then_grpo` with the demo configs
(`recipes/smollm2-135m/{sft,grpo}/config_demo.yaml`, QLoRA NF4 + double quantisation) for a
handful of steps. Seconds per step are the trainer's `train_runtime / global_step` (model
loading excluded); peak RSS is `ru_maxrss` of the training process. Needs `smollm2-135m` set
up (`mads-bench models setup smollm2-135m`); takes several minutes on 2 cores.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from mads_bench.training.pipeline import REPO_ROOT, run_sft_then_grpo

SFT_STEPS = 3
GRPO_STEPS = 2


def _build_dataset(root: Path) -> Path:
    cli = [sys.executable, "-m", "mads_bench"]
    trajectories, dataset = root / "trajectories.jsonl", root / "dataset"
    for args in (
        ["simulate", "--domain", "banking", "--out", str(trajectories), "--no-progress"],
        ["build-dataset", "--trajectories", str(trajectories), "--out", str(dataset),
         "--include-unvalidated", "--held-out-domain", "none"],
    ):  # fmt: skip
        subprocess.run([*cli, *args], cwd=REPO_ROOT, check=True, capture_output=True)
    return dataset


def run() -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="bench_training_") as tmp:
        dataset = _build_dataset(Path(tmp))
        summary = run_sft_then_grpo(
            dataset,
            Path(tmp) / "runs",
            sft_args=["--max_steps", str(SFT_STEPS), "--report_to", "none"],
            grpo_args=["--max_steps", str(GRPO_STEPS), "--report_to", "none"],
            log=lambda message: print(message, flush=True),
        )
    rows = []
    for stage, note in (
        ("sft", f"{SFT_STEPS} steps, 1 sequence (~3-5k tokens)/step, QLoRA NF4, grad ckpt"),
        ("grpo", f"{GRPO_STEPS} steps, 1 prompt x 2 completions (<=64 tokens)/step, QLoRA NF4"),
    ):
        s = summary[stage]
        rows.append({"measure": f"{stage} seconds/step (smollm2-135m)",
                     "value": s["seconds_per_step"], "unit": "s", "note": note})  # fmt: skip
        rows.append({"measure": f"{stage} peak RSS (smollm2-135m)",
                     "value": s["peak_rss_mb"], "unit": "MiB", "note": note})  # fmt: skip
    return rows
