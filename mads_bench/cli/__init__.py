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
import errno
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

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
from mads_bench.manifest import set_command

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


# A write that fails for want of room names no file; the command's output flags say which.
_WRITE_ERRNOS = frozenset({errno.EFBIG, errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


def _outputs(args: argparse.Namespace | None) -> list[str]:
    """The output flags a command was given (``--out``, ``--out-*``, ``--*-out``, ``--report``)."""
    named = []
    for dest, value in sorted(vars(args).items()) if args is not None else ():
        is_output = dest in ("out", "report") or dest.startswith("out_") or dest.endswith("_out")
        if is_output and isinstance(value, (str, Path)):
            named.append(f"--{dest.replace('_', '-')} {value}")
    return named


def describe_error(error: BaseException, args: argparse.Namespace | None = None) -> tuple[str, int]:
    """The one line shown for a failure, and the exit status: 2 for bad input, 1 for a bug.

    Args:
        error (`BaseException`): what the command raised.
        args (`argparse.Namespace`, *optional*): the command's arguments; a full disk or file
            size limit, which the OS reports without a file, is told with the output flags.

    Example:
        >>> describe_error(FileNotFoundError(2, "No such file or directory", "t.jsonl"))
        ('t.jsonl: No such file or directory', 2)
        >>> describe_error(OSError(errno.EFBIG, "File too large"), argparse.Namespace(out="o"))
        ('File too large while writing --out o', 2)
    """
    if isinstance(error, MadsBenchError):
        text, status = str(error), 2
    elif isinstance(error, OSError):
        where = f"{error.filename}: " if error.filename else ""
        text, status = f"{where}{error.strerror or error}", 2
        outputs = _outputs(args) if error.errno in _WRITE_ERRNOS and not error.filename else []
        if outputs:
            text += f" while writing {', '.join(outputs)}"
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
    set_command(argv)  # run manifests record the command line
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
        text, status = describe_error(error, args)
        print(f"error: {text}", file=sys.stderr)
        return status
