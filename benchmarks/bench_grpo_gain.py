"""Does GRPO improve on SFT on held-out data? SFT adapter alone vs SFT adapter + N GRPO steps.

Slow (not part of a plain `make bench`; run `python -m benchmarks.run grpo_gain`). It takes the
demo's outputs (`MADS_BENCH_DEMO_DIR`, default `outputs/demo`: its dataset and SFT adapter,
from a finished `make demo`), runs `recipes/grpo.py` with the demo config for
`MADS_BENCH_GRPO_STEPS` steps (default 12) from that SFT adapter, and predicts the demo's
held-out evaluation steps with both policies. Reported, each with a 95% paired bootstrap CI of
the difference over conversations: the mean total reward on held-out steps (MADS §4.3: action
type + tool call + semantic, the reward GRPO optimises, with MiniLM as in training) and the
L-1 headline figures. The GRPO run's own reward curve (training prompts) is reported too, so
a rise on training prompts can be told apart from a gain on held-out ones.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mads_bench.training.pipeline import DEMO_GRPO_CONFIG, run_recipe

SLOW = True
"""Skipped by a plain `python -m benchmarks.run`; run it by name."""


def _total_rewards(rows: list[dict], predictions: Path) -> dict[tuple, float]:
    from evaluators.step_predictions import read_rows
    from rewards.total import make_mads_total_reward

    reward = make_mads_total_reward()
    scored = read_rows(predictions)
    gold = {k: [r[k] for r in scored] for k in
            ("gold_action_type", "gold_tool_name", "gold_tool_arguments", "gold_say")}  # fmt: skip
    values = reward([r["prediction"] for r in scored], **gold)
    keys = [(r["conversation_id"], r["turn_index"], r["step_index"]) for r in scored]
    return dict(zip(keys, values, strict=True))


def run() -> list[dict]:
    from evaluators.bootstrap import paired_bootstrap
    from mads_bench.demo import compare, eval_rows, evaluate_model

    demo = Path(os.environ.get("MADS_BENCH_DEMO_DIR", "outputs/demo"))
    steps = int(os.environ.get("MADS_BENCH_GRPO_STEPS", "12"))
    sft = demo / "train" / "sft"
    if not (sft / "adapter_config.json").is_file():
        raise SystemExit(f"{sft}: no SFT adapter; run `make demo` (or set MADS_BENCH_DEMO_DIR)")
    out = demo / "grpo_gain"
    grpo = run_recipe(
        "recipes/grpo.py", DEMO_GRPO_CONFIG, demo / "dataset", out / f"grpo_{steps}",
        extra_args=["--max_steps", str(steps), "--sft_adapter_path", str(sft), "--report_to",
                    "none"],
        echo=False, log=lambda message: print(message, flush=True),
    )  # fmt: skip
    rows = eval_rows(demo / "dataset", 8, 0)
    evaluations, rewards = {}, {}
    for name, model in (("sft", sft), ("grpo", Path(grpo["output_dir"]))):
        predictions = out / f"predictions_{name}_{steps}.jsonl"
        evaluations[name] = evaluate_model(str(model), rows, predictions, 192)
        rewards[name] = _total_rewards(rows, predictions)
    units: dict[str, tuple[list, list]] = {}
    for key, value in rewards["sft"].items():
        before, after = units.setdefault(key[0], ([], []))
        before.append(value or 0.0)
        after.append(rewards["grpo"][key] or 0.0)
    reward = paired_bootstrap(list(units.values()), lambda xs: sum(xs) / len(xs) if xs else None)
    figures = {"mean_total_reward": reward.to_dict()} | compare(
        evaluations["sft"], evaluations["grpo"]
    )
    (out / f"result_{steps}.json").write_text(
        json.dumps({"grpo": grpo, "figures": figures}, indent=2)
    )
    note = f"SFT vs + {steps} GRPO steps; {reward.items} held-out steps, {reward.units} conv."
    result = [
        {
            "measure": f"held-out {key}: GRPO - SFT",
            "value": figures[key]["delta"],
            "unit": "",
            "note": f"{figures[key]['before']} -> {figures[key]['after']}, 95% CI "
            f"[{figures[key]['ci_low']}, {figures[key]['ci_high']}]; {note}",
        }
        for key in ("mean_total_reward", "format_validity", "action_recall_macro", "tool_name_f1")
    ]
    curve = grpo.get("rewards") or []
    result.append({
        "measure": "GRPO training reward, first -> mean of last 3 steps",
        "value": sum(curve[-3:]) / max(len(curve[-3:]), 1), "unit": "",
        "note": f"first {curve[0] if curve else None}; {grpo['seconds_per_step']} s/step; "
        f"all: {[round(r, 3) for r in curve]}",
    })  # fmt: skip
    return result
