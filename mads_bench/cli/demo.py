"""``mads-bench demo``: the whole loop on embedded defaults, with a markdown report."""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path

from mads_bench.cli.args import positive_float, positive_int
from mads_bench.demo import run_demo

_INT_OPTIONS = (  # (flag, run_demo parameter, help)
    ("-k", "conversations_per_scenario", "Conversations per scenario"),
    ("--sft-steps", "sft_steps", "SFT updates, one turn of steps each"),
    ("--grpo-steps", "grpo_steps", "GRPO steps"),
    (
        "--eval-conversations",
        "eval_conversations",
        "Held-out conversations evaluated before and after (domains take turns)",
    ),
    ("--min-eval-steps", "min_eval_steps", "More conversations until this many held-out steps"),
    ("--max-new-tokens", "max_new_tokens", "Generation budget per predicted step"),
    ("--seed", "seed", "Seed of every stage"),
)


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "demo",
        help="Simulate, validate, build the dataset, SFT + GRPO the CPU demo model, "
        "evaluate before/after.",
        description="Runs the main job offline on this machine and writes OUT/REPORT.md and "
        "OUT/REPORT.json (each figure before/after with a 95%% paired bootstrap CI of the "
        "difference). Finished stages are reused; delete OUT to start over.",
    )
    defaults = {k: v.default for k, v in inspect.signature(run_demo).parameters.items()}
    parser.add_argument("--out", type=Path, default=Path(defaults["out"]), help="Output folder.")
    parser.add_argument(
        "--model", default=defaults["model"], help="Base model (offline name/path)."
    )
    for flag, name, text in _INT_OPTIONS:
        parser.add_argument(
            flag,
            dest=name,
            metavar=flag.lstrip("-").replace("-", "_").upper(),
            type=int if name == "seed" else positive_int,
            default=defaults[name],
            help=f"{text} (%(default)s).",
        )
    parser.add_argument(
        "--context",
        choices=("full", "compact"),
        default=defaults["context"],
        help="Step prompts of the dataset (build-dataset --context; default %(default)s).",
    )
    parser.add_argument(
        "--minutes",
        type=positive_float,
        metavar="N",
        help="Fit the SFT and GRPO step counts to a budget of N minutes on this CPU (estimated "
        "from two probes timed before the demo starts; --sft-steps/--grpo-steps are scaled).",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    options = {name: getattr(args, name) for _, name, _ in _INT_OPTIONS}
    run_demo(args.out, model=args.model, context=args.context, minutes=args.minutes, **options)
    return 0
