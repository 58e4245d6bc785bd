"""What a command prints as its result: JSON documents on the stream ``main`` keeps for them."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["print_json"]


def print_json(args: argparse.Namespace, data: Any) -> None:
    """Print ``data`` as indented JSON on the command's real stdout.

    ``main`` points stdout at stderr while a ``--json`` command runs (libraries print banners
    on import), and keeps the real stream as ``args.stdout``.
    """
    print(json.dumps(data, indent=2, default=str), file=getattr(args, "stdout", sys.stdout))
