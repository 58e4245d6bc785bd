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
from pathlib import Path

from mads_bench.cli.args import add_domain_dir, backend_from_flag, positive_int
from mads_bench.errors import UsageError
from mads_bench.files import atomic_write_text, check_outputs


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "validate",
        help="Validate trajectories (syntax, faithfulness, role confusion, task success).",
        description="Stream trajectories through the MADS validator; write accepted and "
        "rejected trajectories (with verdicts) to separate JSONL files and print a summary.",
    )
    add_domain_dir(parser)
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
    from mads_bench.catalog import load_all_scenarios, load_scenario_file

    known = {s.id: s for s in load_all_scenarios(include_mock=True)}
    if path is not None:
        known.update({s.id: s for s in load_scenario_file(path)})
    return known


def run_validate(args: argparse.Namespace) -> int:
    from mads_bench.datasets.inputs import trajectory_files
    from simulation.validator.validate_run import format_summary, validate_run

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
    judge = backend_from_flag("--judge", args.judge) if args.judge else None
    summary = validate_run(
        files,
        args.out_accepted,
        args.out_rejected,
        scenarios=_scenarios(args.scenarios),
        judge=judge,
        chunk_size=args.chunk_size,
        resume=args.resume,
        progress=not args.no_progress,
    )
    if not (summary["validated"] or summary["already_stored"] or summary["duplicate_ids"]):
        raise UsageError(f"--trajectories {args.trajectories}: holds no trajectory")
    print(format_summary(summary))
    if args.report:
        atomic_write_text(args.report, json.dumps(summary, indent=2) + "\n")
    return 0
