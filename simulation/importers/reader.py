"""Importer records from a JSON array file or a JSONL file, each with its ``file:line`` location.

Importers must report a bad record by where it is and carry on, so this never raises on bad
content: it yields :class:`SourceRecord` s whose ``error`` is set instead. The reading itself
is the project's one JSON-or-JSONL reader, :func:`mads_bench.loading.iter_json_records` (a
JSON array, the APIGen-MT release format, decoded element by element so every element knows
its line, a syntax error ending the file; a JSONL file line by line, a bad line one error
record); this module adds the importers' rule that a record is a JSON object.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = path.write_text('[\\n {"a": 1},\\n 7\\n]')
    >>> [(r.location, r.error or r.data) for r in read_records(path)]
    [('x.json:2', {'a': 1}), ('x.json:3', 'element 1 is not a JSON object (int)')]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mads_bench.loading import iter_json_records


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
    """Yield every record of ``path`` (a JSON array, or JSONL: see
    :func:`mads_bench.loading.is_json_array`).

    Args:
        path: the file.

    Returns:
        `Iterator[SourceRecord]`: in file order; ``index`` counts records from 0.

    Raises:
        `CatalogError`: when ``path`` cannot be read as text (a usage error, not bad data).
    """
    path = Path(path)
    for record in iter_json_records(path):
        if record.error is not None:
            message = f"not valid JSON ({record.error})"
            if record.rest_skipped:
                message += "; the rest of the file is skipped"
            yield SourceRecord(path, record.line, record.index, error=message)
        elif isinstance(record.value, dict):
            yield SourceRecord(path, record.line, record.index, data=record.value)
        else:
            kind = type(record.value).__name__
            message = f"element {record.index} is not a JSON object ({kind})"
            yield SourceRecord(path, record.line, record.index, error=message)
