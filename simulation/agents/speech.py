"""What the scripted assistant says: tool results, arguments and fallbacks in plain words.

Everything here is grounded: a summary only repeats fields of a tool result, a decline
only rewrites the scenario's ``fallback_behavior`` (an instruction such as "Explain that X
and offer Y") into first-person speech ("I'm sorry. X. I can offer Y instead").
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from mads_bench.text import normalise
from simulation.agents.settings import SETTINGS
from simulation.agents.slot_forms import slot_forms
from simulation.agents.text import CLOCK, ISO_DATE, joined, render_value, slot_label, value_in
from simulation.agents.wording import assistant_wording, word_lists

_MAX_FIELDS = 6
_WORDS, _LISTS = assistant_wording(), word_lists()
# a result told to the user: the forms of a note and a few of speech
_REPORT_FORMS = (*_WORDS.field_forms, *_WORDS.report_forms)


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
    if match := ISO_DATE.match(value):
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
    if match := CLOCK.match(value):
        hour, minute = int(match.group(1)), match.group(2)
        half = "am" if hour < 12 else "pm"
        twelve = hour % 12 or 12
        forms = [value, f"{twelve}:{minute} {half}"]
        if minute == "00" and hour not in (0, 12):  # "12 pm" is ambiguous to many
            forms.append(f"{twelve} {half}")
        return rng.choice(forms)
    return value


def _words(tool: str, rng: Any) -> tuple[str, list[str], str]:
    """A tool's verb (a synonym per ``rng``), the words after it and a determiner."""
    verb, *rest = slot_label(tool).split()
    verb = _LISTS.verb_names.get(verb, verb)
    if rng is None:
        return verb, rest, "the"
    noun = " ".join(rest)
    if noun in _WORDS.noun_synonyms:
        rest = rng.choice(_WORDS.noun_synonyms[noun]).split()
    the = rng.choice(_WORDS.determiners)
    if the == "this" and rest and _plural(rest[-1]):
        the = "these"
    return rng.choice(_WORDS.verb_synonyms.get(verb, (verb,))), rest, the


def _plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "us"))


def spoken_action(tool: str, rng: Any = None) -> str:
    """A tool name as the action a person would name: a verb and its object; with a seeded
    ``rng``, the verb and determiner vary ("reserve your flight").

    Example:
        >>> spoken_action("cancel_service_appointment"), spoken_action("search_flights")
        ('cancel the service appointment', 'search flights')
        >>> spoken_action("get_order_details"), spoken_action("respond_to_invitation")
        ('look up the order details', 'respond to the invitation')
    """
    verb, rest, the = _words(tool, rng)
    if not rest or verb in _LISTS.bare_verbs:
        return " ".join([verb, *rest])
    if rest[0] in _LISTS.object_prepositions:
        return " ".join([verb, rest[0], the, *rest[1:]]) if rest[1:] else f"{verb} {rest[0]}"
    return " ".join([verb, the, *rest])


def spoken_object(tool: str, rng: Any = None) -> str:
    """What a tool acts on, as a noun phrase ("the service appointment", "flights").

    Example:
        >>> spoken_object("cancel_service_appointment"), spoken_object("respond_to_invitation")
        ('the service appointment', 'the invitation')
    """
    _, rest, the = _words(tool, rng)
    verb = slot_label(tool).split()[0]  # the tool's own verb, not a synonym
    if not rest:
        return f"{the} {verb}"
    if rest[0] in _LISTS.object_prepositions:  # "respond to invitation" acts on the invitation
        return f"{the} {' '.join(rest[1:])}" if rest[1:] else f"{the} {verb}"
    return " ".join(rest) if verb in _LISTS.bare_verbs else f"{the} {' '.join(rest)}"


def search_phrase(tool: str) -> str:
    """A look-up as the thing that may come back empty ("the search for flights").

    Example:
        >>> search_phrase("search_flights"), search_phrase("get_reservation")
        ('the search for flights', 'the look-up of the reservation')
    """
    verb = slot_label(tool).split()[0]
    noun = "search for" if verb in _LISTS.bare_verbs else "look-up of"
    return f"the {noun} {spoken_object(tool)}"


def entity_names(contents: Any) -> dict[str, str]:
    """Identifier -> name of every record in tool results that has both (``RST-101`` ->
    ``Maison Lune``): a person names the restaurant, not its internal id.

    Only a record's own id (its first ``*_id`` field) takes its name; the ids after it point
    at other records (a payee's ``customer_id``).

    Example:
        >>> entity_names([{"restaurants": [{"restaurant_id": "RST-1", "name": "Lune"}]}])
        {'RST-1': 'Lune'}
        >>> entity_names([{"payee_id": "P-1", "name": "Gym", "customer_id": "C-1"}])
        {'P-1': 'Gym'}
    """
    names: dict[str, str] = {}

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            name = next((node[k] for k in _LISTS.name_fields if isinstance(node.get(k), str)), None)
            # the record's own id is its first one; the others point at other records
            own = next((v for k, v in node.items() if k.endswith("_id")), None)
            if isinstance(own, str) and name and name != own:
                names.setdefault(own, name)
            for value in node.values():
                walk(value)

    walk(list(contents))
    return names


def _pair(
    name: str,
    value: Any,
    rng: Any,
    forms: tuple[str, ...],
    voice: str | None = None,
    names: dict[str, str] | None = None,
) -> str:
    """One field in words: an identifier a result names by its name (``voice`` and ``names``
    given), a kind-specific form (``voice`` given) now and then, else one of ``forms``."""
    label, text = slot_label(name), render_value(value)
    if rng is None or isinstance(value, bool):  # a flag is only understood by its label
        return f"{label} {text}"
    if voice and names and isinstance(value, str) and value in names:
        base = name.removesuffix("_id").replace("_", " ")
        return rng.choice(_WORDS.named_forms).format(base=base, name=names[value])
    text = spoken_date_or_time(text, rng)
    natural = slot_forms(name, value, voice) if voice else ()
    if natural and rng.random() < SETTINGS.assistant_slot_form_share:
        return rng.choice(natural).format(value=text)
    return rng.choice(forms).format(label=label, value=text)


def describe_args(
    arguments: dict[str, Any],
    rng: Any = None,
    *,
    note: bool = False,
    names: dict[str, str] | None = None,
) -> str:
    """``{"order_id": "O1", "quantity": 2}`` -> ``order ID O1, quantity 2``; with a seeded
    ``rng``, each pair in one of several forms (a slot of a known kind often as its kind is
    said: "on May 1st", "for 4 people") and the pairs in a varied order and joint (``note``:
    the plainer forms of a think).

    Example:
        >>> describe_args({"order_id": "O1", "quantity": 2})
        'order ID O1, quantity 2'
    """
    forms = _WORDS.field_forms if note else _WORDS.pair_forms  # a note to oneself: plainer forms
    voice = None if note else "assistant"
    pairs = [_pair(k, v, rng, forms, voice, names) for k, v in arguments.items()]
    if not pairs:
        return "no arguments"
    if rng is None:
        return ", ".join(pairs)
    rng.shuffle(pairs)
    return joined(pairs, _WORDS.arg_joiners, rng)


def report_fields(
    record: dict[str, Any], known: str | None = None, names: dict[str, str] | None = None
) -> list[tuple[str, Any]]:
    """The scalar fields of a result record a report says, in order, at most ``_MAX_FIELDS``:
    the record's own key first; with ``known`` (what the user said, normalised), only fields
    new to the user after it (no zeros, flags or bookkeeping dates), its state, then its figures.

    Example:
        >>> report_fields({"id": "A1", "status": "open", "total": 0, "due": "2026-05-01"}, "")
        [('id', 'A1'), ('status', 'open'), ('due', '2026-05-01')]
    """
    items = [(k, v) for k, v in record.items() if isinstance(v, (str, int, float, bool))]
    if known is not None:  # told to the user: what is new to them, figures first, no zeros
        rest = [
            (k, v)
            for k, v in items[1:]
            if not isinstance(v, bool)
            and v not in (0, "")
            and k not in _LISTS.bookkeeping_fields
            and not value_in(v, known)
            and not (isinstance(v, str) and v in (names or {}) and normalise(names[v]) in known)
        ]
        states = [(k, v) for k, v in rest if k in _LISTS.state_fields]
        figures = [(k, v) for k, v in rest if must_tell(k, v) and (k, v) not in states]
        items = items[:1] + states + figures + [i for i in rest if i not in figures + states]
    return items[:_MAX_FIELDS]


def must_tell(key: str, value: Any) -> bool:
    """Whether a report always says this field: what state the record is in, or a figure, an
    id, a date or a time (what the user came for); the words around them not always all.

    Example:
        >>> must_tell("status", "shipped"), must_tell("total", 42.5), must_tell("note", "hi")
        (True, True, False)
    """
    return key in _LISTS.state_fields or any(ch.isdigit() for ch in render_value(value))


def _scalars(
    record: dict[str, Any],
    rng: Any = None,
    known: str | None = None,
    names: dict[str, str] | None = None,
    what: str | None = None,
) -> list[str]:
    """The record's :func:`report_fields` in words; with a seeded ``rng``, those after the first
    in any order, every :func:`must_tell` field and a few of the others."""
    items = report_fields(record, known, names)
    forms, voice = (_REPORT_FORMS, "assistant") if known is not None else (_WORDS.field_forms, None)
    # the record's own key keeps its identifier (the user's reference); others may be named
    fields = [
        _pair(k, v, rng, forms, voice, names if i else None) for i, (k, v) in enumerate(items)
    ]
    if what and items and items[0][0].endswith("_id"):  # "your reservation RB-0024"
        key, value = items[0]
        if what.endswith(key.removesuffix("_id").replace("_", " ")):
            fields[0] = f"{what} {render_value(value)}"
    if rng is not None:  # the record's own key first (it names the thing), the rest in any order
        rest = list(zip(items[1:], fields[1:], strict=True))
        rng.shuffle(rest)
        told = [f for (k, v), f in rest if must_tell(k, v)]
        words = [f for (k, v), f in rest if not must_tell(k, v)]
        keep = told + words[: max(0, rng.randint(2, _MAX_FIELDS - 1) - len(told))]
        fields = fields[:1] + [f for _, f in rest if f in keep]
    return fields


def describe_result(
    content: Any,
    rng: Any = None,
    known: str | None = None,
    names: dict[str, str] | None = None,
    what: str | None = None,
) -> str:
    """A short, faithful description of a successful tool result; with a seeded ``rng``, the
    fields after the first in a varied order and form, 3 to 6 of them. With ``known`` (the
    user's words, normalised), a report to the user: fields that only repeat what the user
    said are left out, and a nested list is named by its items' first fields.

    Example:
        >>> describe_result({"order_id": "O2", "status": "placed", "items": [{"id": "I1"}]})
        'order ID O2; status placed; items: 1 found (first: ID I1)'
        >>> describe_result({"order_id": "O2", "city": "Oslo", "items": [{"id": "I1"}]},
        ...                 known="cancel o2 in oslo")
        'order ID O2; items: ID I1'
    """
    # a report joins with no comma: "shipped on March 17, 7721904431" reads as a year
    joiners = _WORDS.field_joiners if known is None else ("; ", " | ")
    joiner = rng.choice(joiners) if rng is not None else "; "
    if isinstance(content, list):
        if not content:
            return "nothing found"
        if known is not None and all(isinstance(item, dict) for item in content):
            heads = [_scalars(item, rng, known, names)[:1] for item in content[:3]]
            more = ", among others" if len(content) > 3 else ""
            if any(heads):
                return ", ".join(h[0] for h in heads if h) + more
        if known is not None and not isinstance(content[0], (dict, list)):
            return render_value(content)
        first = content[0]
        head = joiner.join(_scalars(first, rng)) if isinstance(first, dict) else render_value(first)
        return f"{len(content)} found (first: {head})"
    if not isinstance(content, dict):
        return render_value(content)
    scalars = _scalars(content, rng, known, names, what)
    parts = [joiner.join(scalars)] if scalars else []
    for key, value in content.items():
        if isinstance(value, list):
            listed = describe_result(value, rng, known, names) if value else "none"
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


def spoken_fallback(fallback: str, lead: str = "I'm sorry.", rng: Any = None) -> str:
    """Rewrite a ``fallback_behavior`` instruction as the assistant's own words, after
    ``lead`` (the apology); with a seeded ``rng`` the offer is worded one of several ways.

    Example:
        >>> spoken_fallback("Explain that the red kettle is out of stock and offer the blue mug.")
        "I'm sorry. The red kettle is out of stock. I can offer the blue mug instead."
    """
    offer, offer_to = rng.choice(_WORDS.offers) if rng is not None else _WORDS.offers[0]
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
