"""Helpers the domain packs' handlers share: dates, clock times, record fields, card expiry.

Each concept lives here once, so two packs cannot drift apart on, say, how ``"09:30"``
becomes minutes. What differs between packs is an explicit argument (the wording of
:func:`parse_date`'s refusal), not a second copy.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from mads_bench.database import Database, InvalidRequest

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
"""Day names as the seed data spells them (``working_days``, ``open_days``), Monday first."""

VALID_ISO_DATE = "a valid date (YYYY-MM-DD)"
"""The ``expected`` wording of packs whose date refusals name the format."""


def parse_date(text: str, expected: str = "a calendar date") -> date:
    """The date an ISO-format argument names; refuses dates that do not exist.

    Args:
        text (`str`): the argument, e.g. ``"2026-04-16"``.
        expected (`str`): what the refusal says the text is not; the travel and
            home-services packs pass :data:`VALID_ISO_DATE`.

    Returns:
        `date`: the parsed date.

    Raises:
        `InvalidRequest`: ``'<text>' is not <expected>``.

    Example:
        >>> parse_date("2026-04-16")
        datetime.date(2026, 4, 16)
        >>> parse_date("2026-02-30")
        Traceback (most recent call last):
        ...
        mads_bench.database.InvalidRequest: '2026-02-30' is not a calendar date
        >>> parse_date("2026-02-30", VALID_ISO_DATE)
        Traceback (most recent call last):
        ...
        mads_bench.database.InvalidRequest: '2026-02-30' is not a valid date (YYYY-MM-DD)
    """
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidRequest(f"{text!r} is not {expected}") from None


def days_since(db: Database, day: str) -> int:
    """Whole days from the ISO date ``day`` (a stored record field) to ``db.today``.

    Example:
        >>> db = Database({}, {}, date(2026, 3, 16))
        >>> days_since(db, "2026-03-01")
        15
    """
    return (db.today - date.fromisoformat(day)).days


def to_minutes(hhmm: str) -> int:
    """Minutes after midnight of an ``HH:MM`` clock time.

    Example:
        >>> to_minutes("09:30")
        570
    """
    return int(hhmm[:2]) * 60 + int(hhmm[3:5])


def to_hhmm(minutes: int) -> str:
    """The ``HH:MM`` clock time ``minutes`` after midnight; the inverse of :func:`to_minutes`.

    Example:
        >>> to_hhmm(570)
        '09:30'
    """
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def pick(record: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The given fields of a record, in the given order; every one must be present.

    Example:
        >>> pick({"id": "A1", "status": "placed", "total": 9.5}, "total", "id")
        {'total': 9.5, 'id': 'A1'}
    """
    return {key: record[key] for key in keys}


def card_expired(db: Database, expires: str) -> bool:
    """Whether a card valid through the month ``expires`` (``YYYY-MM``) is past it on ``db.today``.

    Example:
        >>> db = Database({}, {}, date(2026, 3, 16))
        >>> card_expired(db, "2026-02"), card_expired(db, "2026-03")
        (True, False)
    """
    return expires < db.today.isoformat()[:7]
