"""Conversation-level GRPO on CPU: does SmolLM2-135M after SFT get more done in live conversations?

Slow (run `python -m benchmarks.run conversation_grpo`). In `MADS_BENCH_CONV_DIR` (default
`outputs/bench_conversation`), reusing whatever an earlier run finished:

1. data: 2 scripted conversations per hand-written scenario, built with the `full` context
   (what a live conversation shows the policy; the demo's `compact` SFT prompts drop earlier
   reasoning, which a rollout cannot, see `recipes/README.md`), home services held out;
2. SFT: `recipes/smollm2-135m/sft/config_demo.yaml` for `MADS_BENCH_SFT_STEPS` (40) updates;
3. conversation GRPO: `recipes/smollm2-135m/grpo/config_conversation.yaml` from that adapter for
   `MADS_BENCH_GRPO_STEPS` (4) steps on training scenarios;
4. `eval online` (scripted user, k=1) of the SFT adapter and of the GRPO adapter on the same
   held-out test scenarios (`MADS_BENCH_EVAL_SCENARIOS`, 8): pass^1 before and after with a 95%
   paired bootstrap CI over scenarios, plus partial credit and malformed steps.

Reported: the task-success reward per GRPO step with its group std (training scenarios), the
other rewards' means, seconds per step, peak RSS, and the held-out figures.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

SLOW = True
"""Skipped by a plain `python -m benchmarks.run`; run it by name."""

CONVERSATION_CONFIG = "recipes/smollm2-135m/grpo/config_conversation.yaml"


def _dataset(out: Path) -> Path:
    from mads_bench.catalog import load_all_scenarios
    from mads_bench.datasets import build_dataset, save_dataset
    from simulation.parallel import SimulationSettings
    from simulation.simulate_run import simulate_run

    dataset = out / "dataset"
    if (dataset / "grpo").is_dir():
        return dataset
    trajectories = out / "trajectories.jsonl"
    simulate_run(load_all_scenarios(), trajectories, settings=SimulationSettings(seed=0),
                 repetitions=2, resume=True, progress=False)  # fmt: skip
    built = build_dataset([trajectories], include_unvalidated=True, seed=0, context="full")
    save_dataset(built, dataset, overwrite=True)
    return dataset


def _recipe(script: str, config: str, dataset: Path, out: Path, extra: list[str]) -> dict:
    from mads_bench.training.pipeline import run_recipe, stage_summary

    if (out / "train_results.json").is_file() and (out / "adapter_config.json").is_file():
        return stage_summary(out, 0.0)
    return run_recipe(script, config, dataset, out, extra_args=[*extra, "--report_to", "none"],
                      echo=False, log=lambda message: print(message, flush=True))  # fmt: skip


def _online(model: Path, scenarios: list, out: Path) -> dict:
    from evaluators.online.run import evaluate_online
    from simulation.backends import get_backend
    from simulation.parallel import SimulationSettings
    from simulation.runner import RunLimits

    if (out / "report.json").is_file():
        return json.loads((out / "report.json").read_text())
    spec = f"transformers:{model}"
    settings = SimulationSettings(0, "scripted", spec, "pre_act", RunLimits(max_turns=6))
    return evaluate_online(scenarios, out, settings=settings, trials=1, concurrency=4,
                           backends={spec: get_backend(spec, batch_size=4)}, resume=True,
                           progress=False, max_failures=None)  # fmt: skip


def run() -> list[dict]:
    from evaluators.online import compare_reports
    from mads_bench.catalog import load_all_scenarios
    from mads_bench.datasets import load_mads_dataset
    from mads_bench.training.pipeline import DEMO_SFT_CONFIG

    out = Path(os.environ.get("MADS_BENCH_CONV_DIR", "outputs/bench_conversation"))
    sft_steps = int(os.environ.get("MADS_BENCH_SFT_STEPS", "40"))
    grpo_steps = int(os.environ.get("MADS_BENCH_GRPO_STEPS", "4"))
    num_eval = int(os.environ.get("MADS_BENCH_EVAL_SCENARIOS", "8"))
    out.mkdir(parents=True, exist_ok=True)
    dataset = _dataset(out)
    sft = _recipe("recipes/sft.py", DEMO_SFT_CONFIG, dataset, out / "sft",
                  ["--max_steps", str(sft_steps)])  # fmt: skip
    extra = ["--max_steps", str(grpo_steps), "--sft_adapter_path", sft["output_dir"]]
    grpo = _recipe("recipes/grpo.py", CONVERSATION_CONFIG, dataset, out / f"grpo_{grpo_steps}",
                   extra)  # fmt: skip
    test = load_mads_dataset(str(dataset), "trajectories", "test")
    test_ids = list(dict.fromkeys(test["scenario_id"]))
    known = {s.id: s for s in load_all_scenarios()}
    chosen = sorted(random.Random(0).sample(test_ids, min(num_eval, len(test_ids))))
    scenarios = [known[s] for s in chosen]
    before = _online(Path(sft["output_dir"]), scenarios, out / "online_sft")
    after = _online(Path(grpo["output_dir"]), scenarios, out / f"online_grpo_{grpo_steps}")
    delta = compare_reports(after, before)
    state = json.loads((Path(grpo["output_dir"]) / "trainer_state.json").read_text())
    log = [row for row in state["log_history"] if "reward" in row]
    curve = [(row["rewards/task_success_reward/mean"], row["rewards/task_success_reward/std"])
             for row in log]  # fmt: skip
    parts = {
        name: [round(row.get(f"rewards/{name}_reward/mean") or 0.0, 3) for row in log]
        for name in ("partial_credit", "gold_steps", "conversation_format", "turn_cost")
    }
    truncated = [row.get("conversation/truncated") for row in log]
    result = {"sft": sft, "grpo": grpo, "curve": curve, "parts": parts, "truncated": truncated,
              "before": before["overall"], "after": after["overall"], "delta": delta,
              "scenarios": chosen}  # fmt: skip
    (out / f"result_{grpo_steps}.json").write_text(json.dumps(result, indent=2, default=str))
    b, a = before["overall"], after["overall"]
    low, high = delta["ci95"]
    note = f"{len(chosen)} held-out scenarios, k=1, scripted user"
    return [
        {"measure": "task-success reward per GRPO step (mean ± group std)", "value": curve[-1][0],
         "unit": "", "note": "; ".join(f"{m:.2f}±{s:.2f}" for m, s in curve)
         + f"; truncated share per step {truncated}; other rewards {parts}"},
        {"measure": "held-out online pass^1: GRPO - SFT", "value": delta["delta"], "unit": "",
         "note": f"{b['success_rate']:.3f} -> {a['success_rate']:.3f}, 95% CI "
         f"[{low:+.3f}, {high:+.3f}]; {note}"},
        {"measure": "held-out partial credit, SFT -> GRPO", "value": a.get("partial_credit"),
         "unit": "", "note": f"from {b.get('partial_credit')}; malformed step rate "
         f"{b.get('malformed_step_rate')} -> {a.get('malformed_step_rate')}"},
        {"measure": "conversation GRPO seconds per step", "value": grpo["seconds_per_step"],
         "unit": "s", "note": f"{grpo_steps} steps, 4 conversations per step; peak RSS "
         f"{grpo['peak_rss_mb']} MB; bf16 {grpo['bf16']}; SFT {sft_steps} steps at "
         f"{sft['seconds_per_step']} s/step"},
    ]  # fmt: skip
