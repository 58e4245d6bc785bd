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

__all__ = ["slot_forms", "slot_kind"]

# kind -> (user forms, assistant forms); "{label}" is the slot's label, "{base}" an
# identifier's label without "ID"
_FORMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "date": (
        (
            "on {value}",
            "for {value}",
            "{value} would be the day",
            "the day is {value}",
            "it's for {value}",
            "{value} suits me",
        ),
        ("on {value}", "for {value}", "dated {value}", "{value} as the day"),
    ),
    "new_date": (
        ("the new date is {value}", "{value} instead", "the new day is {value}"),
        ("to {value}", "new date {value}", "over to {value}"),
    ),
    "check_in": (("checking in on {value}", "arriving {value}"), ("check-in on {value}",)),
    "check_out": (("checking out on {value}", "leaving {value}"), ("check-out on {value}",)),
    "time": (
        ("at {value}", "{value} would be ideal", "for {value}", "around {value} if possible"),
        ("at {value}", "for {value}", "starting {value}"),
    ),
    "phone": (
        (
            "you can reach me at {value}",
            "my number is {value}",
            "call me on {value} if needed",
            "the best number is {value}",
            "my mobile is {value}",
            "text me at {value}",
        ),
        ("contact number {value}", "phone {value}", "reachable at {value}", "with {value} to call"),
    ),
    "guest": (
        (
            "it's under {value}",
            "under the name {value}",
            "the name is {value}",
            "name: {value}",
            "book it for {value}",
            "put it under {value}",
        ),
        ("under the name {value}", "in the name of {value}", "for {value}", "under {value}"),
    ),
    "passenger": (
        ("the passenger is {value}", "it's for {value}", "{value} is traveling"),
        ("for {value}", "passenger {value}", "travelling: {value}"),
    ),
    "surname": (
        ("my last name is {value}", "my surname is {value}", "last name's {value}"),
        ("last name {value}", "surname {value}"),
    ),
    "payee": (
        ("to {value}", "paying {value}", "it goes to {value}", "the money is for {value}"),
        ("to {value}", "paid to {value}"),
    ),
    "city": (
        ("in {value}", "here in {value}", "somewhere in {value}", "I'm in {value}"),
        ("in {value}",),
    ),
    "origin": (
        ("from {value}", "leaving from {value}", "flying out of {value}"),
        ("from {value}", "departing {value}"),
    ),
    "destination": (
        ("to {value}", "going to {value}", "heading to {value}"),
        ("to {value}", "arriving at {value}"),
    ),
    "money": (
        ("{value} dollars", "${value}", "the amount is {value}", "{value} in total"),
        ("{value} dollars", "${value}", "for ${value}", "a total of {value}"),
    ),
    "venue": (
        (
            "at {value}",
            "the place is {value}",
            "{value} is the restaurant",
            "I'd love {value}",
            "{value}, if they have room",
        ),
        ("at {value}", "with {value}"),
    ),
    "merchant": (("at {value}", "the merchant was {value}", "from {value}"), ("at {value}",)),
    "cuisine": (("{value} food", "something {value}", "I'm in the mood for {value}"), ()),
    "party": (
        (
            "for {value} people",
            "a party of {value}",
            "there will be {value} of us",
            "we're {value}",
            "a table for {value}",
        ),
        ("for {value} people", "a party of {value}", "{value} guests", "{value} people"),
    ),
    "product": (("the {value}", "it's the {value}", "I'm after the {value}"), ("the {value}",)),
    "shipping": (
        ("{value} shipping", "ship it {value}", "{value} delivery is fine"),
        ("{value} shipping", "{value} delivery"),
    ),
    "daypart": (
        ("in the {value}", "{value} works best", "sometime in the {value}"),
        ("in the {value}",),
    ),
    "cabin": (("in {value}", "flying {value}", "a seat in {value}"), ("in {value}",)),
    "title": (
        ("it's called {value}", "the title is {value}"),
        ("called {value}", "titled {value}"),
    ),
    "reference": (
        ("my booking reference is {value}", "the reference is {value}", "reference {value}"),
        ("booking {value}", "reference {value}", "booking reference {value}"),
    ),
    "id": (
        (
            "my {label} is {value}",
            "my {base} number is {value}",
            "it's {base} {value}",
            "{base} number: {value}",
            "you'll find it under {value}",
        ),
        ("{base} {value}", "{base} number {value}", "{label} {value}"),
    ),
}
_BY_NAME = {
    "date": "date", "travel_date": "date", "visit_date": "date", "payment_date": "date",
    "meeting_date": "date", "charge_date": "date", "new_date": "new_date",
    "check_in": "check_in", "check_out": "check_out", "time": "time",
    "phone": "phone", "guest_phone": "phone", "guest_name": "guest",
    "passenger_name": "passenger", "last_name": "surname", "payee_name": "payee",
    "city": "city", "origin": "origin", "destination": "destination",
    "amount": "money", "charge_amount": "money", "refund_amount": "money",
    "payment_amount": "money", "restaurant": "venue", "merchant": "merchant",
    "cuisine": "cuisine", "party_size": "party", "new_party_size": "party",
    "product": "product", "shipping_method": "shipping",
    "preferred_time": "daypart", "departure_time": "daypart", "cabin": "cabin", "title": "title",
    "booking_ref": "reference", "booking_reference": "reference",
}  # fmt: skip
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
    kind = _BY_NAME.get(name)
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
    forms = _FORMS[kind][0 if voice == "user" else 1]
    if kind == "id":
        base = name.removesuffix("_id").replace("_", " ")
        label = f"{base} ID"
        return tuple(f.replace("{label}", label).replace("{base}", base) for f in forms)
    return forms
