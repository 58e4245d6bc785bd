"""How people word one slot value in a sentence, by what kind of slot it is.

A phone number is given as "you can reach me at 503-555-0142", a party size as "there will
be 4 of us", a date as "on May 1st", an identifier as "order number ORD-50006": the
label-and-value forms ("the phone is ...") are one way among several, not the only one.
:func:`slot_forms` returns the forms a slot's kind allows, in the user's voice
(``voice="user"``) or in the assistant's when it reads arguments back (``"assistant"``); a
slot of no known kind has none, and callers fall back to their generic label forms.

Every form writes the value exactly as given (dates and times already spoken), so the
assistant's grounding, the validator and ``value_in`` find it; flags and lists never get a
kind (a flag is only understood by its label).

Example:
    >>> slot_forms("party_size", 4, "user")[0]
    'for {value} people'
    >>> slot_forms("customer_id", "C1004", "assistant")
    ('customer {value}', 'customer number {value}', 'customer ID {value}')
    >>> slot_forms("expedited", True, "user")
    ()
"""

from __future__ import annotations

from typing import Any

from simulation.agents.wording import slot_form_data

__all__ = ["slot_forms", "slot_kind"]

_DAYPARTS = ("morning", "afternoon", "evening")
_NUMERIC_KINDS = ("money", "party")


def slot_kind(name: str, value: Any) -> str | None:
    """The kind of a slot (a key of the forms), from its name and value; None when unknown.

    Example:
        >>> slot_kind("order_id", "ORD-50006"), slot_kind("party_size", 1), slot_kind("memo", "x")
        ('id', None, None)
    """
    if isinstance(value, (bool, list, dict)) or value is None:
        return None
    kind = slot_form_data().kinds.get(name)
    if kind is None and name.endswith("_id") and any(ch.isdigit() for ch in str(value)):
        kind = "id"
    if kind == "daypart" and value not in _DAYPARTS:
        return None  # "in the earliest common slot"
    if kind in _NUMERIC_KINDS:
        if not isinstance(value, (int, float)) or value <= (1 if kind == "party" else 0):
            return None  # "for 1 people", "full balance dollars"
    return kind


def slot_forms(name: str, value: Any, voice: str) -> tuple[str, ...]:
    """The kind-specific forms of a slot in ``voice`` ("user" or "assistant"), with
    ``{value}`` and, for an identifier, ``{label}``/``{base}`` already filled in where they
    do not depend on the value; empty when the slot has no known kind."""
    kind = slot_kind(name, value)
    if kind is None:
        return ()
    voiced = slot_form_data().forms[kind]
    forms = voiced.user if voice == "user" else voiced.assistant
    if kind == "id":
        base = name.removesuffix("_id").replace("_", " ")
        label = f"{base} ID"
        return tuple(f.replace("{label}", label).replace("{base}", base) for f in forms)
    return forms
