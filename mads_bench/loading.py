"""Reading YAML/JSON files into typed models with errors that name the file and the field.

Every hand-written file of the project (tools, personas, scenarios, task templates,
configs) goes through :func:`load_models` or :func:`load_model`, so a malformed file
always fails the same way: ``CatalogError: scenarios.yaml: [3].behaviors[0].withheld:
Field required``.
"""

from __future__ import annotations

import json
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
        return _read_jsonl(path, text)
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


def _read_jsonl(path: Path, text: str) -> list[Any]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise CatalogError(path, f"line {number} column {err.colno}", err.msg) from None
    return rows


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
