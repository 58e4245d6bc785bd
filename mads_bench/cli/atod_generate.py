"""``mads-bench atod generate``: ATOD-style dialogues from SGD goal sequences (atod.md §4).

Registered by `mads_bench.cli.atod` under the `atod` command group. It prints the goal
sequence and co-occurrence graph statistics (Tables 12-13, next to the paper's) and a
summary of the generated set, and writes `dialogues.json`, an HF dataset and its card.

Example::

    mads-bench atod generate --sgd ../shared/data/sgd/train --num 100 --seed 0 --out out/atod
    mads-bench atod score --pred out/atod/dialogues.json --gold out/atod/dialogues.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mads_bench.cli.args import SGD_DATA, non_negative_int, positive_int, unit_interval
from mads_bench.cli.output import print_json
from mads_bench.errors import UsageError
from mads_bench.files import check_outputs

DEFAULT_SGD = (SGD_DATA / "train").resolve()


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `generate` action to the `atod` command group."""
    gen = sub.add_parser(
        "generate",
        help="Generate labelled ATOD-format dialogues from SGD goal sequences.",
        description="SGD goal sequences -> co-occurrence graph -> stratified random walks -> "
        "trajectory annotation -> dialogue generation -> per-turn statuses -> verifier.",
    )
    gen.add_argument(
        "--sgd",
        type=Path,
        default=DEFAULT_SGD,
        help="SGD split folder with dialogues_*.json(.gz) and schema.json "
        "(default: ../shared/data/sgd/train).",
    )
    gen.add_argument("--out", type=Path, required=True, help="Output folder.")
    gen.add_argument(
        "--num", type=positive_int, default=100, help="Dialogues to generate (default 100)."
    )
    gen.add_argument(
        "--seed", type=non_negative_int, default=0, help="Seed (same seed, same output)."
    )
    gen.add_argument(
        "--complex-share",
        type=unit_interval,
        default=0.35,
        help="Share of complex dialogues in [0, 1] (paper default 0.35).",
    )
    gen.add_argument(
        "--backend",
        default="scripted",
        help="Who writes the text: scripted (default, templates, no LLM) or a backend spec "
        "(transformers:<model>, openai:<model>@<url>).",
    )
    gen.add_argument("--judge", help="Backend spec of an LLM verifier (PASS/FAIL), optional.")
    gen.add_argument(
        "--max-files",
        type=positive_int,
        help="Read only the first N SGD dialogue files (the first ~42 of SGD train are "
        "single-domain and give no goal sequence).",
    )
    gen.add_argument("--json", action="store_true", help="Print the run report as JSON.")
    gen.set_defaults(handler=run_generate)


# GenerationConfig fields -> the flags that set them, for error messages.
_FLAGS = {
    "sgd_dir": "--sgd",
    "num_dialogues": "--num",
    "complex_share": "--complex-share",
    "max_files": "--max-files",
    "backend": "--backend",
    "judge": "--judge",
}


def run_generate(args: argparse.Namespace) -> int:
    """Handler of `atod generate`; returns the exit status."""
    from simulation.atod_generation import GenerationConfig, generate, render_statistics
    from simulation.atod_generation.dataset import save_result, summary
    from simulation.atod_generation.errors import GenerationError

    check_outputs({"--sgd": args.sgd}, {"--out": args.out}, folders=["--out"])
    config = GenerationConfig(
        sgd_dir=args.sgd,
        num_dialogues=args.num,
        seed=args.seed,
        backend=args.backend,
        judge=args.judge,
        complex_share=args.complex_share,
        max_files=args.max_files,
    )
    try:
        result = generate(config)
    except GenerationError as err:
        if err.setting not in _FLAGS:
            raise
        flag = _FLAGS[err.setting] + ("" if err.value is None else f" {err.value}")
        raise UsageError(f"{flag}: {err.reason}") from None
    paths = save_result(result, args.out)
    if args.json:
        print_json(args, json.loads(paths["report"].read_text()))
    else:
        source = f"{result.corpus_dialogues} SGD dialogues from {args.sgd}"
        print(render_statistics(result.statistics, source=source))
        print("| split | dialogues | avg turns | avg goals | with deps | dGCR | NTC |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for name, row in summary(result.records).items():
            print(
                f"| {name} | {row['dialogues']} | {row['avg_turns']} | {row['avg_goals']} | "
                f"{row['with_dependencies']} | {row['dgcr']} | {row['ntc']} |"
            )
    rate = len(result.records) / result.seconds if result.seconds else 0.0
    print(
        f"wrote {len(result.records)} dialogues to {paths['dialogues']} "
        f"({len(result.rejected)} rejected, {result.retries} retries, "
        f"{result.seconds:.1f} s, {rate:.1f} dialogues/s incl. reading SGD)",
        file=sys.stderr,
    )
    if result.rejected:
        print(json.dumps(result.rejected[:3]), file=sys.stderr)
    return 0
