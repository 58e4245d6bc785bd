"""Reading records from a JSON array file or a JSONL file, each with its ``file:line`` location.

Importers must report a bad record by where it is and carry on, so this reader never raises
on bad content: it yields :class:`SourceRecord` s whose ``error`` is set instead. A JSON file
(``[ {...}, {...} ]``, the APIGen-MT release format) is decoded element by element with
``json.JSONDecoder.raw_decode``, so every element knows the line it starts on; a syntax
error inside the array ends that file (JSON cannot be resynchronised) with one error
record. A JSONL file is read line by line; a bad line is one error record.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = path.write_text('[\\n {"a": 1},\\n 7\\n]')
    >>> [(r.location, r.error or r.data) for r in read_records(path)]
    [('x.json:2', {'a': 1}), ('x.json:3', 'element 1 is not a JSON object (int)')]
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class SourceRecord:
    """One record of a source file: its data, or why it could not be read."""

    path: Path
    line: int
    index: int
    data: dict[str, Any] | None = None
    error: str | None = None

    @property
    def location(self) -> str:
        """``<file name>:<1-based line>``, as used in reports."""
        return f"{self.path.name}:{self.line}"


def read_records(path: Path | str) -> Iterator[SourceRecord]:
    """Yield every record of ``path`` (``.jsonl``: one per line; otherwise a JSON array).

    Args:
        path: the file.

    Returns:
        `Iterator[SourceRecord]`: in file order; ``index`` counts records from 0.

    Raises:
        `FileNotFoundError`: when ``path`` does not exist (that is a usage error, not bad data).
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        yield from _jsonl(path, text)
    else:
        yield from _json_array(path, text)


def _checked(path: Path, line: int, index: int, value: Any) -> SourceRecord:
    if isinstance(value, dict):
        return SourceRecord(path, line, index, data=value)
    message = f"element {index} is not a JSON object ({type(value).__name__})"
    return SourceRecord(path, line, index, error=message)


def _jsonl(path: Path, text: str) -> Iterator[SourceRecord]:
    index = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as err:
            yield SourceRecord(path, number, index, error=f"not valid JSON: {err.msg}")
        else:
            yield _checked(path, number, index, value)
        index += 1


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _json_array(path: Path, text: str) -> Iterator[SourceRecord]:
    position = _skip_space(text, 0)
    if not text.startswith("[", position):
        line = text.count("\n", 0, position) + 1
        yield SourceRecord(path, line, 0, error="expected a JSON array of records ('[')")
        return
    position, index = _skip_space(text, position + 1), 0
    if text.startswith("]", position):
        return
    while True:
        line = text.count("\n", 0, position) + 1
        try:
            value, position = _DECODER.raw_decode(text, position)
        except ValueError as err:
            where = text.count("\n", 0, getattr(err, "pos", position)) + 1
            message = f"not valid JSON ({err.msg}); the rest of the file is skipped"
            yield SourceRecord(path, where, index, error=message)
            return
        yield _checked(path, line, index, value)
        index += 1
        position = _skip_space(text, position)
        if text.startswith(",", position):
            position = _skip_space(text, position + 1)
            continue
        if not text.startswith("]", position):
            where = text.count("\n", 0, position) + 1
            message = "expected ',' or ']' after a record; the rest of the file is skipped"
            yield SourceRecord(path, where, index, error=message)
        return
