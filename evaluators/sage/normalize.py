"""Value normalisation and lexical matching for the offline grounding verifier.

Slot values reach the state in many surface forms ("2" / "two", "11:30 am" / "half past 11
in the morning", "March 3rd" / "3rd of March", "Cheap" / "cheap"). These helpers put values
into comparable forms and score how well a value is supported by a piece of text:

* ``normalize_text``: lower case, number words → digits, punctuation dropped (SAGE's
  settings of ``mads_bench.text.normalise``).
* ``parse_time`` / ``parse_date`` / ``parse_number``: typed canonical keys (or None).
* ``value_similarity``: 1.0 for equal normalised or typed values, 0.0 for two different
  values of the same type (two different times contradict), else a fuzzy ratio.
* ``span_support``: the best-supporting span of a text for a value, with its score.

Example:
    >>> value_similarity("half past 11 in the morning", "11:30 am")
    1.0
    >>> span_support("2", "A table for two people please")[0]
    1.0
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from mads_bench.text import normalise

_ORDINALS = {
    w: str(i)
    for i, w in enumerate(
        "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
        "twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth "
        "twentieth".split()
    )
}
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        "january february march april may june july august september october november "
        "december".split()
    )
}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_RELATIVE_DAYS = ("today", "tomorrow", "day after tomorrow", "tonight", "this weekend")
DONTCARE_PHRASES = (
    "dont care",
    "don't care",
    "do not care",
    "doesnt matter",
    "doesn't matter",
    "any ",
    "anything",
    "whatever",
    "no preference",
    "either",
    "not particular",
    "anywhere",
)
_LEADING = {"the", "a", "an", "on", "at", "in", "for", "to", "from", "by"}
_TRUTHY = {"true", "yes"}
_FALSY = {"false", "no"}


@lru_cache(maxsize=1 << 16)  # pure, and S2 asks again for the same windows
def normalize_text(text: str) -> str:
    """SAGE's normal form of a value or utterance: `mads_bench.text.normalise` set to lower
    case (``str.lower``), underscores kept, the marks values are written with kept, number
    words and ordinals as digits, a leading article or preposition dropped ("the 4th" and
    "4th" compare equal).

    Example:
        >>> normalize_text("The Two Tickets, 3rd row!"), normalize_text("premium_economy")
        ('2 tickets 3 row', 'premium_economy')
    """
    return normalise(
        text,
        casefold=False,
        underscores=False,
        punctuation="values",
        numbers="words",
        drop_leading=_LEADING,
    )


def parse_number(text: str) -> int | None:
    """An integer written as digits or a number word, if the text is just that."""
    norm = normalize_text(text)
    return int(norm) if norm.isdigit() else None


@lru_cache(maxsize=1 << 16)  # pure, and S2 asks again for the same windows
def parse_time(text: str) -> str | None:
    """Canonical ``HH:MM`` (24 h) for a time expression, else None."""
    t = normalize_text(text).replace(".", " ")
    if "noon" in t and "after" not in t:
        return "12:00"
    if "midnight" in t:
        return "00:00"
    m = re.search(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a m|p m|o'clock|oclock)?\b", t)
    half = re.search(r"\b(half|quarter)\s+(past|to)\s+(\d{1,2})\b", t)
    if half:
        hour, minutes = int(half.group(3)), 30 if half.group(1) == "half" else 15
        if half.group(2) == "to":
            hour, minutes = hour - 1, 60 - minutes
    elif m and (m.group(2) or m.group(3) or re.search(r"morning|evening|night|afternoon", t)):
        hour, minutes = int(m.group(1)), int(m.group(2) or 0)
    else:
        return None
    if hour > 24 or minutes > 59:
        return None
    pm = re.search(r"\bp ?m\b|evening|night|afternoon", t)
    if pm and hour < 12:
        hour += 12
    if re.search(r"\ba ?m\b|morning", t) and hour == 12:
        hour = 0
    return f"{hour:02d}:{minutes:02d}"


@lru_cache(maxsize=1 << 16)  # pure, and S2 asks again for the same windows
def parse_date(text: str) -> str | None:
    """A canonical key for a date expression (relative day, weekday, month-day, ISO), else None."""
    t = normalize_text(text)
    iso = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", t)
    if iso:
        return f"md:{int(iso.group(2))}-{int(iso.group(3))}"
    for rel in _RELATIVE_DAYS:
        if re.search(rf"\b{rel}\b", t):
            return f"rel:{rel}"
    words = t.split()
    words = [_ORDINALS.get(w, w) for w in words]
    for i, w in enumerate(words):
        month = _MONTHS.get(w)
        if month:
            near = [x for x in words[max(0, i - 3) : i + 3] if x.isdigit() and int(x) <= 31]
            if near:
                return f"md:{month}-{int(near[0])}"
    for day in _DAYS:
        if re.search(rf"\b{day}\b", t):
            return f"dow:{day}"
    m = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)\b", text.lower())
    if m and 1 <= int(m.group(1)) <= 31:
        return f"d:{int(m.group(1))}"
    return None


def _same_date(a: str, b: str) -> bool:
    """Dates agree when equal, or when one gives only the day and the days agree."""
    if a == b:
        return True
    days = [k.rsplit("-", 1)[-1] if k.startswith("md:") else k[2:] for k in (a, b)]
    return (a.startswith("d:") or b.startswith("d:")) and days[0] == days[1]


@lru_cache(maxsize=1 << 16)  # pure, and S2 asks again for the same windows
def typed_key(text: str) -> tuple[str, str] | None:
    """``(type, canonical)`` for a time, date, dontcare or boolean value, else None."""
    norm = normalize_text(text)
    if norm in _TRUTHY or norm in _FALSY:
        return ("bool", "true" if norm in _TRUTHY else "false")
    if norm == "dontcare" or any(p.strip() == norm for p in DONTCARE_PHRASES):
        return ("dontcare", "dontcare")
    time = parse_time(text)
    if time and len(norm.split()) <= 7:
        return ("time", time)
    date = parse_date(text)
    if date and len(norm.split()) <= 5:
        return ("date", date)
    return None


CONTENTLESS = frozenset("a an the in on at of to for and or is it am pm".split())
"""Words that can never by themselves support a slot value (stop words, bare units): a state
value that normalises to one of them is supported only by a typed match, never by sharing
that token with the text."""


def is_contentless(value: str) -> bool:
    """True for a value that is a lone stop word or unit (``pm``, ``in``, ``the``)."""
    return normalize_text(value) in CONTENTLESS


def value_similarity(a: str, b: str) -> float:
    """Similarity of two slot values in [0, 1]; typed values compare by their canonical key."""
    na, nb = normalize_text(a), normalize_text(b)
    if na == nb:
        return 1.0
    ka, kb = typed_key(a), typed_key(b)
    if ka and kb and ka[0] == kb[0]:
        same = _same_date(ka[1], kb[1]) if ka[0] == "date" else ka[1] == kb[1]
        return 1.0 if same else 0.0
    if na and nb and (f" {na} " in f" {nb} " or f" {nb} " in f" {na} "):
        return 0.9
    return SequenceMatcher(None, na, nb).ratio()


def _typed_support(value: str, key: tuple[str, str], window: str) -> float:
    window = re.sub(r"[^\w:' -]", " ", window).strip()  # "march 3." reads as "march 3"
    other = typed_key(window)
    if other and other[0] == key[0]:
        return value_similarity(value, window)
    nv, nw = normalize_text(value), normalize_text(window)
    if f" {nv} " in f" {nw} ":
        return 0.9
    if f" {nw} " in f" {nv} ":  # a fragment of the value: support for part of it only
        return 0.9 * len(nw.split()) / len(nv.split())
    return SequenceMatcher(None, nv, nw).ratio() * 0.5


def span_support(value: str, text: str) -> tuple[float, str]:
    """Best support of ``value`` in ``text``: (score in [0, 1], the span).

    Whole-word containment of the normalised value scores 1.0; a typed value scores 1.0 when
    some span of the text has the same canonical key, and a span that is only a fragment of
    it ("march" or "pm" for "March 10th" or "7:30 pm") counts by the share of the value's
    words it covers, never as the value; otherwise the best fuzzy ratio over word windows of
    about the value's length.
    """
    nv, nt = normalize_text(value), normalize_text(text)
    if not nv or not nt:
        return 0.0, ""
    if f" {nv} " in f" {nt} ":
        return 1.0, nv
    words = nt.split()
    size = len(nv.split())
    best, span = 0.0, ""
    key = typed_key(value)
    for n in {max(1, size - 1), size, size + 1, size + 2} if not key else range(1, 7):
        for i in range(0, max(1, len(words) - n + 1)):
            window = " ".join(words[i : i + n])
            if key:
                score = _typed_support(value, key, window)
            else:
                matcher = SequenceMatcher(None, nv, window)
                if matcher.real_quick_ratio() <= best or matcher.quick_ratio() <= best:
                    continue  # upper bounds: this window cannot beat the best so far
                score = matcher.ratio()
            if score > best:
                best, span = score, window
    return best, span
