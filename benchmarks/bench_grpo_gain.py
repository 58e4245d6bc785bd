"""Does GRPO improve on SFT on held-out data? SFT adapter alone vs SFT adapter + GRPO.

Slow (not part of a plain `make bench`; run `python -m benchmarks.run grpo_gain`). It takes the
demo's outputs (`MADS_BENCH_DEMO_DIR`, default `outputs/demo`: its dataset and SFT adapter,
from a finished `make demo`), runs `recipes/grpo.py` with `GAIN_GRPO_CONFIG` (8 completions
per prompt, a curriculum probe of the SFT policy first, the tool name rewarded; its comments say
why) for `MADS_BENCH_GRPO_STEPS` steps (default 15, four groups each) from that SFT adapter
(`MADS_BENCH_GRPO_SEED` overrides the config's seed, to repeat the comparison on another seed),
and predicts held-out evaluation steps with both policies (`MADS_BENCH_EVAL_CONVERSATIONS` test
conversations, default 16, every domain, the held-out home-services domain included).
Reported, each with a 95% paired bootstrap CI of the difference over conversations: the
mean total reward on held-out steps (MADS §4.3: action type + tool call + semantic, with
MiniLM as in training), tool-name F1, parameter exact match, L-2 and the L-1 headline
figures. Also: the GRPO run's reward curve on training prompts, the share of groups with zero
reward spread, what the curriculum probe found, and the wall time of the whole benchmark (the
budget it is meant to fit: 30 minutes on 2 cores).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from mads_bench.manifest import manifest_path
from mads_bench.training.pipeline import run_recipe

GAIN_GRPO_CONFIG = "recipes/smollm2-135m/grpo/config_gain.yaml"

SLOW = True
"""Skipped by a plain `python -m benchmarks.run`; run it by name."""

FIGURES = (
    "mean_total_reward",
    "tool_name_f1",
    "param_exact_match",
    "l2_success_rate",
    "format_validity",
    "action_recall_macro",
)


def total_rewards(predictions: Path) -> dict[tuple, float]:
    """MADS §4.3 total reward of each scored prediction, keyed by (conversation, turn, step)."""
    from evaluators.step_predictions import read_rows
    from rewards.total import make_mads_total_reward

    reward = make_mads_total_reward()
    scored = read_rows(predictions)
    gold = {k: [r[k] for r in scored] for k in
            ("gold_action_type", "gold_tool_name", "gold_tool_arguments", "gold_say")}  # fmt: skip
    values = reward([r["prediction"] for r in scored], **gold)
    keys = [(r["conversation_id"], r["turn_index"], r["step_index"]) for r in scored]
    return dict(zip(keys, values, strict=True))


def reward_gain(before: dict[tuple, float], after: dict[tuple, float], seed: int = 0) -> dict:
    """Paired bootstrap (by conversation) of the mean total reward, after - before."""
    from evaluators.bootstrap import paired_bootstrap

    units: dict[str, tuple[list, list]] = {}
    for key, value in before.items():
        first, second = units.setdefault(key[0], ([], []))
        first.append(value or 0.0)
        second.append(after[key] or 0.0)
    mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
    return paired_bootstrap([units[c] for c in sorted(units)], mean, seed=seed).to_dict()


def run() -> list[dict]:
    from mads_bench.demo import compare, eval_rows, evaluate_model

    started = time.perf_counter()
    demo = Path(os.environ.get("MADS_BENCH_DEMO_DIR", "outputs/demo"))
    steps = int(os.environ.get("MADS_BENCH_GRPO_STEPS", "15"))
    conversations = int(os.environ.get("MADS_BENCH_EVAL_CONVERSATIONS", "16"))
    seed = os.environ.get("MADS_BENCH_GRPO_SEED")
    if seed is not None and not seed.isdigit():
        raise SystemExit(f"MADS_BENCH_GRPO_SEED={seed!r}: expected a non-negative integer")
    run_name = f"{steps}" if seed is None else f"{steps}_seed{int(seed)}"
    sft = demo / "train" / "sft"
    if not (sft / "adapter_config.json").is_file():
        raise SystemExit(f"{sft}: no SFT adapter; run `make demo` (or set MADS_BENCH_DEMO_DIR)")
    out = demo / "grpo_gain"
    grpo = run_recipe(
        "recipes/grpo.py", GAIN_GRPO_CONFIG, demo / "dataset", out / f"grpo_{run_name}",
        extra_args=["--max_steps", str(steps), "--sft_adapter_path", str(sft), "--report_to",
                    "none"] + ([] if seed is None else ["--seed", str(int(seed))]),
        echo=False, log=lambda message: print(message, flush=True),
    )  # fmt: skip
    rows = eval_rows(demo / "dataset", conversations, 0)
    evaluations, rewards = {}, {}
    for name, model in (("sft", sft), ("grpo", Path(grpo["output_dir"]))):
        tag = run_name if name == "grpo" else steps  # the SFT adapter is the same on every seed
        predictions = out / f"predictions_{name}_{tag}_{conversations}.jsonl"
        if name == "grpo":  # a new adapter every run: an earlier run's predictions are stale
            for stale in (predictions, manifest_path(predictions)):
                stale.unlink(missing_ok=True)
        evaluations[name] = evaluate_model(str(model), rows, predictions, 192)
        rewards[name] = total_rewards(predictions)
    figures = {"mean_total_reward": reward_gain(rewards["sft"], rewards["grpo"])} | compare(
        evaluations["sft"], evaluations["grpo"]
    )
    minutes = (time.perf_counter() - started) / 60
    (out / f"result_{run_name}.json").write_text(
        json.dumps({"grpo": grpo, "figures": figures, "minutes": minutes, "seed": seed}, indent=2)
    )
    note = (
        f"SFT vs + {steps} GRPO steps (seed {seed or 'of the config'}); {len(rows)} held-out "
        f"steps of {len(evaluations['sft'].conversations)} conversations"
    )
    result = [
        {
            "measure": f"held-out {key}: GRPO - SFT",
            "value": figures[key]["delta"],
            "unit": "",
            "note": f"{figures[key]['before']} -> {figures[key]['after']}, 95% CI "
            f"[{figures[key]['ci_low']}, {figures[key]['ci_high']}]; {note}",
        }
        for key in FIGURES
    ]
    curve = grpo.get("rewards") or []
    result += [
        {
            "measure": "GRPO training reward, first -> mean of last 5 steps",
            "value": sum(curve[-5:]) / max(len(curve[-5:]), 1), "unit": "",
            "note": f"first {curve[0] if curve else None}; {grpo['seconds_per_step']} s/step; "
            f"all: {[round(r, 3) for r in curve]}",
        },
        {
            "measure": "GRPO groups with zero reward spread (share)",
            "value": grpo.get("zero_spread_share"), "unit": "",
            "note": f"curriculum probe: {grpo.get('curriculum')}",
        },
        {
            "measure": "grpo_gain wall time (GRPO + both evaluations)",
            "value": round(minutes, 1), "unit": "min", "note": "budget: 30 min on 2 cores",
        },
    ]  # fmt: skip
    return result
