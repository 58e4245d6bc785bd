"""Argument types shared by every command: numbers with their ranges, checked when parsed.

argparse calls these on the raw string, so ``--num 0`` or ``--mix nan`` stops at parse time
with ``error: argument --num: must be >= 1, got 0`` and exit status 2, before any work.

Example:
    >>> positive_int("3"), unit_interval("0.25")
    (3, 0.25)
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be >= 1, got 0
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path

from mads_bench.errors import UsageError

__all__ = [
    "add_command",
    "add_domain_dir",
    "backend_from_flag",
    "register_domain_dirs",
    "non_negative_float",
    "non_negative_int",
    "positive_float",
    "positive_int",
    "scenario_count",
    "unit_interval",
]


def _integer(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be <= {maximum:,}, got {value:,}")
        return value

    parse.__name__ = f"int>={minimum}"
    return parse


def _real(low: float, high: float, *, open_low: bool = False) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if value < low or (open_low and value == low) or value > high:
            bounds = f"{'(' if open_low else '['}{low:g}, {high:g}]"
            raise argparse.ArgumentTypeError(f"must be in {bounds}, got {value:g}")
        return value

    parse.__name__ = "number"
    return parse


positive_int = _integer(1)
scenario_count = _integer(1, 100_000)
"""How many scenarios to generate: at most 100,000 per run (they are all held in memory)."""
non_negative_int = _integer(0)
positive_float = _real(0.0, math.inf, open_low=True)
non_negative_float = _real(0.0, math.inf)
unit_interval = _real(0.0, 1.0)


def backend_from_flag(flag: str, spec: str, **options):
    """Build the backend a flag names; a malformed or unknown spec is a `UsageError`.

    Example:
        >>> backend_from_flag("--judge", "nonsense:x")
        Traceback (most recent call last):
        ...
        mads_bench.errors.UsageError: --judge nonsense:x: Unknown backend spec ...
    """
    from simulation.backends import get_backend

    try:
        return get_backend(spec, **options)
    except (ValueError, TypeError) as err:
        raise UsageError(f"{flag} {spec}: {err}") from None


SGD_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "sgd"
"""The shared Schema-Guided Dialogue folder next to the repository (default of the --sgd flags)."""

DOMAIN_DIR_FLAG = "--domain-dir"


def add_command(
    sub: argparse._SubParsersAction, name: str, help: str, doc: str
) -> argparse.ArgumentParser:
    """A sub-command whose ``--help`` shows its module docstring ``doc`` up to ``Example::``."""
    return sub.add_parser(
        name,
        help=help,
        description=doc.split("Example::")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_domain_dir(parser: argparse.ArgumentParser) -> None:
    """Give a command ``--domain-dir PACK`` (repeatable): an external domain pack to load.

    The folders are registered by :func:`register_domain_dirs` before the parser is built, so
    the pack's name is a valid ``--domain`` choice; the value parsed here is for ``--help``.
    """
    parser.add_argument(
        DOMAIN_DIR_FLAG,
        action="append",
        type=Path,
        metavar="PACK",
        help="An external domain pack folder (e.g. written by import-tau2); repeatable. "
        "Without --domain or --scenarios, its scenarios are the ones used.",
    )


def register_domain_dirs(argv: Sequence[str]) -> list[str]:
    """Register every ``--domain-dir PACK`` of a command line; returns the pack names.

    Raises:
        `CatalogError`: a folder is not a domain pack, or its name clashes.
        `UsageError`: ``--domain-dir`` is last, with no folder after it.
    """
    from mads_bench.catalog import register_domain_dir

    names = []
    for index, token in enumerate(argv):
        if token == DOMAIN_DIR_FLAG:
            if index + 1 >= len(argv):
                raise UsageError(f"{DOMAIN_DIR_FLAG}: expected a folder after it")
            names.append(register_domain_dir(argv[index + 1]))
        elif token.startswith(f"{DOMAIN_DIR_FLAG}="):
            names.append(register_domain_dir(token.partition("=")[2]))
    return names
