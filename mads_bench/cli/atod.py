"""``mads-bench atod``: track goals in ATOD dialogues and score predictions against gold.

Examples::

    mads-bench atod track --dialogues ../shared/data/atod_sample/medium_sample.json \\
        --out predictions.jsonl
    mads-bench atod score --pred predictions.jsonl \\
        --gold ../shared/data/atod_sample/medium_sample.json --mode strict --json
    mads-bench atod cv --dialogues ../shared/data/atod_dev/medium_dev.json --folds 5
    mads-bench atod fit --dialogues ../shared/data/atod_dev/medium_dev*.json
    mads-bench atod score --pred val.jsonl --gold ../shared/data/atod_dev/medium_dev*.json \
        --part validation

`track` reads published dialogues or turns-only ones (`{dialogue_id, turns: [{speaker,
utterance}]}`); failures are raised as `MadsBenchError`s, which `main` prints as one line.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mads_bench.cli import atod_fit, atod_generate
from mads_bench.cli.args import positive_int, unit_interval
from mads_bench.cli.output import print_json
from mads_bench.errors import UsageError
from mads_bench.files import check_outputs


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("atod", help="ATOD goal tracking and lifecycle metrics.")
    sub = parser.add_subparsers(dest="atod_command", metavar="ACTION", required=True)

    score = sub.add_parser(
        "score",
        help="Score ATOD-format predictions against gold dialogues (markdown or JSON).",
    )
    score.add_argument("--pred", type=Path, required=True, help="Predictions (JSON or JSONL).")
    score.add_argument(
        "--gold", type=Path, nargs="+", required=True, help="Gold dialogues (JSON or JSONL)."
    )
    atod_fit.part_flag(score)
    score.add_argument(
        "--bootstrap",
        type=positive_int,
        default=1000,
        help="Resamples of the dialogues for the 95%% confidence intervals (default 1000).",
    )
    score.add_argument("--seed", type=int, default=0, help="Seed of the bootstrap (0).")
    score.add_argument(
        "--mode",
        choices=["both", "strict", "release"],
        default="both",
        help="strict: one-to-one matching, exact statuses (our headline); release: lenient like "
        "the ATOD release (comparable with the paper); both (default): strict, with the "
        "release figures side by side (JSON: the strict report with a `release` key).",
    )
    score.add_argument(
        "--threshold",
        type=unit_interval,
        default=0.40,
        help="Goal-matching cosine in [0, 1] (default 0.40).",
    )
    score.add_argument("--json", action="store_true", help="Print JSON instead of markdown.")
    score.add_argument(
        "--per-dialogue", action="store_true", help="Keep per-dialogue rows in the JSON."
    )
    score.add_argument(
        "--judge", help="Judge backend spec (simulation backend registry, e.g. openai:M@URL)."
    )
    score.add_argument(
        "--judge-metrics",
        action="store_true",
        help="Also score MRA, PE, turn relevance and coherence with --judge.",
    )
    score.set_defaults(handler=run_score)

    track = sub.add_parser(
        "track",
        help="Track goals turn by turn (reads only speaker and utterance) and write predictions.",
    )
    track.add_argument(
        "--dialogues",
        "--input",
        dest="dialogues",
        type=Path,
        nargs="+",
        required=True,
        help="ATOD dialogues (JSON or JSONL, one file or more): published ones or turns-only "
        "({dialogue_id, turns: [{speaker, utterance}]}); gold annotations are ignored.",
    )
    atod_fit.part_flag(track)
    track.add_argument("--out", type=Path, required=True, help="Output file (.jsonl or .json).")
    track.add_argument("--limit", type=positive_int, help="Only the first N dialogues.")
    track.add_argument(
        "--method",
        choices=["memory", "prompt-only", "rag"],
        default="memory",
        help="memory: the symbolic + vector tracker (default); prompt-only / rag: baselines.",
    )
    track.add_argument(
        "--judge", help="Judge backend spec (optional for memory, required for the baselines)."
    )
    track.add_argument(
        "--top-k", type=positive_int, default=5, help="Past turns retrieved by rag (default 5)."
    )
    _encoder_flags(track)
    track.set_defaults(handler=run_track)

    cv = sub.add_parser(
        "cv",
        help="K-fold cross-validation of the memory tracker's thresholds on gold dialogues "
        "(strict and release figures of the held-out folds).",
    )
    cv.add_argument("--dialogues", type=Path, required=True, help="Gold ATOD dialogues.")
    cv.add_argument("--folds", type=positive_int, default=5, help="Folds (5).")
    cv.add_argument("--seed", type=int, default=0, help="Seed of the fold shuffle (0).")
    cv.add_argument("--out", type=Path, help="Also write the held-out predictions (.jsonl).")
    cv.add_argument("--json", action="store_true", help="Print JSON instead of markdown.")
    _encoder_flags(cv)
    cv.set_defaults(handler=run_cv)

    atod_fit.register(sub)
    atod_generate.register(sub)


def _encoder_flags(parser: argparse.ArgumentParser) -> None:
    from evaluators.atod.tracker import DEFAULT_ENCODERS

    parser.add_argument(
        "--encoder",
        default=DEFAULT_ENCODERS[0],
        help=f"Encoder of the goal memory (default {DEFAULT_ENCODERS[0]}).",
    )
    parser.add_argument(
        "--intent-encoder",
        default=DEFAULT_ENCODERS[1],
        help=f"Encoder that reads request clauses' intents (default {DEFAULT_ENCODERS[1]}).",
    )


def _check_encoders(args: argparse.Namespace) -> None:
    from evaluators.atod.tracker import settings_for

    try:
        settings_for(args.encoder, args.intent_encoder)
    except ValueError as err:
        raise UsageError(f"--encoder/--intent-encoder: {err}") from None


def run_cv(args: argparse.Namespace) -> int:
    """Handler of `atod cv`; returns the exit status."""
    from tqdm.auto import tqdm

    from evaluators.atod.cross_validation import cross_validate
    from evaluators.atod.report import render_markdown, render_side_by_side
    from mads_bench.atod_data import write_dialogues

    _check_encoders(args)
    if args.out is not None:
        check_outputs({"--dialogues": args.dialogues}, {"--out": args.out})
    if args.folds < 2:
        raise UsageError(f"--folds {args.folds}: cross-validation needs at least 2 folds")
    gold = load_gold("--dialogues", [args.dialogues])
    if len(gold) < args.folds:
        raise UsageError(
            f"--folds {args.folds}: needs a dialogue per fold ({args.dialogues} has {len(gold)})"
        )
    result = cross_validate(
        gold,
        (args.encoder, args.intent_encoder),
        folds=args.folds,
        seed=args.seed,
        progress=lambda it: tqdm(it, desc="grid settings", file=sys.stderr),
    )
    predictions = result.pop("predictions")
    if args.out is not None:
        write_dialogues(predictions, args.out)
    if args.json:
        print_json(args, result)
        return 0
    lines = [
        f"## ATOD tracker, {args.folds}-fold cross-validation ({len(gold)} dialogues, "
        f"encoders {args.encoder} + {args.intent_encoder}, seed {args.seed})",
        "",
        "| fold | dialogues | threshold | intent | unnamed intent | train objective |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for fold in result["folds"]:
        s = fold["settings"]
        lines.append(
            f"| {fold['fold']} | {len(fold['dialogues'])} | {s['threshold']:.2f} | "
            f"{s['intent_threshold']:.2f} | {s['unnamed_intent_threshold']:.2f} | "
            f"{100 * fold['train_objective']:.2f} |"
        )
    print("\n".join(lines) + "\n\nHeld-out folds pooled:\n")
    print(render_side_by_side(result["strict"], result["release"]), end="")
    print("\n" + render_markdown(result["strict"]), end="")
    return 0


def run_score(args: argparse.Namespace) -> int:
    """Handler of `atod score`; returns the exit status."""
    from evaluators.atod.report import render_markdown, score_dialogues
    from mads_bench.atod_data import Prediction

    if args.judge_metrics and not args.judge:
        raise UsageError("--judge-metrics needs --judge SPEC")
    if args.per_dialogue and not args.json:
        raise UsageError("--per-dialogue needs --json (the rows are only in the JSON report)")
    judge = _judge(args.judge)
    gold = atod_fit.select("--gold", load_gold("--gold", args.gold), args.part)
    pred = load_records("--pred", [args.pred], model=Prediction)
    if args.part is not None:
        wanted = {d.dialogue_id for d in gold}
        pred = [d for d in pred if d.dialogue_id in wanted]
    modes = ["strict", "release"] if args.mode == "both" else [args.mode]
    try:
        reports = [
            score_dialogues(
                pred,
                gold,
                mode=m,
                threshold=args.threshold,
                judge=judge,
                bootstrap=args.bootstrap,
                seed=args.seed,
            )
            for m in modes
        ]
    except UsageError as err:
        raise UsageError(f"--pred {args.pred}: {err}") from None
    report = reports[0]  # strict when both: the headline
    if args.judge_metrics:
        from evaluators.atod.judge_metrics import add_judge_metrics, render_judge_markdown
        from evaluators.atod.matching import GoalMatcher

        add_judge_metrics(
            report, pred, gold, judge, GoalMatcher(mode=modes[0], threshold=args.threshold)
        )
        report["judge"] = args.judge
    if args.mode == "both":
        _print_both(args, report, reports[1])
    elif args.json:
        if not args.per_dialogue:
            report.pop("per_dialogue")
        print_json(args, report)
    else:
        print(render_markdown(report), end="")
    if args.judge_metrics and not args.json:
        print(render_judge_markdown(report), end="")
    return 0


def _print_both(args: argparse.Namespace, strict: dict, release: dict) -> None:
    from evaluators.atod.report import render_markdown, render_side_by_side

    if args.json:
        for report in (strict, release):
            if not args.per_dialogue:
                report.pop("per_dialogue")
        print_json(args, {**strict, "release": release})
    else:
        print(render_side_by_side(strict, release) + "\n" + render_markdown(strict), end="")
        print("\n" + render_markdown(release), end="")


def load_records(flag: str, paths: list[Path], model: type | None = None) -> list:
    """The dialogues of `paths`, in order, as `model` records; an empty file, or a dialogue id
    in two files, is refused, naming the flag."""
    from mads_bench.atod_data import Dialogue, load_dialogues

    dialogues, seen = [], set()
    for path in paths:
        loaded = load_dialogues(path, model=model or Dialogue)
        if not loaded:
            raise UsageError(f"{flag} {path}: no dialogues in the file")
        repeated = sorted(seen & {d.dialogue_id for d in loaded})
        if repeated:
            raise UsageError(f"{flag} {path}: dialogue {repeated[0]} is also in an earlier file")
        seen.update(d.dialogue_id for d in loaded)
        dialogues += loaded
    return dialogues


def load_gold(flag: str, paths: list[Path]) -> list:
    """Gold dialogues of `paths`; files without a single gold goal are refused (every score
    against them would read 0 or n/a as if a tracker had been measured)."""
    gold = load_records(flag, paths)
    if not any(dialogue.goal_list for dialogue in gold):
        named = " ".join(str(p) for p in paths)
        raise UsageError(
            f"{flag} {named}: goal_list is empty in all {len(gold)} dialogues; no gold goal to "
            "score against"
        )
    return gold


def _judge(spec: str | None):
    """The judge backend for `spec` from the simulation registry (None without a spec)."""
    if not spec:
        return None
    from simulation.backends import get_backend

    try:
        return get_backend(spec)
    except ValueError as err:
        raise UsageError(f"--judge: {err}") from None


def run_track(args: argparse.Namespace) -> int:
    """Handler of `atod track`; returns the exit status."""
    from evaluators.atod.predictions import prediction_dialogue
    from evaluators.atod.tracker import MemoryTracker
    from mads_bench.atod_data import TrackerInput, strip_gold, write_dialogues

    _check_encoders(args)
    if args.method != "memory" and not args.judge:
        raise UsageError(f"--method {args.method} needs --judge SPEC")
    check_outputs({"--dialogues": args.dialogues}, {"--out": args.out})
    if args.out.is_dir():
        raise UsageError(f"--out {args.out} is a folder; give a .jsonl or .json file")
    judge = _judge(args.judge)
    dialogues = load_records("--dialogues", args.dialogues, model=TrackerInput)
    dialogues = atod_fit.select("--dialogues", dialogues, args.part)[: args.limit]
    out, start = [], time.perf_counter()
    turns = sum(len(d.turns) for d in dialogues)
    if args.method == "memory":
        tracker = MemoryTracker.for_encoders(args.encoder, args.intent_encoder, judge=judge)
        for dialogue in dialogues:
            out.append(prediction_dialogue(dialogue, tracker.track(strip_gold(dialogue))))
    else:
        from evaluators.atod.baselines import track_with_judge

        out = track_with_judge(dialogues, judge, method=args.method, top_k=args.top_k)
    seconds = time.perf_counter() - start
    write_dialogues(out, args.out)
    print(
        f"wrote {len(out)} dialogues to {args.out} "
        f"({turns} turns, {1000 * seconds / max(turns, 1):.1f} ms/turn)",
        file=sys.stderr,
    )
    return 0
