"""Training that means something, on the CPU demo model (slow: ~42 minutes on 2 cores).

Real data (scripted simulation of every hand-written scenario, `compact` context), the real
recipes under `accelerate launch` with the SmolLM2-135M demo configs, and the L-1 evaluation
of `mads-bench demo` on held-out conversations:

- SFT must raise held-out L-1 action-type recall (macro) and Pre-Act format validity over the
  untrained model on the same steps;
- GRPO from the SFT adapter, on one fixed training prompt revisited at every step (8 sampled
  completions per step, fixed seed), must end with a mean total reward (action + tool +
  semantic) over its last 3 steps above that of its first step, which samples the SFT policy
  before any update, by more than the first step's standard error (its group's reward std
  over sqrt(8)): the prompt is the same throughout, so the rise is the policy's.

Both tests print their figures (`pytest -s` shows them). Last run (2026-12-01, 40 merged SFT
updates, 42 min): both passed. SFT: recall 0.219 -> 0.369 and validity 0.593 -> 0.778 on 27
held-out steps. GRPO: rewards per step [0.756, 1.187, 1.155, 1.204, 1.24, 1.238] (first step
0.756 +- 0.228 -> last 3 steps 1.227; 180 s/step). The earlier design (two prompts, 4
completions, 6 steps) failed and passed by chance: one of its prompts gave every completion 0
reward.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

import pytest

from mads_bench.demo import eval_rows, evaluate_model
from mads_bench.training.pipeline import run_recipe

pytestmark = pytest.mark.slow

EVAL_CONVERSATIONS = 4
SFT_STEPS = 80  # as the demo: 40 no longer gives a reliable gain on the seeded wording
GRPO_STEPS, GRPO_GENERATIONS, GRPO_LATE_STEPS = 6, 8, 3


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mads_bench.cli import main as cli
    from mads_bench.models import setup_models

    setup_models(["smollm2-135m", "mpnet"], progress=False)
    root = tmp_path_factory.mktemp("quality")
    trajectories = root / "trajectories.jsonl"
    assert cli(["simulate", "--out", str(trajectories), "--seed", "0", "--no-progress"]) == 0
    args = ["build-dataset", "--trajectories", str(trajectories), "--out", str(root / "data")]
    assert cli([*args, "--include-unvalidated", "--context", "compact"]) == 0
    return root / "data"


@pytest.fixture(scope="module")
def sft_adapter(dataset: Path) -> Path:
    out = dataset.parent / "sft"
    run_recipe(
        "recipes/sft.py", "recipes/smollm2-135m/sft/config_demo.yaml", dataset, out,
        extra_args=["--report_to", "none", "--max_steps", str(SFT_STEPS)], echo=False,
    )  # fmt: skip
    return out


def test_sft_improves_held_out_action_recall_and_format_validity(dataset, sft_adapter):
    rows = eval_rows(dataset, EVAL_CONVERSATIONS, seed=0)
    root = dataset.parent
    before = evaluate_model("smollm2-135m", rows, root / "pred_base.jsonl", 192).l1
    after = evaluate_model(str(sft_adapter), rows, root / "pred_sft.jsonl", 192).l1
    recall = (before["action_recall_macro"], after["action_recall_macro"])
    validity = (1 - before["unreadable_rate"], 1 - after["unreadable_rate"])
    print(
        f"\n{len(rows)} held-out steps: action-type recall (macro) {recall[0]:.3f} -> "
        f"{recall[1]:.3f}; Pre-Act format validity {validity[0]:.3f} -> {validity[1]:.3f}",
        file=sys.stderr,
    )
    assert recall[1] > recall[0]
    assert validity[1] > validity[0]


@pytest.fixture(scope="module")
def grpo_prompt(dataset: Path) -> Path:
    """A one-row `grpo` dataset: the first `say` step of the training split, revisited.

    A `say` step has a dense reward (action type plus semantic similarity to the gold reply),
    so each group of completions differs in reward and every step has an advantage to learn
    from; the first `tool` step of this data gets 0 for all 8 completions (they loop in the
    arguments), and a group with no spread teaches nothing.
    """
    from datasets import DatasetDict

    from mads_bench.datasets import load_mads_dataset

    train = load_mads_dataset(str(dataset), "grpo", split="train")
    row = train["gold_action_type"].index("say")
    folder = dataset.parent / "grpo_prompt"
    DatasetDict({"train": train.select([row])}).save_to_disk(str(folder / "grpo"))
    return folder


def test_grpo_mean_reward_rises_on_a_revisited_prompt(grpo_prompt, sft_adapter):
    out = grpo_prompt.parent / "grpo"
    summary = run_recipe(
        "recipes/grpo.py", "recipes/smollm2-135m/grpo/config_demo.yaml", grpo_prompt, out,
        extra_args=[
            "--sft_adapter_path", str(sft_adapter), "--report_to", "none",
            "--max_steps", str(GRPO_STEPS), "--num_generations", str(GRPO_GENERATIONS),
            "--gradient_accumulation_steps", str(GRPO_GENERATIONS),
            "--steps_per_generation", str(GRPO_GENERATIONS),
            "--learning_rate", "3e-4", "--lr_scheduler_type", "constant",
        ],
        echo=False,
    )  # fmt: skip
    rewards = summary["rewards"]
    first = rewards[0]  # sampled from the SFT policy, before any GRPO update
    late = statistics.mean(rewards[-GRPO_LATE_STEPS:])
    state = json.loads((out / "trainer_state.json").read_text())
    spread = [entry["reward_std"] for entry in state["log_history"] if "reward_std" in entry]
    noise = spread[0] / math.sqrt(GRPO_GENERATIONS)  # standard error of the first step's mean
    print(
        f"\nGRPO mean total reward per step: {[round(r, 3) for r in rewards]} "
        f"(first step {first:.3f} +- {noise:.3f} -> last {GRPO_LATE_STEPS} steps {late:.3f}, "
        f"{summary['seconds_per_step']} s/step, {state['global_step']} steps)",
        file=sys.stderr,
    )
    assert len(rewards) == GRPO_STEPS
    assert late > first + noise  # a rise beyond the sampling noise of one step
