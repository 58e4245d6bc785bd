"""``mads-bench demo``: the whole loop on embedded defaults, with a markdown report."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "demo",
        help="Simulate, validate, build the dataset, SFT + GRPO the CPU demo model, "
        "evaluate before/after.",
        description="Runs the main job offline on this machine and writes OUT/REPORT.md. "
        "Finished stages are reused; delete OUT to start over.",
    )
    parser.add_argument("--out", type=Path, default=Path("outputs/demo"), help="Output folder.")
    parser.add_argument("--model", default="smollm2-135m", help="Base model (offline name/path).")
    parser.add_argument("-k", type=int, default=3, help="Conversations per scenario (default 3).")
    parser.add_argument("--sft-steps", type=int, default=4, help="SFT steps (default 4).")
    parser.add_argument("--grpo-steps", type=int, default=2, help="GRPO steps (default 2).")
    parser.add_argument(
        "--eval-conversations", type=int, default=3, help="Held-out conversations evaluated."
    )
    parser.add_argument("--max-new-tokens", type=int, default=64, help="Tokens per predicted step.")
    parser.add_argument("--seed", type=int, default=0, help="Seed of every stage.")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from mads_bench.demo import run_demo

    run_demo(
        args.out,
        model=args.model,
        conversations_per_scenario=args.k,
        sft_steps=args.sft_steps,
        grpo_steps=args.grpo_steps,
        eval_conversations=args.eval_conversations,
        max_new_tokens=args.max_new_tokens,
        seed=args.seed,
    )
    return 0
