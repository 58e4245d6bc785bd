"""Reading YAML/JSON files into typed models with errors that name the file and the field.

Every hand-written file of the project (tools, personas, scenarios, task templates,
configs) goes through :func:`load_models` or :func:`load_model`, so a malformed file
always fails the same way: ``CatalogError: scenarios.yaml: [3].behaviors[0].withheld:
Field required``.

Published data that comes "as a JSON array or JSONL" (ATOD dialogues, APIGen-MT conversations)
is read by one reader, :func:`iter_json_records`: each record with the line it starts on, a bad
record reported where it is instead of raised (importers skip it and carry on);
:func:`load_json_or_jsonl` is the strict form that raises the first problem.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from mads_bench.errors import MadsBenchError

ModelT = TypeVar("ModelT", bound=BaseModel)


class CatalogError(MadsBenchError, ValueError):
    """A data file is malformed: carries the file, the field path and the reason."""

    def __init__(self, path: Path | str, field: str, reason: str) -> None:
        self.path = Path(path)
        self.field = field
        self.reason = reason
        where = f"{self.path}: {field}" if field else str(self.path)
        super().__init__(f"{where}: {reason}")


def read_data_file(path: Path | str) -> Any:
    """Parse a YAML, JSON or JSONL file; syntax errors raise :class:`CatalogError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise CatalogError(path, "", f"cannot read file ({err.strerror})") from None
    if path.suffix == ".jsonl":
        try:
            return [value for _, value in read_jsonl(path)]
        except JsonlError as err:
            raise CatalogError(path, f"line {err.line}", err.reason) from None
    try:
        if path.suffix == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except json.JSONDecodeError as err:
        raise CatalogError(path, f"line {err.lineno} column {err.colno}", err.msg) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise CatalogError(path, where, getattr(err, "problem", None) or str(err)) from None


def read_sgd_dialogues(folder: Path | str, limit: int | None = None) -> list[dict[str, Any]]:
    """The dialogues of a Schema-Guided Dialogue split folder (``dialogues_*.json`` or
    ``.json.gz``), in file order.

    Args:
        folder (`Path | str`): The split folder (``.../sgd/train``).
        limit (`int`, *optional*): Stop after this many dialogues (None: all).

    Raises:
        `FileNotFoundError`: When the folder holds no dialogue files.
        `CatalogError`: When a file cannot be read or is not JSON (names the file).
    """
    folder = Path(folder)
    files = sorted(folder.glob("dialogues_*.json*"))
    if not files:
        raise FileNotFoundError(f"{folder}: no dialogues_*.json(.gz) files")
    dialogues: list[dict[str, Any]] = []
    for path in files:
        opener = gzip.open if path.suffix == ".gz" else open
        try:
            with opener(path, "rt", encoding="utf-8") as handle:
                dialogues.extend(json.load(handle))
        except json.JSONDecodeError as err:
            raise CatalogError(path, f"line {err.lineno} column {err.colno}", err.msg) from None
        except (OSError, EOFError, UnicodeDecodeError) as err:
            raise CatalogError(path, "", f"cannot read file ({err})") from None
        if limit is not None and len(dialogues) >= limit:
            return dialogues[:limit]
    return dialogues


class JsonlError(MadsBenchError, ValueError):
    """A JSONL line that is not JSON or not the record it should be: ``<file>:<line>: ...``.

    The readers of the project's JSONL files (trajectories, predictions, SAGE records, ...)
    raise subclasses of it, so a caller can catch one type and a message always names the
    file and the 1-based line (also kept as ``line``, with the bare ``reason``).
    """

    line: int | None = None
    reason: str = ""


def _prefixed(what: str | None, reason: str) -> str:
    return reason if what is None else f"not {what}: {reason}"


def _jsonl_error(error: type[JsonlError], path: Path, line: int, reason: str) -> JsonlError:
    problem = error(f"{path}:{line}: {reason}")
    problem.line, problem.reason = line, reason
    return problem


def read_jsonl(
    path: Path | str,
    model: type[ModelT] | None = None,
    *,
    what: str | None = "a record",
    error: type[JsonlError] = JsonlError,
) -> Iterator[tuple[int, Any]]:
    r"""Yield ``(line number, value)`` for each non-blank line of a JSONL file.

    Args:
        path (`Path`): the file (UTF-8).
        model (`type[BaseModel]`, *optional*): validate each line as this pydantic model.
        what (`str`, *optional*): what a line should be, for messages (``"a trajectory"``);
            None leaves the ``not <what>:`` prefix out.
        error (`type[JsonlError]`): the error to raise (a reader's own subclass).

    Raises:
        `JsonlError`: ``<file>:<line>: not <what>: invalid JSON (...)`` or
            ``<file>:<line>: not <what>: <field>: <reason>``.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "x.jsonl"
        >>> _ = path.write_text('{"a": 1}\n\n[2]\n')
        >>> list(read_jsonl(path))
        [(1, {'a': 1}), (3, [2])]
        >>> _ = path.write_text('{"a": 1}\n{oops\n')
        >>> list(read_jsonl(path))
        Traceback (most recent call last):
        ...
        mads_bench.loading.JsonlError: ...x.jsonl:2: not a record: invalid JSON (Expecting ...)
    """
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError as err:
                detail = getattr(err, "msg", str(err))
                reason = _prefixed(what, f"invalid JSON ({detail})")
                raise _jsonl_error(error, path, number, reason) from None
            if model is not None:
                try:
                    value = model.model_validate(value)
                except ValidationError as err:
                    first = err.errors()[0]
                    where = format_location(tuple(first["loc"])) or "record"
                    reason = _prefixed(what, f"{where}: {first['msg']}")
                    raise _jsonl_error(error, path, number, reason) from None
            yield number, value


def format_location(loc: tuple[Any, ...]) -> str:
    """Render a pydantic error location as a field path: ``[2].behaviors[0].kind``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def validation_error(path: Path | str, err: ValidationError, prefix: str = "") -> CatalogError:
    """Turn the first error of a pydantic ValidationError into a CatalogError."""
    first = err.errors()[0]
    loc = format_location(first["loc"])
    field = f"{prefix}{'.' if prefix and loc and not loc.startswith('[') else ''}{loc}"
    reason = first["msg"]
    if len(err.errors()) > 1:
        reason += f" (and {len(err.errors()) - 1} more errors)"
    return CatalogError(path, field, reason)


def load_model(path: Path | str, model: type[ModelT], data: Any = None) -> ModelT:
    """Validate one object from a file (or from already-read ``data``) as ``model``."""
    data = read_data_file(path) if data is None else data
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise validation_error(path, err) from None


def load_models(path: Path | str, model: type[ModelT], key: str | None = None) -> list[ModelT]:
    """Validate a list of objects from a file; ``key`` selects a top-level mapping entry."""
    data = read_data_file(path)
    prefix = ""
    if key is not None:
        if not isinstance(data, dict) or key not in data:
            raise CatalogError(path, key, "missing top-level key")
        data, prefix = data[key], key
    if not isinstance(data, list):
        raise CatalogError(path, prefix, f"expected a list, got {type(data).__name__}")
    items = []
    for index, item in enumerate(data):
        try:
            items.append(model.model_validate(item))
        except ValidationError as err:
            raise validation_error(path, err, prefix=f"{prefix}[{index}]") from None
    return items


_DECODER = json.JSONDecoder()
_JSONL_HINT = " (a .json file holds one array; name a JSONL file .jsonl)"


@dataclass(frozen=True)
class JsonRecord:
    """One record of a JSON-array or JSONL file, or why it could not be read.

    ``line``/``column`` (1-based) say where the record, or the problem, starts; ``index``
    counts records from 0. A problem inside a JSON array ends the file (JSON cannot be
    resynchronised): ``rest_skipped`` is then true.
    """

    line: int
    index: int
    value: Any = None
    error: str | None = None
    column: int = 1
    rest_skipped: bool = False


def read_text_file(path: Path | str) -> str:
    """The UTF-8 text of a data file (a byte-order mark is dropped).

    Raises:
        `CatalogError`: A folder, an unreadable file, or bytes that are not UTF-8.
    """
    path = Path(path)
    if path.is_dir():
        raise CatalogError(path, "", "is a folder; expected a JSON or JSONL file")
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise CatalogError(path, "", f"cannot read file ({err.strerror})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise CatalogError(path, f"byte {err.start}", "not UTF-8 text") from None


def is_json_array(path: Path | str, text: str) -> bool:
    """Whether a file is read as one JSON document: every ``.json`` file, and any file whose
    text starts with ``[`` (a record is an object, so that is an array whatever the name);
    anything else is JSONL."""
    return Path(path).suffix == ".json" or text.lstrip().startswith("[")


def _where(text: str, position: int) -> tuple[int, int]:
    line = text.count("\n", 0, position) + 1
    return line, position - (text.rfind("\n", 0, position) + 1) + 1


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _jsonl_records(text: str) -> Iterator[JsonRecord]:
    index = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield JsonRecord(number, index, value=json.loads(line))
        except json.JSONDecodeError as err:
            yield JsonRecord(number, index, error=err.msg, column=err.colno)
        index += 1


def _array_records(text: str) -> Iterator[JsonRecord]:
    position = _skip_space(text, 0)
    if not text.startswith("[", position):
        line, column = _where(text, position)
        error = "expected a JSON array ('[')"
        yield JsonRecord(line, 0, error=error, column=column, rest_skipped=True)
        return
    position, index = _skip_space(text, position + 1), 0
    closed = text.startswith("]", position)
    while not closed:
        line, column = _where(text, position)
        try:
            value, position = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as err:
            yield JsonRecord(err.lineno, index, error=err.msg, column=err.colno, rest_skipped=True)
            return
        yield JsonRecord(line, index, value=value, column=column)
        index += 1
        position = _skip_space(text, position)
        if text.startswith(",", position):
            position = _skip_space(text, position + 1)
        elif text.startswith("]", position):
            closed = True
        else:
            line, column = _where(text, position)
            error = "Expecting ',' delimiter"
            yield JsonRecord(line, index, error=error, column=column, rest_skipped=True)
            return
    position = _skip_space(text, position + 1)
    if position < len(text):
        line, column = _where(text, position)
        yield JsonRecord(line, index, error="Extra data", column=column, rest_skipped=True)


def iter_json_records(path: Path | str) -> Iterator[JsonRecord]:
    """Every record of a JSON-array or JSONL file (see :func:`is_json_array`), in file order.

    Never raises on content: a line or element that is not JSON is a :class:`JsonRecord`
    with ``error`` set (a JSONL line on its own; in an array, the rest of the file with it).
    Whether a record is an object is the caller's business.

    Raises:
        `CatalogError`: The file cannot be read as UTF-8 text (see :func:`read_text_file`).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "x.json"
        >>> _ = path.write_text('[\\n {"a": 1},\\n 7 8\\n]')
        >>> [(r.line, r.value, r.error) for r in iter_json_records(path)]
        [(2, {'a': 1}, None), (3, 7, None), (3, None, "Expecting ',' delimiter")]
    """
    yield from _records(path, read_text_file(path))


def _records(path: Path | str, text: str) -> Iterator[JsonRecord]:
    if text.strip():
        yield from (_array_records if is_json_array(path, text) else _jsonl_records)(text)


def load_json_or_jsonl(path: Path | str) -> Any:
    """The content of a JSON or JSONL file: a JSONL file's records as a list, a JSON file's
    document (an array as a list; any other value as it is, for the caller to reject).

    Raises:
        `CatalogError`: Unreadable file, or the first JSON problem as ``line L column C``;
            a ``.json`` file holding JSONL says how to name it.
    """
    path = Path(path)
    text = read_text_file(path)
    if not text.strip():
        return []
    if is_json_array(path, text) and not text.lstrip().startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            hint = _JSONL_HINT if err.msg == "Extra data" else ""
            raise CatalogError(
                path, f"line {err.lineno} column {err.colno}", err.msg + hint
            ) from None
    values = []
    for record in _records(path, text):
        if record.error is not None:
            hint = _JSONL_HINT if record.error == "Extra data" else ""
            where = f"line {record.line} column {record.column}"
            raise CatalogError(path, where, record.error + hint)
        values.append(record.value)
    return values
