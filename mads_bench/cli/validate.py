"""``mads-bench validate``: run the MADS validator over trajectories into accepted/rejected JSONL.

Example::

    mads-bench validate --trajectories t.jsonl --out-accepted a.jsonl --out-rejected r.jsonl
    mads-bench validate --trajectories t.jsonl --out-accepted a.jsonl --out-rejected r.jsonl \\
        --judge openai:Qwen2.5-7B-Instruct@http://localhost:8000/v1 --resume

Every input trajectory lands in exactly one output file with its verdict (rejected ones keep
their reasons; nothing is dropped). Without ``--resume`` existing outputs are replaced, so
a rerun gives the same files; with it, ids already in either output are skipped.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from mads_bench.cli.args import backend_from_flag, positive_int
from mads_bench.errors import UsageError
from mads_bench.files import atomic_write_text, check_outputs


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "validate",
        help="Validate trajectories (syntax, faithfulness, role confusion, task success).",
        description="Stream trajectories through the MADS validator; write accepted and "
        "rejected trajectories (with verdicts) to separate JSONL files and print a summary.",
    )
    parser.add_argument(
        "--trajectories",
        type=Path,
        required=True,
        help="Input JSONL, or a folder of them (e.g. a `simulate --out` folder).",
    )
    parser.add_argument("--out-accepted", type=Path, required=True, help="Accepted JSONL.")
    parser.add_argument("--out-rejected", type=Path, required=True, help="Rejected JSONL.")
    parser.add_argument(
        "--scenarios",
        type=Path,
        help="Scenario file (YAML, JSON or JSONL) for generated scenarios; the hand-written "
        "ones of every domain are always known.",
    )
    parser.add_argument(
        "--judge",
        help="Judge backend spec (e.g. 'openai:<model>@<url>', 'transformers:<model>'); "
        "default: none, the offline rules and MiniLM embeddings decide.",
    )
    parser.add_argument(
        "--resume", action="store_true", help="Skip ids already in the output files."
    )
    parser.add_argument(
        "--chunk-size",
        type=positive_int,
        default=32,
        help="Trajectories per embedding/judge batch.",
    )
    parser.add_argument("--report", type=Path, help="Also write the summary as JSON here.")
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    parser.set_defaults(handler=run_validate)


def _scenarios(path: Path | None) -> dict:
    from mads_bench.catalog import load_all_scenarios
    from mads_bench.cli.scenarios import load_scenario_file

    known = {s.id: s for s in load_all_scenarios(include_mock=True)}
    if path is not None:
        known.update({s.id: s for s in load_scenario_file(path)})
    return known


def summarise(verdicts: list[dict], seconds: float) -> dict:
    """Counts of the run: totals, failures per check, who decided, pass rate by complexity."""
    failures: Counter[str] = Counter()
    deciders: Counter[str] = Counter()
    by_complexity: dict[str, list[int]] = {}
    for complexity, verdict in verdicts:
        row = by_complexity.setdefault(complexity, [0, 0])
        row[0] += verdict["passed"]
        row[1] += 1
        for name, check in verdict["checks"].items():
            failures[name] += not check["passed"]
            deciders[f"{name}/{check['decided_by']}"] += 1
    total = len(verdicts)
    accepted = sum(v["passed"] for _, v in verdicts)
    return {
        "validated": total,
        "accepted": accepted,
        "rejected": total - accepted,
        "acceptance_rate": accepted / total if total else None,
        "failures_per_check": dict(failures),
        "decided_by": dict(sorted(deciders.items())),
        "by_complexity": {k: {"accepted": a, "total": n} for k, (a, n) in by_complexity.items()},
        "seconds": round(seconds, 3),
        "conversations_per_second": round(total / seconds, 2) if seconds > 0 else None,
    }


def _print_summary(summary: dict) -> None:
    rate = summary["acceptance_rate"]
    print(
        f"\n{summary['validated']} validated ({summary['already_stored']} already in the outputs, "
        f"{summary['duplicate_ids']} duplicate ids skipped): "
        f"{summary['accepted']} accepted, {summary['rejected']} rejected"
        + (f" ({rate:.1%} accepted)" if rate is not None else "")
        + f", {summary['conversations_per_second']} conversations/s"
    )
    print("\n| check | failed | decided by |\n| --- | --- | --- |")
    for name in ("syntax", "faithfulness", "role_confusion", "task_success"):
        by = ", ".join(
            f"{k.split('/')[1]} {v}" for k, v in summary["decided_by"].items() if k.startswith(name)
        )
        print(f"| {name} | {summary['failures_per_check'].get(name, 0)} | {by} |")
    print("\n| complexity | accepted | total |\n| --- | --- | --- |")
    for name, row in sorted(summary["by_complexity"].items()):
        print(f"| {name} | {row['accepted']} | {row['total']} |")


def run_validate(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from mads_bench.datasets.inputs import trajectory_files
    from simulation.trajectory_io import TrajectoryWriter, read_trajectories
    from simulation.validator import validate_trajectories

    files = trajectory_files([args.trajectories])
    check_outputs(
        {"--trajectories": [args.trajectories, *files], "--scenarios": args.scenarios},
        {
            "--out-accepted": args.out_accepted,
            "--out-rejected": args.out_rejected,
            "--report": args.report,
        },
        globbed=["--trajectories"],
    )
    if not args.resume:
        for path in (args.out_accepted, args.out_rejected):
            if path.is_file():
                path.unlink()
    judge = backend_from_flag("--judge", args.judge) if args.judge else None
    scenarios = _scenarios(args.scenarios)
    accepted = TrajectoryWriter(args.out_accepted, resume=True)
    rejected = TrajectoryWriter(args.out_rejected, resume=True)
    for writer in (accepted, rejected):
        if writer.repaired_bytes:
            print(f"{writer.path}: cut a torn last line ({writer.repaired_bytes} bytes)")
    stored = accepted.ids | rejected.ids
    seen: set[str] = set()
    counts = Counter()

    def todo():
        for trajectory in (t for path in files for t in read_trajectories(path)):
            if trajectory.id in seen:
                counts["duplicate"] += 1  # a duplicate id in the input is validated once
                continue
            seen.add(trajectory.id)
            if trajectory.id in stored:
                counts["stored"] += 1
                continue
            yield trajectory

    verdicts: list[tuple[str, dict]] = []
    start = time.perf_counter()
    with accepted, rejected, tqdm(desc="validate", disable=args.no_progress) as bar:
        stream = validate_trajectories(todo(), scenarios, judge=judge, chunk_size=args.chunk_size)
        for trajectory in stream:
            (accepted if trajectory.verdict["passed"] else rejected).write(trajectory)
            verdicts.append((trajectory.complexity, trajectory.verdict))
            bar.update()
    if not verdicts and not counts:
        raise UsageError(f"--trajectories {args.trajectories}: holds no trajectory")
    summary = summarise(verdicts, time.perf_counter() - start)
    summary["judge"] = getattr(judge, "spec", None) or "rules"
    summary["already_stored"] = counts["stored"]
    summary["duplicate_ids"] = counts["duplicate"]
    _print_summary(summary)
    if args.report:
        atomic_write_text(args.report, json.dumps(summary, indent=2) + "\n")
    return 0
