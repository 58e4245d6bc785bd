"""``mads-bench demo``: the whole loop on embedded defaults, with a markdown report."""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path

from mads_bench.demo import run_demo


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "demo",
        help="Simulate, validate, build the dataset, SFT + GRPO the CPU demo model, "
        "evaluate before/after.",
        description="Runs the main job offline on this machine and writes OUT/REPORT.md. "
        "Finished stages are reused; delete OUT to start over.",
    )
    defaults = {k: v.default for k, v in inspect.signature(run_demo).parameters.items()}
    parser.add_argument("--out", type=Path, default=Path(defaults["out"]), help="Output folder.")
    parser.add_argument(
        "--model", default=defaults["model"], help="Base model (offline name/path)."
    )
    parser.add_argument(
        "-k",
        type=int,
        default=defaults["conversations_per_scenario"],
        help="Conversations per scenario (default %(default)s).",
    )
    parser.add_argument(
        "--sft-steps",
        type=int,
        default=defaults["sft_steps"],
        help="SFT updates, one turn of steps each (%(default)s).",
    )
    parser.add_argument(
        "--grpo-steps", type=int, default=defaults["grpo_steps"], help="GRPO steps (%(default)s)."
    )
    parser.add_argument(
        "--eval-conversations",
        type=int,
        default=defaults["eval_conversations"],
        help="Held-out conversations evaluated before and after (default %(default)s).",
    )
    parser.add_argument(
        "--max-new-tokens",
        type=int,
        default=defaults["max_new_tokens"],
        help="Generation budget per predicted step (default %(default)s).",
    )
    parser.add_argument(
        "--context",
        choices=("full", "compact"),
        default=defaults["context"],
        help="Step prompts of the dataset (build-dataset --context; default %(default)s).",
    )
    parser.add_argument(
        "--seed", type=int, default=defaults["seed"], help="Seed of every stage (%(default)s)."
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    run_demo(
        args.out,
        model=args.model,
        conversations_per_scenario=args.k,
        sft_steps=args.sft_steps,
        grpo_steps=args.grpo_steps,
        eval_conversations=args.eval_conversations,
        max_new_tokens=args.max_new_tokens,
        context=args.context,
        seed=args.seed,
    )
    return 0
