"""What the scripted assistant says: tool results, arguments and fallbacks in plain words.

Everything here is grounded: a summary only repeats fields of a tool result, a decline
only rewrites the scenario's ``fallback_behavior`` (an instruction such as "Explain that X
and offer Y") into first-person speech ("I'm sorry. X. I can offer Y instead").
"""

from __future__ import annotations

import re
from typing import Any

from simulation.agents.text import render_value, slot_label

_MAX_FIELDS = 6
_RETRY_WORDS = ("resubmit", "try again", "retry", "confirm it with the customer")


def describe_args(arguments: dict[str, Any]) -> str:
    """``{"order_id": "O1", "quantity": 2}`` -> ``order ID O1, quantity 2``."""
    return ", ".join(f"{slot_label(k)} {render_value(v)}" for k, v in arguments.items()) or (
        "no arguments"
    )


def _scalars(record: dict[str, Any]) -> list[str]:
    fields = [
        f"{slot_label(k)} {render_value(v)}"
        for k, v in record.items()
        if isinstance(v, (str, int, float, bool)) and v is not None
    ]
    return fields[:_MAX_FIELDS]


def describe_result(content: Any) -> str:
    """A short, faithful description of a successful tool result.

    Example:
        >>> describe_result({"order_id": "O2", "status": "placed", "items": [{"id": "I1"}]})
        'order ID O2; status placed; items: 1 found (first: ID I1)'
    """
    if isinstance(content, list):
        if not content:
            return "nothing found"
        first = content[0]
        head = "; ".join(_scalars(first)) if isinstance(first, dict) else render_value(first)
        return f"{len(content)} found (first: {head})"
    if not isinstance(content, dict):
        return render_value(content)
    parts = ["; ".join(_scalars(content))] if _scalars(content) else []
    for key, value in content.items():
        if isinstance(value, list):
            parts.append(f"{slot_label(key)}: {describe_result(value) if value else 'none'}")
    return "; ".join(p for p in parts if p) or "no details"


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


def spoken_fallback(fallback: str, lead: str = "I'm sorry.") -> str:
    """Rewrite a ``fallback_behavior`` instruction as the assistant's own words, after
    ``lead`` (the apology).

    Example:
        >>> spoken_fallback("Explain that the red kettle is out of stock and offer the blue mug.")
        "I'm sorry. The red kettle is out of stock. I can offer the blue mug instead."
    """
    text = " ".join(fallback.split())
    text = re.sub(r"^Explain that\s+", "", text)
    text = re.sub(r"[,;]?\s+and offer to\s+", ". I can ", text)
    text = re.sub(r"[,;]?\s+and offer\s+", ". I can offer ", text)
    text = re.sub(r"([.;:])\s+[Oo]ffer to\s+", r". I can ", text)
    text = re.sub(r"([.;:])\s+[Oo]ffer\s+", r". I can offer ", text)
    text = re.sub(r"([,;])\s+(?:and\s+)?suggest\s+", r", and I suggest ", text)
    text = re.sub(r"([.;])\s+[Ss]uggest\s+", r". I suggest ", text)
    text = re.sub(r",? or to\s+", ", or ", text).rstrip(".")
    if not re.search(r"\binstead\b", text):
        text += " instead"
    return f"{lead} {text[0].upper()}{text[1:]}."
