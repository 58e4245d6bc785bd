"""Helpers for the recipe tests: a tiny hand-built MADS dataset and subprocess launchers.

The dataset has the exact `sft` / `grpo` columns of the contract (SPEC §4.3) and the on-disk
layout of `mads-bench build-dataset` (`DIR/sft`, `DIR/grpo`, each a `DatasetDict` saved with
`save_to_disk`, splits `train` and `test`), with Pre-Act completions rendered by
`mads_bench.pre_act`. Recipes run in subprocesses with `HF_HUB_OFFLINE=1` and, for W&B,
`WANDB_MODE=offline` set in that subprocess's environment only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mads_bench.pre_act import Action, PreActStep, render_step

REPO = Path(__file__).resolve().parents[2]

_SYSTEM = (
    "You are a banking assistant. Tools: get_balance(account_id), "
    "transfer(from_id, to_id, amount). Answer with <think>, <plan>, one <action>."
)
_CASES = [  # (user message, gold step)
    ("What is the balance of ACC-1?", Action.tool("get_balance", {"account_id": "ACC-1"})),
    (
        "Send 20 EUR from ACC-1 to ACC-2.",
        Action.tool("transfer", {"from_id": "ACC-1", "to_id": "ACC-2", "amount": 20}),
    ),
    ("Thanks, that is all.", Action.say("You are welcome, have a good day.")),
    ("Can you check ACC-3?", Action.tool("get_balance", {"account_id": "ACC-3"})),
    ("Hello!", Action.say("Hello, how can I help you with your accounts?")),
    (
        "Move 5 EUR from ACC-3 to ACC-1.",
        Action.tool("transfer", {"from_id": "ACC-3", "to_id": "ACC-1", "amount": 5}),
    ),
]


def _row(index: int, user: str, action: Action) -> dict:
    prompt = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]
    step = PreActStep(think="Decide the next step.", plan="1. act", action=action)
    meta = {
        "scenario_id": f"banking-{index // 2:03d}",
        "domain": "banking",
        "complexity": "normal",
        "turn_index": index % 2,
        "step_index": 0,
    }
    sft = {"prompt": prompt, "completion": [{"role": "assistant", "content": render_step(step)}]}
    grpo = {
        "prompt": prompt,
        "gold_action_type": action.type,
        "gold_tool_name": action.name or "",
        "gold_tool_arguments": json.dumps(action.arguments) if action.type == "tool" else "",
        "gold_say": action.text or "",
        "conversation_id": f"conv-{index // 2}",
    }
    return {"sft": {**sft, **meta}, "grpo": {**grpo, **meta}}


def build_tiny_dataset(root: Path) -> Path:
    """Write the contracted `sft` / `grpo` folders (8 train, 4 test rows each) under `root`."""
    from datasets import Dataset, DatasetDict

    rows = [_row(i, *_CASES[i % len(_CASES)]) for i in range(12)]
    for config in ("sft", "grpo"):
        records = [r[config] for r in rows]
        DatasetDict(
            train=Dataset.from_list(records[:8]), test=Dataset.from_list(records[8:])
        ).save_to_disk(str(root / config))
    (root / "README.md").write_text("---\nconfigs: []\n---\n# tiny test dataset\n")
    return root


def recipe_env(tmp: Path, **extra: str) -> dict[str, str]:
    """Environment of a recipe subprocess: offline Hub, offline W&B under `tmp`, no tokens."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "HF_TOKEN"))}
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        WANDB_MODE="offline",
        WANDB_DIR=str(tmp),
        WANDB_SILENT="true",
        OMP_NUM_THREADS="1",
        PYTHONPATH=str(REPO),
    )
    env.update(extra)
    return env


def run_recipe(args: list[str], tmp: Path, timeout: int = 300, **env: str) -> str:
    """Run a command from the repo root; return its output, failing the test with it on error."""
    proc = subprocess.run(
        args,
        cwd=REPO,
        env=recipe_env(tmp, **env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{output[-6000:]}"
    return output


def accelerate_launch(script: str, config: str, *extra: str) -> list[str]:
    """`accelerate launch --config_file accelerate_configs/cpu.yaml <script> --config <config>`."""
    return [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--config_file",
        "accelerate_configs/cpu.yaml",
        script,
        "--config",
        config,
        *extra,
    ]
