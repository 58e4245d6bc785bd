"""The main job on embedded defaults: simulate → validate → dataset → SFT → GRPO → L-1/L-2.

``mads-bench demo`` (and ``make demo``) runs every stage of the loop on this machine with the
scripted simulator and the CPU demo model (SmolLM2-135M-Instruct), evaluates the base model and
the trained policy on the same held-out steps (whole test conversations, every domain, the
held-out home-services domain first), and writes ``OUT/REPORT.md`` and ``OUT/REPORT.json``:
each figure before and after with a 95% paired bootstrap CI of the difference (resampling
conversations), the same for the SFT adapter alone against SFT + GRPO (`grpo_vs_sft`: what
GRPO added), the held-out sample, stage seconds, seconds per step, peak RSS and bf16 use of
each training stage. Each stage says what it does as it goes; stages whose output exists are
reused, so an interrupted demo resumes (delete ``OUT`` to start over). Every policy predicts
the held-out steps in float32 (`EVAL_DTYPE`), whatever the CPU.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from evaluators.l1.core import aggregate_l1
from mads_bench.adapters import is_adapter_folder, largest_weight_change
from mads_bench.files import atomic_write_text

FIGURES = (  # (REPORT.json key, label); each is scored per step and resampled by conversation
    ("format_validity", "L-1 Pre-Act format validity"),
    ("action_recall_macro", "L-1 action-type recall (macro)"),
    ("tool_name_f1", "L-1 tool-name F1"),
    ("param_exact_match", "L-1 parameter exact match"),
    ("answer_token_f1", "L-1 answer token F1"),
    ("semantic_similarity", "L-1 semantic similarity"),
    ("l2_success_rate", "L-2 success rate"),
)
HEADLINE = ("format_validity", "action_recall_macro", "tool_name_f1")
"""The figures the demo's training is chosen to move (issue: CIs that exclude zero)."""
GRPO_FIGURES = ("format_validity", "action_recall_macro", "tool_name_f1", "param_exact_match",
                "semantic_similarity", "l2_success_rate")  # fmt: skip
"""Figures of the `GRPO vs SFT-only` comparison (what GRPO adds to its SFT adapter)."""
EVAL_DTYPE = "float32"
"""Precision of every held-out prediction (training and GRPO's rollouts use bf16 where native).
In bf16 a change of one bf16 unit in the adapter flips a third of the greedy steps of the
135M demo policy at random: the demo's two GRPO steps (no LoRA weight moved by more than
2.3e-5) changed 15 of 45 held-out steps in bf16 and 1 in float32, and the same SFT adapter
predicts 24 of those 45 steps differently in the two (recipes/README.md, E23). Comparisons
of nearby policies, and figures that agree between CPUs with and without bf16, need float32."""


def _say(message: str) -> None:
    print(f"\n[mads-bench demo] {message}", flush=True)


def eval_rows(
    dataset: Path, conversations: int, seed: int, *, min_steps: int = 40, skip: int = 0
) -> list[dict[str, Any]]:
    """All test steps of a seeded sample of held-out conversations (whole, for L-2).

    Domains take turns (each shuffled with `seed`, the largest first: the held-out domain
    has the most test conversations), so a sample of 6 or more spans every domain. Once
    `conversations` are taken, more are added until the sample holds `min_steps` steps.
    ``skip`` passes over the first conversations of that order: a sample that shares none
    with ``eval_rows(dataset, skip, seed, min_steps=0)``.
    """
    from mads_bench.datasets import load_mads_dataset

    rows = load_mads_dataset(str(dataset), "grpo", split="test").to_list()
    by_domain: dict[str, list[str]] = defaultdict(list)
    steps: Counter[str] = Counter()
    for row in rows:
        if row["conversation_id"] not in steps:
            by_domain[row["domain"]].append(row["conversation_id"])
        steps[row["conversation_id"]] += 1
    rng = random.Random(seed)
    queues = []
    for domain in sorted(by_domain, key=lambda d: (-len(by_domain[d]), d)):
        ids = sorted(by_domain[domain])
        rng.shuffle(ids)
        queues.append(ids)
    order = [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]
    chosen: set[str] = set()
    for cid in order[skip:]:
        if len(chosen) >= conversations and sum(steps[c] for c in chosen) >= min_steps:
            break
        chosen.add(cid)
    return [r for r in rows if r["conversation_id"] in chosen]


@dataclass
class Evaluation:
    """One model's predictions on the evaluation rows, scored: per step and per conversation."""

    l1: dict[str, Any]
    l2: dict[str, Any]
    steps: dict[tuple, Any]  # (conversation, turn, step) -> evaluators.l1.core.StepScore
    conversations: dict[str, float]  # conversation -> L-2 score


@cache
def _similarity() -> Any:
    """The L-1 sentence encoder (MPNet), loaded once for every evaluation of a run."""
    from mads_bench.embedding import SentenceEncoder

    return SentenceEncoder("mpnet")


def evaluate_model(
    model: str,
    rows: list[dict[str, Any]],
    predictions: Path,
    max_new_tokens: int,
    *,
    temperature: float = 0.0,
    seed: int = 0,
    constrain_tool_names: bool = False,
    dtype: str = EVAL_DTYPE,
    drafts: Path | None = None,
) -> Evaluation:
    """Predict every row with `transformers:<model>` (batched) and score.

    Greedy by default; with a `temperature` each step is one sample drawn from `seed`; with
    `constrain_tool_names` a tool step can only name a tool its prompt lists. `dtype`: the
    backend's (`EVAL_DTYPE` by default; `auto` is bf16 where native). `drafts`: a nearby
    policy's predictions of the same rows (`evaluators.predict.predict_steps`: faster where
    this model repeats them, the same predictions)."""
    from evaluators.l1.core import score_l1
    from evaluators.l2.core import score_l2
    from evaluators.predict import predict_steps
    from evaluators.step_predictions import l1_steps, l2_steps, read_rows
    from simulation.backends import get_backend

    backend = get_backend(
        f"transformers:{model}",
        batch_size=8,
        constrain_tool_names=constrain_tool_names,
        dtype=dtype,
    )
    predict_steps(
        rows, backend, predictions, max_new_tokens=max_new_tokens, temperature=temperature,
        seed=seed, drafts=drafts,
    )  # fmt: skip
    scored = read_rows(predictions)
    l1 = score_l1(l1_steps(scored), similarity=_similarity())
    l2 = score_l2(l2_steps(scored))
    keys = [(r["conversation_id"], r["turn_index"], r["step_index"]) for r in scored]
    return Evaluation(
        l1=l1.overall,
        l2=l2.overall,
        steps=dict(zip(keys, l1.steps, strict=True)),
        conversations={c.conversation_id: c.score for c in l2.conversations},
    )


def _in_eval_precision(predictions: Path) -> Path:
    """``predictions``, removed first (with its manifest) where an earlier demo predicted them
    in another precision: the demo resumes its own predictions, not those of another setting."""
    from mads_bench.manifest import manifest_path, read_manifest

    manifest = read_manifest(predictions)
    if manifest is not None and manifest["settings"].get("dtype") != EVAL_DTYPE:
        predictions.unlink(missing_ok=True)
        manifest_path(predictions).unlink()
    return predictions


def changed_steps(first: Path, second: Path) -> int:
    """How many steps two predictions files of the same rows predict differently."""
    from evaluators.predict import read_predictions

    one, other = read_predictions(first), read_predictions(second)
    return sum(one[key] != other.get(key) for key in one)


def _format_validity(scores: list) -> float | None:
    return None if not scores else 1 - aggregate_l1(scores)["unreadable_rate"]


def compare(before: Evaluation, after: Evaluation, *, seed: int = 0) -> dict[str, dict]:
    """Each figure before and after, with a 95% paired bootstrap CI of the difference.

    Resampling unit: the held-out conversation (all its steps), 2,000 resamples.
    """
    from evaluators.bootstrap import paired_bootstrap

    step_units = defaultdict(lambda: ([], []))
    for key, score in before.steps.items():
        step_units[key[0]][0].append(score)
        step_units[key[0]][1].append(after.steps[key])
    units = [step_units[c] for c in sorted(step_units)]
    figures = {}
    for key, _ in FIGURES:
        if key == "l2_success_rate":
            shared = sorted(before.conversations)
            pairs = [([before.conversations[c]], [after.conversations[c]]) for c in shared]
            result = paired_bootstrap(pairs, lambda xs: sum(xs) / len(xs), seed=seed)
        elif key == "format_validity":
            result = paired_bootstrap(units, _format_validity, seed=seed)
        else:
            result = paired_bootstrap(
                units, lambda xs, k=key: aggregate_l1(xs)[k] if xs else None, seed=seed
            )
        figures[key] = result.to_dict()
    return figures


def _finished_training(
    summary_file: Path, model: str, sft_steps: int, grpo_steps: int
) -> dict | None:
    """The summary of an earlier run of the same model and step counts, if its adapter exists."""
    if not summary_file.is_file():
        return None
    summary = json.loads(summary_file.read_text())
    same = (summary.get("model"), summary["sft"]["steps"], summary["grpo"]["steps"]) == (
        model,
        sft_steps,
        grpo_steps,
    )
    return summary if same and is_adapter_folder(summary["grpo"]["output_dir"]) else None


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _mb(value: Any) -> str:
    return "n/a" if value is None else f"{value:.0f}"


def _figure_row(label: str, f: dict[str, Any]) -> str:
    ci = "n/a" if f["ci_low"] is None else f"[{_fmt(f['ci_low'])}, {_fmt(f['ci_high'])}]"
    mark = " *" if f["excludes_zero"] else ""
    return (
        f"| {label} | {_fmt(f['before'])} | {_fmt(f['after'])} | {_fmt(f['delta'])}{mark} | {ci} |"
    )


def render_report(out: Path, result: dict[str, Any]) -> str:
    """The markdown report of `REPORT.json`'s content: figures with CIs, training, stages."""
    held = result["held_out"]
    domains = ", ".join(f"{d} {n}" for d, n in sorted(held["domains"].items()))
    lines = [
        "# mads-bench demo report",
        "",
        f"Held-out test conversations: {held['conversations']} ({held['steps']} assistant "
        f"steps; by domain: {domains}), never seen in training. Compute: training "
        f"{'bf16 (native on this CPU)' if result['bf16'] else 'float32'}, held-out predictions "
        f"{EVAL_DTYPE}; CPU: {result['cpu']}.",
        "",
        "| metric | base model | after SFT + GRPO | difference | 95% CI of the difference |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [_figure_row(label, result["figures"][key]) for key, label in FIGURES]
    gained = [label for key, label in FIGURES if key in HEADLINE
              and result["figures"][key]["excludes_zero"]
              and result["figures"][key]["delta"] > 0]  # fmt: skip
    lines += [
        "",
        "`*`: the CI excludes 0. Paired bootstrap over conversations (2,000 resamples): each "
        "resample scores both models on the same conversations, all their steps.",
        "",
        f"**{'The trained agent is better' if len(gained) == len(HEADLINE) else 'No reliable gain'}"
        f"**: {len(gained)} of the {len(HEADLINE)} headline figures (format validity, "
        "action-type recall, tool-name F1) gained with a CI above 0.",
    ]
    if result.get("grpo_vs_sft"):
        labels = dict(FIGURES)
        lines += [
            "",
            "GRPO vs SFT-only (the SFT adapter alone, evaluated on the same steps: what GRPO "
            "added):",
            "",
            "| metric | SFT only | SFT + GRPO | difference | 95% CI of the difference |",
            "| --- | --- | --- | --- | --- |",
            *[_figure_row(labels[key], result["grpo_vs_sft"][key]) for key in GRPO_FIGURES],
        ]
        moved = result.get("grpo_moved")
        if moved:
            lines += [
                "",
                f"GRPO changed {moved['steps_changed']} of the {result['held_out']['steps']} "
                "predicted steps; its largest change to an adapter weight was "
                f"{moved['largest_weight_change']:.2g}. The predictions are made in "
                f"{EVAL_DTYPE}, so a changed step is the weights' doing: in bf16, rounding "
                "alone flips a third of the greedy steps of two such nearby adapters "
                "(recipes/README.md, E23).",
            ]
    sft, grpo = result["training"]["sft"], result["training"]["grpo"]
    lines += [
        "",
        "| training | steps | s/step | peak RSS (MB) | bf16 | first → last |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| SFT (QLoRA) | {sft['steps']} | {_fmt(sft['seconds_per_step'])} "
        f"| {_mb(sft.get('peak_rss_mb'))} | {sft.get('bf16', False)} "
        f"| loss {_fmt(sft.get('loss_first'))} → {_fmt(sft.get('loss_last'))} |",
        f"| GRPO | {grpo['steps']} | {_fmt(grpo['seconds_per_step'])} "
        f"| {_mb(grpo.get('peak_rss_mb'))} | {grpo.get('bf16', False)} "
        f"| reward {_fmt(grpo.get('reward_first'))} → {_fmt(grpo.get('reward_last'))} |",
        "",
        "| stage | seconds |",
        "| --- | --- |",
        *[f"| {stage} | {seconds:.0f} |" for stage, seconds in result["stages_s"].items()],
        "",
        "Artefacts:",
        f"- trajectories: `{out / 'trajectories.jsonl'}` (validated: `accepted.jsonl`, "
        "rejected: `rejected.jsonl`)",
        f"- dataset (trajectories / sft / grpo, card): `{out / 'dataset'}`",
        f"- SFT adapter: `{sft['output_dir']}`; GRPO adapter: `{grpo['output_dir']}`",
        f"- predictions: `{out / 'predictions_base.jsonl'}`, `{out / 'predictions_sft.jsonl'}`, "
        f"`{out / 'predictions_trained.jsonl'}`",
        f"- this report as JSON: `{out / 'REPORT.json'}`",
        "",
        "The CPU demo trains SmolLM2-135M for minutes; the paper's Qwen2.5-7B/32B configs are in "
        "`recipes/`. Raise --sft-steps/--grpo-steps/--eval-conversations on a GPU.",
    ]
    return "\n".join(lines) + "\n"


def run_demo(
    out: str | Path = "outputs/demo",
    *,
    model: str = "smollm2-135m",
    conversations_per_scenario: int = 3,
    sft_steps: int = 80,
    grpo_steps: int = 2,
    eval_conversations: int = 6,
    min_eval_steps: int = 40,
    max_new_tokens: int = 192,
    context: str = "compact",
    seed: int = 0,
    minutes: float | None = None,
) -> str:
    """Run the whole loop; write `OUT/REPORT.md` and `OUT/REPORT.json`; return the markdown.

    Before anything runs, it times three probes on this CPU and says how long the demo will
    take (`mads_bench.demo_budget`); with ``minutes``, the SFT and GRPO step counts are
    scaled to fill that budget instead (`fit_steps`; too small a budget is a `UsageError`).
    """
    from mads_bench.catalog import load_all_scenarios
    from mads_bench.datasets import build_dataset, save_dataset
    from mads_bench.demo_budget import REFERENCE, DemoPlan, estimate, fit_steps, measure_rates
    from mads_bench.models import setup_models
    from mads_bench.precision import describe_cpu, native_bf16
    from mads_bench.training.pipeline import run_sft_then_grpo
    from simulation.parallel import SimulationSettings
    from simulation.simulate_run import simulate_run, summary_tables
    from simulation.validator.validate_run import format_summary, validate_run

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}

    def stage(name: str, started: float) -> None:
        timings[name] = round(time.perf_counter() - started, 1)

    started = time.perf_counter()
    _say("offline models (idempotent)")
    setup_models([model, "minilm", "mpnet"])
    rates = measure_rates(model)
    ratios = rates.scaled_to(REFERENCE.rates)
    plan = DemoPlan(sft_steps, grpo_steps, min_eval_steps)
    if minutes is not None:
        plan = fit_steps(minutes, plan, ratios)
        sft_steps, grpo_steps = plan.sft_steps, plan.grpo_steps
    planned = estimate(plan, ratios)
    _say(
        f"{describe_cpu()}: training {ratios.update:.2f}x, generation {ratios.generation:.2f}x "
        f"and float32 evaluation {ratios.evaluation:.2f}x the time of the reference CPU "
        f"({REFERENCE.cpu}), measured; SFT {sft_steps} steps, "
        f"GRPO {grpo_steps} steps: {planned.describe()}"
    )
    _say(f"simulating {conversations_per_scenario} conversations per hand-written scenario")
    trajectories = out / "trajectories.jsonl"
    simulated = simulate_run(
        load_all_scenarios(),
        trajectories,
        settings=SimulationSettings(seed=seed),
        repetitions=conversations_per_scenario,
        resume=True,
        progress=False,
    )
    print(f"{simulated.written} conversations simulated ({simulated.skipped} already there)")
    print(summary_tables(simulated.trajectories))
    _say("validating the trajectories")
    summary = validate_run(
        [trajectories], out / "accepted.jsonl", out / "rejected.jsonl", resume=True
    )
    print(format_summary(summary))
    _say(f"building the dataset ({context} context, home services held out for test)")
    dataset = out / "dataset"
    built = build_dataset([out / "accepted.jsonl"], seed=seed, context=context)
    save_dataset(built, dataset, overwrite=True)
    print(built.report.selection.summary())
    stage("simulate + validate + dataset", started)

    rows = eval_rows(dataset, eval_conversations, seed, min_steps=min_eval_steps)
    started = time.perf_counter()
    _say(f"evaluating the base model on {len(rows)} held-out steps")
    before = evaluate_model(
        model, rows, _in_eval_precision(out / "predictions_base.jsonl"), max_new_tokens
    )
    stage("evaluate base model", started)

    started = time.perf_counter()
    summary_file = out / "train_summary.json"
    training = _finished_training(summary_file, model, sft_steps, grpo_steps)
    if training is None:
        _say(f"training: SFT {sft_steps} steps, then GRPO {grpo_steps} steps from the SFT adapter")
        for name in ("sft", "trained"):  # predictions of an earlier run's adapters
            (out / f"predictions_{name}.jsonl").unlink(missing_ok=True)
        training = run_sft_then_grpo(
            dataset,
            out / "train",
            sft_args=["--model_name_or_path", model, "--max_steps", str(sft_steps)],
            grpo_args=["--model_name_or_path", model, "--max_steps", str(grpo_steps)],
            log=_say,
        )
        training["model"] = model
        atomic_write_text(summary_file, json.dumps(training, indent=2))
    else:
        _say(f"training: reusing the finished run in {out / 'train'} ({summary_file.name})")
    stage("SFT + GRPO", started)

    started = time.perf_counter()
    _say("evaluating the SFT adapter alone on the same steps (what GRPO starts from)")
    sft_only = evaluate_model(
        training["sft"]["output_dir"], rows, _in_eval_precision(out / "predictions_sft.jsonl"),
        max_new_tokens,
    )  # fmt: skip
    stage("evaluate SFT adapter", started)

    started = time.perf_counter()
    _say("evaluating the trained adapter (SFT + GRPO) on the same steps")
    trained = training["grpo"]["output_dir"]
    after = evaluate_model(  # GRPO moves the SFT adapter little: its predictions are drafts
        trained, rows, _in_eval_precision(out / "predictions_trained.jsonl"), max_new_tokens,
        drafts=out / "predictions_sft.jsonl",
    )  # fmt: skip
    stage("evaluate trained model", started)

    result = {
        "model": model,
        "figures": compare(before, after, seed=seed),
        "grpo_vs_sft": compare(sft_only, after, seed=seed),
        "grpo_moved": {
            "steps_changed": changed_steps(
                out / "predictions_sft.jsonl", out / "predictions_trained.jsonl"
            ),
            "largest_weight_change": largest_weight_change(training["sft"]["output_dir"], trained),
        },
        "held_out": {
            "conversations": len(before.conversations),
            "steps": len(rows),
            "domains": dict(Counter(r["domain"] for r in rows)),
        },
        "bf16": native_bf16("cpu"),
        "cpu": describe_cpu(),
        "stages_s": timings,
        "estimate": {
            "total_s": round(planned.total_s, 1),
            "probe_s": {"forward_backward": rates.forward_backward_s, "decode": rates.decode_s},
            "minutes_budget": minutes,
        },
        "training": {
            name: {k: v for k, v in training[name].items() if k != "rewards"}
            for name in ("sft", "grpo")
        },
    }
    report = render_report(out, result)
    atomic_write_text(out / "REPORT.json", json.dumps(result, indent=2) + "\n")
    atomic_write_text(out / "REPORT.md", report)
    _say(f"report written to {out / 'REPORT.md'} (and REPORT.json)")
    print(report)
    return report
