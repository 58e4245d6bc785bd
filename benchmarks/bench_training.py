"""Training cost on CPU: seconds per step and peak RSS of SFT and GRPO with SmolLM2-135M.

Builds a small real dataset (scripted simulation of the banking domain -> `build-dataset
--context compact`, the demo's prompts), then runs the recipes under `accelerate launch` with
the demo configs (`recipes/smollm2-135m/{sft,grpo}/config_demo.yaml`: QLoRA NF4 + double
quantisation, LoRA on the top 8 of 30 layers, no gradient checkpointing, `merge_step_chains`,
`native_bf16`; GRPO rollouts from the merged copy, `rollout_weights: auto`) for a few
steps. Side by side in the same run: GRPO generating from the trained 4-bit model
(`rollout_weights: trained`, TRL's own generation), SFT row by row
(`merge_step_chains false`: one step per update), SFT with LoRA on all 30 layers, SFT and GRPO
in float32 (`MADS_BENCH_BF16=0`, what a CPU without native bf16 gets) and SFT with LoRA on the
unquantised base (`load_in_4bit false`); the ratios say what each setting buys.
Seconds per step are the trainer's `train_runtime / global_step` (model loading excluded);
peak RSS is `ru_maxrss` of the training process; GRPO "as before" is the configuration this
round started from (`rollout_weights: trained`, one completion per micro-batch, LoRA dropout
on); steps per merged sequence is the recipe's `steps_per_sequence` train metric. Needs
`smollm2-135m` set up (`mads-bench models setup smollm2-135m`); takes several minutes on 2
cores.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mads_bench.training.pipeline import (
    DEMO_GRPO_CONFIG,
    DEMO_SFT_CONFIG,
    REPO_ROOT,
    run_recipe,
)

SFT_STEPS = 6
GRPO_STEPS = 8  # a step costs what it samples (20-160 tokens): more steps, steadier ratios


def _build_dataset(root: Path) -> Path:
    cli = [sys.executable, "-m", "mads_bench"]
    trajectories, dataset = root / "trajectories.jsonl", root / "dataset"
    for args in (
        ["simulate", "--domain", "banking", "--out", str(trajectories), "--no-progress"],
        ["build-dataset", "--trajectories", str(trajectories), "--out", str(dataset),
         "--include-unvalidated", "--held-out-domain", "none", "--context", "compact"],
    ):  # fmt: skip
        subprocess.run([*cli, *args], cwd=REPO_ROOT, check=True, capture_output=True)
    return dataset


def run() -> list[dict]:
    common = ["--report_to", "none"]
    with tempfile.TemporaryDirectory(prefix="bench_training_") as tmp:
        dataset = _build_dataset(Path(tmp))
        runs = Path(tmp) / "runs"

        def launch(recipe: str, config: str, name: str, *extra: str, env=None) -> dict:
            return run_recipe(
                recipe, config, dataset, runs / name, extra_args=[*common, *extra], echo=False,
                log=lambda message: print(message, flush=True), env=env,
            )  # fmt: skip

        sft = launch("recipes/sft.py", DEMO_SFT_CONFIG, "sft", "--max_steps", str(SFT_STEPS))
        sft_rows = launch(
            "recipes/sft.py", DEMO_SFT_CONFIG, "sft_row_by_row",
            "--max_steps", str(SFT_STEPS), "--merge_step_chains", "false",
        )  # fmt: skip
        sft_all = launch(
            "recipes/sft.py", DEMO_SFT_CONFIG, "sft_all_layers",
            "--max_steps", str(SFT_STEPS), "--lora_top_layers", "30",
        )  # fmt: skip
        sft_fp32 = launch(
            "recipes/sft.py", DEMO_SFT_CONFIG, "sft_fp32", "--max_steps", str(SFT_STEPS),
            env={**os.environ, "MADS_BENCH_BF16": "0"},
        )  # fmt: skip
        sft_lora = launch(
            "recipes/sft.py", DEMO_SFT_CONFIG, "sft_lora", "--max_steps", str(SFT_STEPS),
            "--load_in_4bit", "false",
        )  # fmt: skip
        grpo = launch(
            "recipes/grpo.py", DEMO_GRPO_CONFIG, "grpo",
            "--max_steps", str(GRPO_STEPS), "--sft_adapter_path", sft["output_dir"],
        )  # fmt: skip
        grpo_trained = launch(
            "recipes/grpo.py", DEMO_GRPO_CONFIG, "grpo_trained_rollouts",
            "--max_steps", str(GRPO_STEPS), "--sft_adapter_path", sft["output_dir"],
            "--rollout_weights", "trained",
        )  # fmt: skip
        grpo_before = launch(  # the code this round started from: TRL's rows, 4-bit rollouts
            "recipes/grpo.py", DEMO_GRPO_CONFIG, "grpo_before",
            "--max_steps", str(GRPO_STEPS), "--sft_adapter_path", sft["output_dir"],
            "--rollout_weights", "trained", "--per_device_train_batch_size", "1",
            "--gradient_accumulation_steps", "2", "--steps_per_generation", "2",
            "--disable_dropout", "false",
        )  # fmt: skip
        grpo_fp32 = launch(
            "recipes/grpo.py", DEMO_GRPO_CONFIG, "grpo_fp32",
            "--max_steps", str(GRPO_STEPS), "--sft_adapter_path", sft["output_dir"],
            env={**os.environ, "MADS_BENCH_BF16": "0"},
        )  # fmt: skip
    per_sequence = sft["steps_per_sequence"]
    sft_note = (
        f"{SFT_STEPS} steps, 1 sequence/step (a turn of compact rows, {per_sequence:.2f} "
        "steps on average), QLoRA NF4"
    )
    rows_note = f"{SFT_STEPS} steps, 1 compact row (~0.9-1.9k tokens)/step, QLoRA NF4"
    grpo_note = f"{GRPO_STEPS} steps, 1 prompt x 2 completions (<=160 tokens)/step, QLoRA NF4"
    rows = []
    for label, summary, note in (
        ("sft (LoRA top 8 layers)", sft, sft_note),
        ("sft row by row (LoRA top 8 layers)", sft_rows, rows_note),
        ("sft (LoRA all 30 layers)", sft_all, sft_note),
        ("sft float32 (LoRA top 8 layers)", sft_fp32, sft_note),
        (
            "sft LoRA on the unquantised base (top 8 layers)",
            sft_lora,
            sft_note.replace("QLoRA NF4", "no quantisation"),
        ),
        ("grpo", grpo, grpo_note),
        ("grpo rollouts from the trained 4-bit model", grpo_trained, grpo_note),
        ("grpo as before (4-bit rollouts, one completion per micro-batch)", grpo_before, grpo_note),
        ("grpo float32", grpo_fp32, grpo_note),
    ):
        rows.append({"measure": f"{label} seconds/step (smollm2-135m)",
                     "value": summary["seconds_per_step"], "unit": "s", "note": note})  # fmt: skip
        rows.append({"measure": f"{label} peak RSS (smollm2-135m)",
                     "value": summary["peak_rss_mb"], "unit": "MiB", "note": note})  # fmt: skip
    rows.append({
        "measure": "sft steps trained per second, merged chains / row by row",
        "value": per_sequence * sft_rows["seconds_per_step"] / sft["seconds_per_step"],
        "unit": "x",
        "note": f"same data, same run; {per_sequence:.2f} steps per merged sequence",
    })  # fmt: skip
    rows.append({
        "measure": "sft step time, all layers / top 8 layers",
        "value": sft_all["seconds_per_step"] / sft["seconds_per_step"], "unit": "x",
        "note": "same rows, same run",
    })  # fmt: skip
    rows.append({
        "measure": "sft step time, float32 / as configured",
        "value": sft_fp32["seconds_per_step"] / sft["seconds_per_step"], "unit": "x",
        "note": f"same rows, same run; configured run in bf16: {sft['bf16']}",
    })  # fmt: skip
    rows.append({
        "measure": "grpo step time, float32 / as configured",
        "value": grpo_fp32["seconds_per_step"] / grpo["seconds_per_step"], "unit": "x",
        "note": f"same prompts, same run; configured run in bf16: {grpo['bf16']}",
    })  # fmt: skip
    rows.append({
        "measure": "grpo step time, rollouts from the trained 4-bit model / from the copy",
        "value": grpo_trained["seconds_per_step"] / grpo["seconds_per_step"], "unit": "x",
        "note": "same prompts, same run; `rollout_weights: trained` (TRL's own generation) vs "
        "the default merged bf16/fp32 copy (mads_bench.training.fast_weights)",
    })  # fmt: skip
    rows.append({
        "measure": "grpo step time, as before / now (speed-up of the demo config)",
        "value": grpo_before["seconds_per_step"] / grpo["seconds_per_step"], "unit": "x",
        "note": "same prompts, same run; before: TRL's generation from the 4-bit policy and "
        "one completion per micro-batch; now: rollouts from the merged copy through the decode "
        "engine (FusedDecoder steps), the group's prompt run once and only the trained layers "
        "on the rollouts' states (SharedPromptGRPOTrainer), dropout off",
    })  # fmt: skip
    rows.append({
        "measure": "sft step time, unquantised LoRA / QLoRA",
        "value": sft_lora["seconds_per_step"] / sft["seconds_per_step"], "unit": "x",
        "note": "same rows, same run",
    })  # fmt: skip
    return rows
