"""The one error of ATOD generation: settings that cannot give the dialogues asked for.

It names the `GenerationConfig` setting at fault (`max_files`, `complex_share`, ...), so the
command line can show the flag: ``error: --max-files 2: no SGD dialogue with two or more
services ...``.
"""

from __future__ import annotations

from typing import Any

from mads_bench.errors import MadsBenchError

__all__ = ["GenerationError"]


class GenerationError(MadsBenchError, ValueError):
    """The SGD data read cannot yield the requested walks or dialogues.

    Args:
        reason (`str`): What is wrong and what to change, in one line.
        setting (`str`, *optional*): The `GenerationConfig` field at fault.
        value (`Any`): Its value (`None`: the reason already shows it).

    Example:
        >>> str(GenerationError("too few goals", "max_files", 2))
        'max_files=2: too few goals'
    """

    def __init__(self, reason: str, setting: str | None = None, value: Any = None) -> None:
        self.reason, self.setting, self.value = reason, setting, value
        where = setting if value is None else f"{setting}={value}"
        super().__init__(f"{where}: {reason}" if setting else reason)
