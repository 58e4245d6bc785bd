"""The ``mads-bench`` command line: one module per command group, registered here.

``main`` is the one error path of every command: an expected failure (a
:class:`~mads_bench.errors.MadsBenchError`, an `OSError` such as a missing or unwritable
file) prints ``error: <one line>`` and exits 2; any other exception is a bug and prints one
line that says so and exits 1; ``mads-bench --debug COMMAND`` shows its traceback instead.
With ``--json`` only the JSON document is written to stdout: whatever libraries print while
the command runs goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence

from mads_bench.cli import (
    atod,
    datasets,
    demo,
    evaluation,
    import_apigen,
    import_tau2,
    info,
    models,
    phrasebank,
    sage,
    scenarios,
    simulate,
    stats,
    train,
    validate,
)
from mads_bench.cli.args import register_domain_dirs
from mads_bench.errors import MadsBenchError

COMMAND_GROUPS = (
    info,
    models,
    scenarios,
    simulate,
    import_apigen,
    import_tau2,
    validate,
    stats,
    phrasebank,
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
    parser.add_argument(
        "--debug", action="store_true", help="Show the traceback of an unexpected error."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in COMMAND_GROUPS:
        group.register(commands)
    return parser


def describe_error(error: BaseException) -> tuple[str, int]:
    """The one line shown for a failure, and the exit status: 2 for bad input, 1 for a bug.

    Example:
        >>> describe_error(FileNotFoundError(2, "No such file or directory", "t.jsonl"))
        ('t.jsonl: No such file or directory', 2)
    """
    if isinstance(error, MadsBenchError):
        text, status = str(error), 2
    elif isinstance(error, OSError):
        where = f"{error.filename}: " if error.filename else ""
        text, status = f"{where}{error.strerror or error}", 2
    else:
        text = f"unexpected {type(error).__name__}: {error} (mads-bench --debug shows where)"
        status = 1
    lines = text.strip().splitlines() or [type(error).__name__]
    return lines[0][:500], status


@contextlib.contextmanager
def _stdout_for(args: argparse.Namespace) -> Iterator[None]:
    """With ``--json``, keep stdout for the document alone (handlers print it to args.stdout)."""
    args.stdout = sys.stdout
    if getattr(args, "json", False):
        with contextlib.redirect_stdout(sys.stderr):
            yield
    else:
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        register_domain_dirs(argv)  # before the parser, so a pack's name is a --domain choice
    except MadsBenchError as error:
        print(f"error: {describe_error(error)[0]}", file=sys.stderr)
        return 2
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # --help, or argparse's own one-line usage error
        return int(done.code or 0)
    try:
        with _stdout_for(args):
            return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if args.debug:
            raise
        text, status = describe_error(error)
        print(f"error: {text}", file=sys.stderr)
        return status
