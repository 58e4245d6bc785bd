"""The in-memory backend state that domain tool handlers read and write.

A domain's seed data is a set of tables (lists of JSON records), each with a
primary-key field named in the domain manifest. Handlers receive a
:class:`Database` and raise :class:`ToolError` subclasses for anything a real API
would refuse; the tool backend turns those into structured error results.
"""

from __future__ import annotations

import copy
import pickle
from datetime import date
from typing import Any


class ToolError(Exception):
    """A refusal a real API would return; becomes ``{"code", "message", ...}``."""

    code = "tool_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_content(self) -> dict[str, Any]:
        """The error object put in the tool result."""
        return {"code": self.code, "message": self.message, **self.details}


class NotFound(ToolError):
    """No record with the given key or filters."""

    code = "not_found"


class InvalidRequest(ToolError):
    """Arguments are well-typed but make no sense for this record (e.g. wrong PIN)."""

    code = "invalid_request"


class InvalidState(ToolError):
    """The record is in a state that does not allow the operation."""

    code = "invalid_state"


class PolicyViolation(ToolError):
    """A business rule refuses the operation (e.g. refund window expired)."""

    code = "policy_violation"


class Database:
    """Tables of records keyed by a primary-key field; all reads return copies.

    Args:
        tables: ``{table: [record, ...]}``; deep-copied, the caller's data never changes.
        keys: ``{table: primary_key_field}``.
        today: the fixed "current date" of the domain, so policies are deterministic.

    Example:
        >>> db = Database({"orders": [{"order_id": "A1", "status": "placed"}]},
        ...               {"orders": "order_id"}, date(2026, 3, 16))
        >>> db.update("orders", "A1", status="cancelled")["status"]
        'cancelled'
        >>> db.get("orders", "A1")["status"]
        'cancelled'
    """

    def __init__(
        self, tables: dict[str, list[dict[str, Any]]], keys: dict[str, str], today: date
    ) -> None:
        self.keys = dict(keys)
        self.today = today
        self._tables: dict[str, dict[Any, dict[str, Any]]] = {}
        self._touched: dict[str, dict[Any, None]] = {}  # keys written since construction
        # copy on write: a record is the caller's (a pack's seed, shared) until it is written
        for table, records in tables.items():
            key = self.keys[table]
            self._tables[table] = {r[key]: r for r in records}

    def __deepcopy__(self, memo: dict[int, Any]) -> Database:
        """A copy that shares the records neither has written (they are never changed)."""
        other = copy.copy(self)
        other._tables = {t: dict(rows) for t, rows in self._tables.items()}
        other._touched = {t: dict(keys) for t, keys in self._touched.items()}
        for table, keys in self._touched.items():
            rows = other._tables[table]
            for key in keys:
                if key in rows:
                    rows[key] = copy.deepcopy(rows[key], memo)
        return other

    def _table(self, table: str) -> dict[Any, dict[str, Any]]:
        if table not in self._tables:
            raise KeyError(f"unknown table {table!r}")
        return self._tables[table]

    def get(self, table: str, key: Any) -> dict[str, Any]:
        """The record with primary key ``key``; raises :class:`NotFound`."""
        record = self._table(table).get(key)
        if record is None:
            noun = table[:-1] if table.endswith("s") else table
            raise NotFound(f"no {noun.replace('_', ' ')} with {self.keys[table]} {key!r}")
        return copy.deepcopy(record)

    def find(self, table: str, **filters: Any) -> list[dict[str, Any]]:
        """Records whose fields equal every filter (``None`` filters are ignored)."""
        wanted = {k: v for k, v in filters.items() if v is not None}
        return [
            copy.deepcopy(r)
            for r in self._table(table).values()
            if all(_matches(r.get(k), v) for k, v in wanted.items())
        ]

    def insert(self, table: str, record: dict[str, Any]) -> dict[str, Any]:
        """Add a record; its primary key must be new."""
        key = record[self.keys[table]]
        rows = self._table(table)
        if key in rows:
            raise InvalidState(f"{self.keys[table]} {key!r} already exists")
        rows[key] = copy.deepcopy(record)
        self._touch(table, key)
        return copy.deepcopy(record)

    def update(self, table: str, key: Any, **changes: Any) -> dict[str, Any]:
        """Change fields of an existing record and return the new version."""
        rows = self._table(table)
        if key not in rows:
            self.get(table, key)  # raises NotFound with the usual message
        if key not in self._touched.get(table, {}):
            rows[key] = copy.deepcopy(rows[key])  # its first write: it becomes this database's
        rows[key].update(copy.deepcopy(changes))
        self._touch(table, key)
        return copy.deepcopy(rows[key])

    def delete(self, table: str, key: Any) -> dict[str, Any]:
        """Remove a record and return it."""
        record = self.get(table, key)
        del self._tables[table][key]
        self._touch(table, key)
        return record

    def next_id(self, table: str, prefix: str, width: int = 4) -> str:
        """A new deterministic key ``<prefix><n>`` not used in ``table`` yet."""
        n = len(self._table(table)) + 1
        while f"{prefix}{n:0{width}d}" in self._tables[table]:
            n += 1
        return f"{prefix}{n:0{width}d}"

    def _touch(self, table: str, key: Any) -> None:
        self._touched.setdefault(table, {})[key] = None

    def changes(self) -> dict[str, list[dict[str, Any]]]:
        """The records written since construction, by table: each as it is now, a deleted
        one as ``{<primary key>: key, "_deleted": True}`` (see :func:`apply_changes`).

        Example:
            >>> db = Database({"orders": [{"order_id": "A1", "status": "placed"},
            ...                           {"order_id": "A2", "status": "placed"}]},
            ...               {"orders": "order_id"}, date(2026, 3, 16))
            >>> _ = db.update("orders", "A2", status="cancelled")
            >>> db.changes()
            {'orders': [{'order_id': 'A2', 'status': 'cancelled'}]}
        """
        out: dict[str, list[dict[str, Any]]] = {}
        for table, keys in self._touched.items():
            rows = self._tables[table]
            out[table] = [
                copy.deepcopy(rows[k]) if k in rows else {self.keys[table]: k, DELETED: True}
                for k in keys
            ]
        return out

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """The whole state as ``{table: [record, ...]}`` (a copy)."""
        # one pickle round trip copies a large state about twice as fast as deepcopy
        tables = {t: list(rows.values()) for t, rows in self._tables.items()}
        return pickle.loads(pickle.dumps(tables, protocol=pickle.HIGHEST_PROTOCOL))


DELETED = "_deleted"
"""Marks a deleted record in :meth:`Database.changes`."""


def apply_changes(
    records: dict[tuple[str, Any], dict[str, Any]],
    changes: dict[str, list[dict[str, Any]]],
    keys: dict[str, str],
) -> dict[tuple[str, Any], dict[str, Any]]:
    """``records`` (by ``(table, key)``) with ``changes`` laid over them: changed and new
    records replace, deleted ones go. A full dump is a valid ``changes`` too.

    Example:
        >>> seed = {("orders", "A1"): {"order_id": "A1"}, ("orders", "A2"): {"order_id": "A2"}}
        >>> sorted(apply_changes(seed, {"orders": [{"order_id": "A2", DELETED: True}]},
        ...                      {"orders": "order_id"}))
        [('orders', 'A1')]
    """
    out = dict(records)
    for table, rows in changes.items():
        for row in rows:
            key = (table, row.get(keys.get(table, "")))
            if row.get(DELETED) is True:
                out.pop(key, None)
            else:
                out[key] = row
    return out


def _matches(value: Any, wanted: Any) -> bool:
    # Text filters compare case-insensitively, as users rarely match the stored case.
    if isinstance(value, str) and isinstance(wanted, str):
        return value.casefold() == wanted.casefold()
    return value == wanted
