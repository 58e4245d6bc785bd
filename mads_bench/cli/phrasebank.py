"""``mads-bench build-phrasebank``: mine the scripted agents' phrasebank from SGD train.

Example::

    mads-bench build-phrasebank --sgd-train ../shared/data/sgd/train

Keeps the SGD turns whose dialogue acts are exactly one situation the scripted agents meet
(agreeing, thanking, declining more help, giving one value; asking for one slot, offering
more help, reporting success), delexicalises them by their slot spans and keeps only the
templates whose every word is generic (``simulation/agents/phrasebank.py``); user phrases
that the validator's role-confusion test could take for the assistant's are dropped (MiniLM,
offline). Writes the
shipped file unless ``--out`` says otherwise. The phrases are CC BY-SA 4.0 (SGD's licence).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mads_bench.cli.args import SGD_DATA, add_command, positive_int
from mads_bench.errors import UsageError


def register(commands: argparse._SubParsersAction) -> None:
    parser = add_command(
        commands,
        "build-phrasebank",
        "Mine the scripted agents' phrasebank (CC BY-SA 4.0) from SGD train.",
        __doc__,
    )
    parser.add_argument(
        "--sgd-train", type=Path, default=SGD_DATA / "train", help="SGD train folder."
    )
    parser.add_argument("--out", type=Path, help="Output JSON (default: the shipped file).")
    parser.add_argument(
        "--min-domains",
        type=positive_int,
        default=12,
        help="A word is generic when this many SGD domains use it (12).",
    )
    parser.add_argument(
        "--per-category", type=positive_int, default=400, help="Templates kept per category."
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from simulation.agents.phrasebank import SHIPPED, build_phrasebank
    from simulation.validator.role_confusion import assistant_like

    if not any(args.sgd_train.glob("dialogues_*.json*")):
        raise UsageError(f"--sgd-train {args.sgd_train}: no SGD dialogues_*.json(.gz) there")
    out = args.out or SHIPPED
    document = build_phrasebank(
        args.sgd_train,
        out,
        min_domains=args.min_domains,
        per_category=args.per_category,
        vet_user=assistant_like,
    )
    counts = ", ".join(f"{c} {len(t)}" for c, t in document["phrases"].items())
    print(f"{out}: {counts}")
    return 0
