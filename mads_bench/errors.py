"""The one family of errors a user is shown: expected failures, each described in one line.

Library code raises a subclass of :class:`MadsBenchError` (or a plain `OSError`) when the
input is at fault: a malformed file, a bad flag, a missing model, an unreachable backend. The
command line turns these into ``error: <message>`` and exit status 2; anything else is a bug
and is reported as one line too, with the traceback behind ``mads-bench --debug``.
"""

from __future__ import annotations

__all__ = ["MadsBenchError", "UsageError"]


class MadsBenchError(Exception):
    """An expected failure: the message names the file, field or flag and what is wrong."""


class UsageError(MadsBenchError, ValueError):
    """Arguments that cannot be used together or as given (a flag, a path, a name).

    Example:
        >>> str(UsageError("--num: must be >= 1, got 0"))
        '--num: must be >= 1, got 0'
    """
