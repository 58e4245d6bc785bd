"""``mads-bench eval``: score step predictions with L-1 (turn level) and L-2 (trajectory level).

Scores an existing predictions file (see `evaluators.step_predictions`); running a model over
the ``test`` split to produce one waits for the simulation backend registry.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("eval", help="Score step predictions with L-1 or L-2.")
    sub = parser.add_subparsers(dest="eval_command", metavar="LEVEL", required=True)
    for level, text in (("l1", "turn-level metrics"), ("l2", "trajectory-level success")):
        cmd = sub.add_parser(level, help=f"L-{level[1]} {text} of a predictions JSONL file.")
        cmd.add_argument(
            "--predictions",
            type=Path,
            required=True,
            help="JSONL: one line per step with `prediction` and the grpo gold columns.",
        )
        cmd.add_argument("--out", type=Path, help="Also write the JSON report here.")
        cmd.add_argument("--json", action="store_true", help="Print JSON instead of markdown.")
        if level == "l1":
            cmd.add_argument(
                "--similarity-model",
                default="mpnet",
                help="Sentence encoder for semantic similarity (default mpnet; 'none' skips).",
            )
        else:
            cmd.add_argument(
                "--max-edit-distance",
                type=int,
                default=1,
                help="Edits tolerated between tool names after case folding (default 1).",
            )
        cmd.set_defaults(handler=run_l1 if level == "l1" else run_l2)


def _emit(report, args: argparse.Namespace) -> int:
    data = report.to_dict()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(data, indent=2))
    print(json.dumps(data, indent=2) if args.json else report.to_markdown())
    return 0


def _rows(path: Path) -> list[dict] | None:
    from evaluators.step_predictions import read_rows

    try:
        return read_rows(path)
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return None


def run_l1(args: argparse.Namespace) -> int:
    from evaluators.l1.core import score_l1
    from evaluators.similarity import SentenceSimilarity
    from evaluators.step_predictions import l1_steps

    rows = _rows(args.predictions)
    if rows is None:
        return 2
    try:
        steps = l1_steps(rows)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    model = None if args.similarity_model.lower() == "none" else args.similarity_model
    similarity = None if model is None else SentenceSimilarity(model)
    return _emit(score_l1(steps, similarity=similarity), args)


def run_l2(args: argparse.Namespace) -> int:
    from evaluators.l2.core import score_l2
    from evaluators.step_predictions import l2_steps

    rows = _rows(args.predictions)
    if rows is None:
        return 2
    try:
        report = score_l2(l2_steps(rows), max_edit_distance=args.max_edit_distance)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return _emit(report, args)
