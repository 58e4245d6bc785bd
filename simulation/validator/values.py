"""Normalised value matching for the validator: numbers, dates, times, phones, ids, free text.

A :class:`Evidence` is the canonical form of some source text (what the user said, what the
tools returned): its words (``normalise(text, punctuation="words")`` from `mads_bench.text`:
lower-cased, underscores and punctuation as spaces), plus the SETS of numbers,
ISO dates, ``HH:MM`` times and digit strings found in it. Dates are read in the ways people
and models write them (``2026-04-20``, ``April 20th``, ``20 April 2026``, ``Friday 17 April``,
``today``/``tomorrow`` against the domain's fixed date), times likewise (``14:30``,
``2:30 pm``, ``noon``), numbers with or without separators, sign or currency
(``$1,200.00`` = ``1200`` = ``-1200``) and as words up to twelve. A value is *found* when its
canonical form is in the matching set; strings match on word boundaries.

Example:
    >>> from datetime import date
    >>> ev = Evidence.of(["Pay 1,850 dollars on May 1st at 2pm"], today=date(2026, 4, 15))
    >>> value_found(1850.0, ev), value_found("2026-05-01", ev), value_found("14:00", ev)
    (True, True, True)
    >>> value_found("2026-05-02", ev)
    False
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from mads_bench.text import NUMBER_WORDS, canonical_number, normalise

MONTHS = {
    name: index
    for index, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        1,
    )
    for name in names
}
_NUMBER_WORDS_TO_TWELVE = {w: d for w, d in NUMBER_WORDS.items() if int(d) <= 12}
_MONTH = r"(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(?:the\s+)?{_DAY}\b{_YEAR}", re.IGNORECASE)
DAY_MONTH = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?![a-z]){_YEAR}", re.IGNORECASE)
CLOCK = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)?(?![\w:])", re.IGNORECASE)
NUMBER = re.compile(r"(?<![\w.\-])[-+]?\$?\d[\d,]*(?:\.\d+)?(?![\w]|\.\d)")
PHONE_DIGITS = re.compile(r"\+?\d[\d\s().-]{6,}\d")
IDENTIFIER = re.compile(
    r"\b(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\b"
)
STOPWORDS = frozenset(
    "a an the and or of to for in on at by with my your our is are was be it this that i me "
    "we you please from as".split()
)


def _iso(year: int, month: int, day: int) -> str:
    """The ISO date; a day no calendar has ("43 April") stays a date, as written, so it is
    never mistaken for one a result gave."""
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return f"{year:04d}-{month:02d}-{day:02d}"


def dates_in(text: str, today: date | None = None) -> set[str]:
    """ISO dates written in ``text`` (year defaults to ``today``'s, else 2026; an impossible
    day, such as 43 April, as ``2026-04-43``)."""
    year = today.year if today else 2026
    found = {_iso(int(y), int(m), int(d)) for y, m, d in ISO_DATE.findall(text)}
    for month, day, yr in MONTH_DAY.findall(text):
        found.add(_iso(int(yr or year), MONTHS[month.casefold()], int(day)))
    for day, month, yr in DAY_MONTH.findall(text):
        found.add(_iso(int(yr or year), MONTHS[month.casefold()], int(day)))
    if today is not None:
        lowered = text.casefold()
        for word, offset in (("today", 0), ("tonight", 0), ("tomorrow", 1), ("yesterday", -1)):
            if re.search(rf"\b{word}\b", lowered):
                found.add((today + timedelta(days=offset)).isoformat())
    return {d for d in found if d}


def times_in(text: str) -> set[str]:
    """``HH:MM`` times written in ``text`` (``14:30``, ``2:30 pm``, ``2pm``, ``noon``)."""
    found = set()
    for hour, minute, meridiem in CLOCK.findall(ISO_DATE.sub(" ", text)):
        h, m = int(hour), int(minute or 0)
        if not minute and not meridiem:
            continue  # a bare number is not a time
        if meridiem:
            if not 1 <= h <= 12:
                continue
            h = h % 12 + (12 if meridiem.casefold().startswith("p") else 0)
        if h < 24 and m < 60:
            found.add(f"{h:02d}:{m:02d}")
    lowered = text.casefold()
    if re.search(r"\bnoon\b", lowered):
        found.add("12:00")
    if re.search(r"\bmidnight\b", lowered):
        found.add("00:00")
    return found


def numbers_in(text: str) -> set[str]:
    """Canonical numbers in ``text``, digits and the words zero..twelve."""
    stripped = ISO_DATE.sub(" ", text)
    found = set()
    for token in NUMBER.findall(stripped):
        try:
            # sign dropped: a debit and its amount are one value
            number = float(token.replace(",", "").replace("$", ""))
            found.add(canonical_number(number, signed=False, places=6))
        except ValueError:
            continue
    for word in normalise(stripped, punctuation="words").split():
        if word in _NUMBER_WORDS_TO_TWELVE:
            found.add(_NUMBER_WORDS_TO_TWELVE[word])
    return found


def digit_strings(text: str) -> set[str]:
    """Digit-only forms of phone-like sequences (``+1 (312) 555-0142`` -> ``13125550142``)."""
    return {re.sub(r"\D", "", m) for m in PHONE_DIGITS.findall(text)}


@dataclass
class Evidence:
    """Canonical view of source texts (see the module docstring)."""

    text: str = ""
    numbers: set[str] = field(default_factory=set)
    dates: set[str] = field(default_factory=set)
    times: set[str] = field(default_factory=set)
    digits: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, texts: list[str], today: date | None = None) -> Evidence:
        """Build the evidence of some texts."""
        joined = "\n".join(texts)
        return cls(
            text=f" {normalise(joined, punctuation='words')} ",
            numbers=numbers_in(joined),
            dates=dates_in(joined, today),
            times=times_in(joined),
            digits=digit_strings(joined),
        )

    def extended(self, other: Evidence) -> Evidence:
        """The union of two evidences."""
        return Evidence(
            self.text + other.text,
            self.numbers | other.numbers,
            self.dates | other.dates,
            self.times | other.times,
            self.digits | other.digits,
        )


def _string_found(value: str, evidence: Evidence) -> bool:
    if ISO_DATE.fullmatch(value):
        return value in evidence.dates
    if re.fullmatch(r"\d{1,2}:\d{2}", value):
        return value.zfill(5) in evidence.times
    digits = re.sub(r"\D", "", value)
    if re.fullmatch(r"\+?[\d\s().-]{7,}", value) and len(digits) >= 7:
        return any(d.endswith(digits[-10:]) or digits.endswith(d[-10:]) for d in evidence.digits)
    if re.fullmatch(r"-?\d[\d,]*(\.\d+)?", value.strip()):
        number = float(value.replace(",", ""))
        return canonical_number(number, signed=False, places=6) in evidence.numbers
    needle = normalise(value, punctuation="words")
    return bool(needle) and f" {needle} " in evidence.text


def value_found(value: Any, evidence: Evidence) -> bool:
    """Whether a scalar value (or every element of a list/dict) occurs in the evidence.

    Booleans and None always count as found: nobody writes ``true``, and a flag is checked
    by the schema, not by grounding.
    """
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return canonical_number(value, signed=False, places=6) in evidence.numbers
    if isinstance(value, list):
        return all(value_found(v, evidence) for v in value)
    if isinstance(value, dict):
        return all(value_found(v, evidence) for v in value.values())
    return _string_found(str(value), evidence)


def content_words(text: str) -> list[str]:
    """The non-stopword words of a text."""
    return [w for w in normalise(text, punctuation="words").split() if w not in STOPWORDS]


def word_overlap(value: str, evidence: Evidence) -> float:
    """Share of the content words of ``value`` that occur in the evidence (1.0 when none)."""
    tokens = content_words(value)
    if not tokens:
        return 1.0
    return sum(f" {t} " in evidence.text for t in tokens) / len(tokens)
