"""The ``mads-bench`` command line: one module per command group, registered here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mads_bench.cli import (
    atod,
    datasets,
    demo,
    evaluation,
    import_apigen,
    info,
    models,
    sage,
    scenarios,
    simulate,
    train,
    validate,
)
from mads_bench.loading import CatalogError

COMMAND_GROUPS = (
    info,
    models,
    scenarios,
    simulate,
    import_apigen,
    validate,
    datasets,
    train,
    evaluation,
    sage,
    atod,
    demo,
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (used by ``main`` and the docs tests)."""
    parser = argparse.ArgumentParser(
        prog="mads-bench",
        description="Simulate, train and evaluate robust task-oriented dialogue agents.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in COMMAND_GROUPS:
        group.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except CatalogError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
