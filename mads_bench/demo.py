"""The main job on embedded defaults: simulate → validate → dataset → SFT → GRPO → L-1/L-2.

``mads-bench demo`` (and ``make demo``) runs every stage of the loop on this machine with the
scripted simulator and the CPU demo model (SmolLM2-135M-Instruct), evaluates the base model and
the trained adapter on the same held-out conversations, and writes ``OUT/REPORT.md``. Each stage
says what it does as it goes; stages whose output exists are reused, so an interrupted demo
resumes (delete ``OUT`` to start over).
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

from mads_bench.adapters import is_adapter_folder

L1_FIGURES = (
    ("action_recall_macro", "action-type recall (macro)"),
    ("tool_name_f1", "tool-name F1"),
    ("param_exact_match", "parameter exact match"),
    ("answer_token_f1", "answer token F1"),
    ("semantic_similarity", "semantic similarity"),
)


def _say(message: str) -> None:
    print(f"\n[mads-bench demo] {message}", flush=True)


def eval_rows(dataset: Path, conversations: int, seed: int) -> list[dict[str, Any]]:
    """All test steps of a seeded sample of held-out conversations (whole, for L-2)."""
    from mads_bench.datasets import load_mads_dataset

    rows = load_mads_dataset(str(dataset), "grpo", split="test").to_list()
    ids = sorted({r["conversation_id"] for r in rows})
    chosen = set(random.Random(seed).sample(ids, min(conversations, len(ids))))
    return [r for r in rows if r["conversation_id"] in chosen]


def evaluate_model(
    model: str, rows: list[dict[str, Any]], predictions: Path, max_new_tokens: int
) -> dict[str, Any]:
    """Predict every row with ``transformers:<model>`` and score L-1 and L-2."""
    from evaluators.l1.core import score_l1
    from evaluators.l2.core import score_l2
    from evaluators.predict import predict_steps
    from evaluators.similarity import SentenceSimilarity
    from evaluators.step_predictions import l1_steps, l2_steps, read_rows
    from simulation.backends import get_backend

    backend = get_backend(f"transformers:{model}", batch_size=4)
    predict_steps(rows, backend, predictions, max_new_tokens=max_new_tokens)
    scored = read_rows(predictions)
    l1 = score_l1(l1_steps(scored), similarity=SentenceSimilarity("mpnet")).to_dict()
    l2 = score_l2(l2_steps(scored)).to_dict()
    return {"l1": l1["overall"], "l2": l2["overall"]}


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


def render_report(out: Path, before: dict, after: dict, training: dict, timings: dict) -> str:
    """The markdown report: before/after table, training figures, artefacts."""
    lines = [
        "# mads-bench demo report",
        "",
        f"Held-out test conversations: {before['l2']['n_conversations']} "
        f"({before['l1']['n_steps']} assistant steps), never seen in training.",
        "",
        "| metric | base model | after SFT + GRPO |",
        "| --- | --- | --- |",
    ]
    for key, label in L1_FIGURES:
        lines.append(f"| L-1 {label} | {_fmt(before['l1'][key])} | {_fmt(after['l1'][key])} |")
    valid = {k: 1 - d["l1"]["unreadable_rate"] for k, d in (("b", before), ("a", after))}
    lines.append(f"| L-1 Pre-Act format validity | {_fmt(valid['b'])} | {_fmt(valid['a'])} |")
    lines.append(
        f"| L-2 success rate | {_fmt(before['l2']['success_rate'])} "
        f"| {_fmt(after['l2']['success_rate'])} |"
    )
    sft, grpo = training["sft"], training["grpo"]
    lines += [
        "",
        "| training | steps | s/step | peak RSS (MB) | first → last |",
        "| --- | --- | --- | --- | --- |",
        f"| SFT (QLoRA) | {sft['steps']} | {_fmt(sft['seconds_per_step'])} "
        f"| {_fmt(sft.get('peak_rss_mb'))} | loss {_fmt(sft.get('loss_first'))} → "
        f"{_fmt(sft.get('loss_last'))} |",
        f"| GRPO | {grpo['steps']} | {_fmt(grpo['seconds_per_step'])} "
        f"| {_fmt(grpo.get('peak_rss_mb'))} | reward {_fmt(grpo.get('reward_first'))} → "
        f"{_fmt(grpo.get('reward_last'))} |",
        "",
        "| stage | seconds |",
        "| --- | --- |",
        *[f"| {stage} | {seconds:.0f} |" for stage, seconds in timings.items()],
        "",
        "Artefacts:",
        f"- trajectories: `{out / 'trajectories.jsonl'}` (validated: `accepted.jsonl`, "
        "rejected: `rejected.jsonl`)",
        f"- dataset (trajectories / sft / grpo, card): `{out / 'dataset'}`",
        f"- SFT adapter: `{sft['output_dir']}`; GRPO adapter: `{grpo['output_dir']}`",
        f"- predictions: `{out / 'predictions_base.jsonl'}`, `{out / 'predictions_trained.jsonl'}`",
        "",
        f"{sft['steps']} SFT and {grpo['steps']} GRPO steps on 2 CPU cores run every stage for "
        "real but are too few to move the scores reliably (and a handful of held-out steps",
        "is a noisy measure): the paper's Qwen2.5-7B/32B configs are in `recipes/`; raise "
        "--sft-steps/--grpo-steps/--eval-conversations on a GPU.",
    ]
    return "\n".join(lines) + "\n"


def run_demo(
    out: str | Path = "outputs/demo",
    *,
    model: str = "smollm2-135m",
    conversations_per_scenario: int = 3,
    sft_steps: int = 30,
    grpo_steps: int = 2,
    eval_conversations: int = 2,
    max_new_tokens: int = 192,
    context: str = "compact",
    seed: int = 0,
) -> str:
    """Run the whole loop and return the markdown report (also written to ``OUT/REPORT.md``)."""
    from mads_bench.catalog import load_all_scenarios
    from mads_bench.datasets import build_dataset, save_dataset
    from mads_bench.models import setup_models
    from mads_bench.training.pipeline import run_sft_then_grpo
    from simulation.parallel import SimulationSettings
    from simulation.simulate_run import simulate_run, summary_tables
    from simulation.validator.validate_run import format_summary, validate_run

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}

    def stage(name: str, started: float) -> None:
        timings[name] = time.perf_counter() - started

    started = time.perf_counter()
    _say("offline models (idempotent)")
    setup_models([model, "minilm", "mpnet"])
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

    rows = eval_rows(dataset, eval_conversations, seed)
    started = time.perf_counter()
    _say(f"evaluating the base model on {len(rows)} held-out steps")
    before = evaluate_model(model, rows, out / "predictions_base.jsonl", max_new_tokens)
    stage("evaluate base model", started)

    started = time.perf_counter()
    summary_file = out / "train_summary.json"
    training = _finished_training(summary_file, model, sft_steps, grpo_steps)
    if training is None:
        _say(f"training: SFT {sft_steps} steps, then GRPO {grpo_steps} steps from the SFT adapter")
        (out / "predictions_trained.jsonl").unlink(missing_ok=True)  # of an earlier adapter
        training = run_sft_then_grpo(
            dataset,
            out / "train",
            sft_args=["--model_name_or_path", model, "--max_steps", str(sft_steps)],
            grpo_args=["--model_name_or_path", model, "--max_steps", str(grpo_steps)],
            log=_say,
        )
        training["model"] = model
        summary_file.write_text(json.dumps(training, indent=2))
    else:
        _say(f"training: reusing the finished run in {out / 'train'} ({summary_file.name})")
    stage("SFT + GRPO", started)

    started = time.perf_counter()
    _say("evaluating the trained adapter on the same steps")
    trained = training["grpo"]["output_dir"]
    after = evaluate_model(trained, rows, out / "predictions_trained.jsonl", max_new_tokens)
    stage("evaluate trained model", started)

    report = render_report(out, before, after, training, timings)
    (out / "REPORT.md").write_text(report)
    _say(f"report written to {out / 'REPORT.md'}")
    print(report)
    return report
