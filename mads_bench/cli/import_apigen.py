"""``mads-bench import-apigen``: APIGen-MT conversations -> Pre-Act trajectories JSONL.

Example::

    mads-bench import-apigen --input apigen-mt_5k.json --out outputs/apigen/trajectories.jsonl
    mads-bench import-apigen --input a.jsonl --out t.jsonl \\
        --backend openai:Qwen2.5-7B-Instruct@http://localhost:8000/v1 --batch-size 64

Malformed records are listed as ``file:line: reason`` on stderr and skipped; the exit status
is 0 when at least one record was imported (or all were already there), 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mads_bench.cli.args import positive_int
from mads_bench.errors import UsageError
from mads_bench.files import check_outputs

_SHOWN_PROBLEMS = 20


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "import-apigen",
        help="Convert APIGen-MT conversations into Pre-Act trajectories JSONL.",
        description="Convert APIGen-MT-style conversations (human / gpt / function_call / "
        "observation turns plus a tool JSON) into Pre-Act trajectories; <think>/<plan> are "
        "synthesised by --backend ('scripted' writes them from each call and its context).",
    )
    parser.add_argument(
        "--input",
        type=Path,
        action="append",
        required=True,
        help="APIGen-MT file: a JSON array (.json) or JSONL (.jsonl); repeatable.",
    )
    parser.add_argument("--out", type=Path, required=True, help="Output trajectories JSONL.")
    parser.add_argument(
        "--backend",
        default="scripted",
        help="Who writes <think>/<plan>: 'scripted' (default, offline) or a backend spec such "
        "as 'transformers:<model>' or 'openai:<model>@<base_url>'.",
    )
    parser.add_argument(
        "--domain-name", default="apigen", help="Domain of the trajectories (default apigen)."
    )
    parser.add_argument(
        "--batch-size", type=positive_int, default=32, help="Conversations narrated per batch (32)."
    )
    parser.add_argument("--resume", action="store_true", help="Skip ids already in --out.")
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    parser.set_defaults(handler=run_import)


def run_import(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from simulation.importers import import_apigen, make_narrator

    missing = [str(p) for p in args.input if not p.is_file()]
    if missing:
        raise UsageError(f"--input: no such file: {', '.join(missing)}")
    check_outputs({"--input": args.input}, {"--out": args.out})
    try:
        narrator = make_narrator(args.backend)
    except ValueError as err:
        raise UsageError(f"--backend {args.backend}: {err}") from None
    with tqdm(desc="import", unit="conv", disable=args.no_progress) as bar:
        report = import_apigen(
            args.input,
            args.out,
            narrator=narrator,
            domain_name=args.domain_name,
            batch_size=args.batch_size,
            resume=args.resume,
            progress=bar.update,
        )
    for location, reason in report.skipped[:_SHOWN_PROBLEMS]:
        print(f"skipped {location}: {reason}", file=sys.stderr)
    if len(report.skipped) > _SHOWN_PROBLEMS:
        print(f"... and {len(report.skipped) - _SHOWN_PROBLEMS} more skipped", file=sys.stderr)
    print(f"{args.out}: {report.summary()}")
    return 0 if report.imported or report.already_there else 1
