"""What the scripted assistant says: tool results, arguments and fallbacks in plain words.

Everything here is grounded: a summary only repeats fields of a tool result, a decline
only rewrites the scenario's ``fallback_behavior`` (an instruction such as "Explain that X
and offer Y") into first-person speech ("I'm sorry. X. I can offer Y instead").
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from simulation.agents.text import render_value, slot_label

_MAX_FIELDS = 6
_RETRY_WORDS = ("resubmit", "try again", "retry", "confirm it with the customer")


# ways of writing one "label value" pair; none puts a status word after "is" (the validator
# reads "X is cancelled" as a claim) or reads as a completion claim
_PAIR_FORMS = (
    "{label} {value}",
    "{label} {value}",
    "{label}: {value}",
    "{value} as the {label}",
    "the {label} {value}",
    "{label} set to {value}",
    "{value} ({label})",
    "{label} of {value}",
)
_ARG_JOINERS = (", ", "; ", ", ", " and ")
_FIELD_FORMS = ("{label} {value}", "{label} {value}", "{label}: {value}", "{value} ({label})")
_FIELD_JOINERS = ("; ", "; ", ", ", " | ")


_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_CLOCK = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def spoken_date_or_time(value: str, rng: Any) -> str:
    """An ISO date or ``HH:MM`` time the way people say it, drawn per ``rng`` (the
    validator reads all these forms back); anything else as is.

    Example:
        >>> import random
        >>> sorted({spoken_date_or_time("2026-05-01", random.Random(i)) for i in range(40)})
        ['1 May 2026', '2026-05-01', 'Friday 1 May', 'May 1', 'May 1st', 'May 1st, 2026']
        >>> sorted({spoken_date_or_time("19:00", random.Random(i)) for i in range(40)})
        ['19:00', '7 pm', '7:00 pm']
    """
    if match := _ISO_DATE.match(value):
        try:
            day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            return value
        month, d, year = day.strftime("%B"), day.day, day.year
        nth = f"{d}{'th' if 10 <= d % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(d % 10, 'th')}"
        forms = [value, f"{d} {month} {year}", f"{month} {nth}, {year}"]
        if year == 2026:  # the year the validator assumes when none is said
            forms += [f"{month} {d}", f"{month} {nth}", f"{day.strftime('%A')} {d} {month}"]
        return rng.choice(forms)
    if match := _CLOCK.match(value):
        hour, minute = int(match.group(1)), match.group(2)
        half = "am" if hour < 12 else "pm"
        twelve = hour % 12 or 12
        forms = [value, f"{twelve}:{minute} {half}"]
        if minute == "00" and hour not in (0, 12):  # "12 pm" is ambiguous to many
            forms.append(f"{twelve} {half}")
        return rng.choice(forms)
    return value


def _pair(label: str, value: str, rng: Any, forms: tuple[str, ...]) -> str:
    if rng is None:
        return f"{label} {value}"
    return rng.choice(forms).format(label=label, value=spoken_date_or_time(value, rng))


def describe_args(arguments: dict[str, Any], rng: Any = None, *, note: bool = False) -> str:
    """``{"order_id": "O1", "quantity": 2}`` -> ``order ID O1, quantity 2``; with a seeded
    ``rng``, each pair in one of several forms and the pairs in a varied order and joint
    (``note``: the plainer forms of a think).

    Example:
        >>> describe_args({"order_id": "O1", "quantity": 2})
        'order ID O1, quantity 2'
    """
    forms = _FIELD_FORMS if note else _PAIR_FORMS  # a note to oneself: plainer forms
    pairs = [_pair(slot_label(k), render_value(v), rng, forms) for k, v in arguments.items()]
    if not pairs:
        return "no arguments"
    if rng is None:
        return ", ".join(pairs)
    rng.shuffle(pairs)
    joiner = rng.choice(_ARG_JOINERS)
    if joiner == " and " and len(pairs) > 2:
        return ", ".join(pairs[:-1]) + " and " + pairs[-1]
    return joiner.join(pairs)


def _scalars(record: dict[str, Any], rng: Any = None) -> list[str]:
    fields = [
        _pair(slot_label(k), render_value(v), rng, _FIELD_FORMS)
        for k, v in record.items()
        if isinstance(v, (str, int, float, bool)) and v is not None
    ][:_MAX_FIELDS]
    if rng is not None:  # the record's own key first (it names the thing), the rest in any order
        rest = fields[1:]
        rng.shuffle(rest)
        # figures, ids, dates and times are what the user came for: always said; the words
        # around them not always all
        told = [f for f in rest if any(ch.isdigit() for ch in f)]
        words = [f for f in rest if f not in told]
        keep = told + words[: max(0, rng.randint(2, _MAX_FIELDS - 1) - len(told))]
        fields = fields[:1] + [f for f in rest if f in keep]
    return fields


def describe_result(content: Any, rng: Any = None) -> str:
    """A short, faithful description of a successful tool result; with a seeded ``rng``, the
    fields after the first in a varied order and form, 3 to 6 of them.

    Example:
        >>> describe_result({"order_id": "O2", "status": "placed", "items": [{"id": "I1"}]})
        'order ID O2; status placed; items: 1 found (first: ID I1)'
    """
    joiner = rng.choice(_FIELD_JOINERS) if rng is not None else "; "
    if isinstance(content, list):
        if not content:
            return "nothing found"
        first = content[0]
        head = joiner.join(_scalars(first, rng)) if isinstance(first, dict) else render_value(first)
        return f"{len(content)} found (first: {head})"
    if not isinstance(content, dict):
        return render_value(content)
    parts = [joiner.join(_scalars(content, rng))] if _scalars(content) else []
    for key, value in content.items():
        if isinstance(value, list):
            listed = describe_result(value, rng) if value else "none"
            parts.append(f"{slot_label(key)}: {listed}")
    return joiner.join(p for p in parts if p) or "no details"


def is_empty_result(content: Any, kind: str = "read") -> bool:
    """Whether a successful result of a tool of ``kind`` is a search that found nothing.

    Only a ``read`` tool can come back empty (a write that succeeded did something, even
    when it answers ``{"notified": []}``). A read result is empty when it is ``[]``, or an
    object without nested records whose record lists are all empty and that is a search
    answer (``count``/``total`` 0, or at most 3 echoed query fields).

    Example:
        >>> is_empty_result({"items": [], "count": 0, "query": "x"}), is_empty_result(
        ...     {"items": [1]})
        (True, False)
        >>> is_empty_result({"event_id": "E1", "notified": []}, kind="write")
        False
    """
    if kind != "read":
        return False
    if isinstance(content, list):
        return not content
    if isinstance(content, dict):
        lists = [v for v in content.values() if isinstance(v, list)]
        if not lists or any(lists) or any(isinstance(v, dict) for v in content.values()):
            return False
        counted = any(content.get(k) == 0 for k in ("count", "total"))
        return counted or len(content) - len(lists) <= 3
    return content is None


def invites_resubmission(message: str) -> bool:
    """Whether a refusal says the call may be resubmitted once the user confirms."""
    lowered = message.casefold()
    return any(word in lowered for word in _RETRY_WORDS)


# how the offer of an instruction's "offer X" / "offer to do X" is said (each keeps a cue
# the user reads as an alternative: "I can offer", "option", "you could", "instead")
_OFFERS = (
    ("I can offer", "I can"),
    ("I can offer", "I can"),
    ("One option I can offer is", "One option: I can"),
    ("What I can offer instead is", "What I can do instead is"),
    ("As an alternative, I can offer", "As an alternative, I can"),
)


def spoken_fallback(fallback: str, lead: str = "I'm sorry.", rng: Any = None) -> str:
    """Rewrite a ``fallback_behavior`` instruction as the assistant's own words, after
    ``lead`` (the apology); with a seeded ``rng`` the offer is worded one of several ways.

    Example:
        >>> spoken_fallback("Explain that the red kettle is out of stock and offer the blue mug.")
        "I'm sorry. The red kettle is out of stock. I can offer the blue mug instead."
    """
    offer, offer_to = rng.choice(_OFFERS) if rng is not None else _OFFERS[0]
    text = " ".join(fallback.split())
    text = re.sub(r"^Explain that\s+", "", text)
    text = re.sub(r"[,;]?\s+and offer to\s+", f". {offer_to} ", text)
    text = re.sub(r"[,;]?\s+and offer\s+", f". {offer} ", text)
    text = re.sub(r"([.;:])\s+[Oo]ffer to\s+", f". {offer_to} ", text)
    text = re.sub(r"([.;:])\s+[Oo]ffer\s+", f". {offer} ", text)
    text = re.sub(r"([,;])\s+(?:and\s+)?suggest\s+", r", and I suggest ", text)
    text = re.sub(r"([.;])\s+[Ss]uggest\s+", r". I suggest ", text)
    text = re.sub(r",? or to\s+", ", or ", text).rstrip(".")
    if not re.search(r"\b(instead|alternative|option)\b", text):
        text += " instead"
    return f"{lead} {text[0].upper()}{text[1:]}."
