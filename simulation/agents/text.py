"""Text helpers shared by the scripted agents: value matching, slot labels, cue detection.

Both scripted agents talk in plain text, so they need the same conventions: a slot's
human label (``card_last4`` -> ``card last four digits``), how a value is written
(``premium_economy`` -> ``premium economy``, ``True`` -> ``yes``), and how a value is found
in free text normalised by ``normalise(text, numbers="canonical")`` from `mads_bench.text`
(case-insensitive, ``1,200`` = ``1200`` = ``1200.00``). The cue detectors
(confirmation question, affirmative answer, completion, decline) are keyword rules that also
work on LLM-written messages.

This module is the one home of the yes/no reading (:func:`is_affirmative`, :func:`is_refusal`)
and of the decline lexicon (:data:`DECLINE_CUES`, :data:`LIMITATION_CUES`,
:data:`ALTERNATIVE_CUES`): the scripted
agents, the validator's task-success and faithfulness checks and the APIGen narrator all read
a user's agreement and an assistant's decline through them. The cue words are data,
``cues.json`` beside this module (:func:`simulation.agents.wording.cue_lexicon`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from mads_bench.text import normalise, split_sentences
from simulation.agents.wording import cue_lexicon, word_lists

DONE_TOKEN = "[DONE]"
NOT_PROCESSED_NOTICE = "Sorry, I could not process that request. Could you say it again?"

_CUES, _WORDS = cue_lexicon(), word_lists()
_AFFIRMATIVE = _CUES.pattern("affirmative")
_NEGATIVE = _CUES.pattern("negative")
DECLINE_CUES = _CUES.pattern("decline")
"""A sentence that refuses or reports that something cannot be done."""
LIMITATION_CUES = _CUES.pattern("limitation")
"""A stated limit ("could not", "no longer", "only be"): part of a decline's explanation, but
also said in slot values ("reason: no longer needed"), so never a decline on its own."""
ALTERNATIVE_CUES = _CUES.pattern("alternative")
"""A message that offers something else."""


def slot_label(name: str) -> str:
    """Human label of a slot or argument name.

    Example:
        >>> slot_label("card_last4"), slot_label("customer_id")
        ('card last four digits', 'customer ID')
    """
    return " ".join(_WORDS.label_words.get(part, part) for part in name.split("_"))


def render_value(value: Any) -> str:
    """How a slot value is written in a message (an object as compact JSON). An enum's
    underscores become spaces; an identifier's (it has a digit) stay, so it can be quoted back.

    Example:
        >>> render_value("premium_economy"), render_value(True), render_value(["A B", "C"])
        ('premium economy', 'yes', 'A B and C')
        >>> render_value("credit_card_9513926")
        'credit_card_9513926'
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return " and ".join(render_value(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value if any(c.isdigit() for c in value) else value.replace("_", " ")
    return str(value) if not isinstance(value, dict) else json.dumps(value, sort_keys=True)


def joined(parts: list[str], joiners: tuple[str, ...], rng: Any) -> str:
    """``parts`` joined by one of ``joiners`` drawn per ``rng``; " and " lists three or more
    as "a, b and c"."""
    joiner = rng.choice(joiners)
    if joiner == " and " and len(parts) >= 3:
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    return joiner.join(parts)


def spoken_value(value: Any) -> str:
    """How a person says a slot value: like :func:`render_value`, but an object (an address)
    as its filled-in values in order.

    Example:
        >>> spoken_value({"line1": "210 Grove St", "line2": None, "city": "Jersey City"})
        '210 Grove St, Jersey City'
    """
    if isinstance(value, dict):
        return ", ".join(spoken_value(v) for v in value.values() if v not in (None, "", [], {}))
    return render_value(value)


def value_in(value: Any, normalised_text: str) -> bool:
    """Whether ``value`` (scalar, or every element of a list or object) appears in text
    normalised by ``normalise(text, numbers="canonical")``.

    Booleans never count as appearing: ``true`` is not something a user writes. A whole
    token only: ``3`` is not in ``4.3``, ``O1`` is not in ``o12``.

    Example:
        >>> value_in(142.80, normalise("pay 142.8 dollars", numbers="canonical"))
        True
        >>> value_in("O1", "cancel o12")
        False
        >>> value_in(3, normalise("rating 4.3", numbers="canonical"))
        False
        >>> value_in(3, normalise("for 3.", numbers="canonical"))
        True

    A date or a time also counts when said the way people say it:

        >>> value_in("2026-05-01", "on may 1st please"), value_in("19:30", "at 7:30 pm")
        (True, True)
        >>> value_in("2026-05-01", "on may 11th"), value_in("19:00", "at 9 pm")
        (False, False)

    So does a phrase of three words or more said without its punctuation:

        >>> value_in("Sorry, I have a clash.", "comment sorry i have a clash thanks")
        True
    """
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, list):
        return bool(value) and all(value_in(v, normalised_text) for v in value)
    if isinstance(value, dict):
        leaves = [v for v in value.values() if v not in (None, "", [], {})]
        return bool(leaves) and all(value_in(v, normalised_text) for v in leaves)
    needle = normalise(render_value(value), numbers="canonical")
    if not needle:
        return False
    pattern = r"(?<![\w.-])" + re.escape(needle) + r"(?![\w-]|\.\d)"
    if re.search(pattern, normalised_text) is not None:
        return True
    spoken = _spoken_pattern(value) if isinstance(value, str) else None
    if spoken is not None:
        return re.search(spoken, normalised_text) is not None
    if isinstance(value, str) and len(needle.split()) >= 3:  # a phrase, said unpunctuated
        words = normalise(needle, punctuation="words")
        said = normalise(normalised_text, punctuation="words")
        return bool(words) and re.search(rf"\b{re.escape(words)}\b", said) is not None
    return False


# an ISO date and a 24-hour clock time, as scenario values write them
ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
CLOCK = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def _spoken_pattern(value: str) -> str | None:
    """How an ISO date or ``HH:MM`` time may be said, as a pattern over normalised text:
    "May 1st", "1 May 2026", "7 pm", "7:30 pm" (a date's year is not checked)."""
    if match := ISO_DATE.match(value):
        month_index, day = int(match.group(2)), int(match.group(3))
        if not 1 <= month_index <= 12:
            return None
        month = _WORDS.months[month_index - 1]
        months = rf"(?:{month}|{month[:3]})\.?"
        nth = rf"0?{day}(?:st|nd|rd|th)?"
        return rf"\b{months}\s+(?:the\s+)?{nth}\b|\b{nth}\s+(?:of\s+)?{months}(?![a-z])"
    if match := CLOCK.match(value):
        hour, minute = int(match.group(1)), int(match.group(2))
        twelve, half = hour % 12 or 12, "a" if hour < 12 else "p"
        minutes = rf":0?{minute}" if minute else r"(?::0{1,2})?"
        return rf"(?<![\w:.]){twelve}{minutes}\s*{half}\.?m\b"
    return None


def same_value(a: Any, b: Any) -> bool:
    """Equality after normalisation (``1200`` = ``1,200.0``, case-insensitive strings); objects
    key by key."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(same_value(a[k], b[k]) for k in a)
        )
    said_a, said_b = (normalise(render_value(v), numbers="canonical") for v in (a, b))
    return said_a == said_b


def asks_confirmation(text: str) -> bool:
    """Whether an assistant message asks the user to confirm an action."""
    lowered = text.casefold()
    return "?" in text and any(cue in lowered for cue in _CUES.confirmation)


def is_affirmative(text: str) -> bool:
    """Whether a user message agrees: one sentence says yes and does not refuse.

    Example:
        >>> is_affirmative("I don't trust bots. Yes, go ahead."), is_affirmative("no, wait")
        (True, False)
    """
    # a line break ends a sentence only where more whitespace follows, as it always has here
    parts = split_sentences(text, ends=".!?\n", newlines=False)
    return any(_AFFIRMATIVE.search(s) and not _NEGATIVE.search(s) for s in parts)


def is_refusal(text: str) -> bool:
    """Whether a user message opens with a refusal ("no", "stop", "don't ...").

    Example:
        >>> is_refusal("No, leave it."), is_refusal("I don't trust bots. Try again.")
        (True, False)
    """
    return re.match(r"\W*(no|nope|stop|don't|dont|do not)\b", text, re.IGNORECASE) is not None


def reports_completion(text: str) -> bool:
    """Whether an assistant message reports that the task is done."""
    lowered = text.casefold()
    return any(cue in lowered for cue in _CUES.completion)


def invites_resubmission(message: str) -> bool:
    """Whether a refusal says the call may be resubmitted once the user confirms."""
    lowered = message.casefold()
    return any(cue in lowered for cue in _CUES.resubmission)


def declines(text: str) -> bool:
    """Whether a message (or sentence) declines: "Sorry, that cannot be moved."."""
    return DECLINE_CUES.search(text) is not None


def declines_with_alternatives(text: str, *, limits: bool = False) -> bool:
    """Whether an assistant message declines and offers something else; with ``limits``, a
    stated limit counts as declining (the task-success check's reading of an explanation).

    Example:
        >>> declines_with_alternatives("Unfortunately it is sold out; I can offer the 9:00.")
        True
        >>> declines_with_alternatives("Your table is booked. Would you like anything else?")
        False
        >>> said = "It can only be moved by phone. Would you like the number?"
        >>> declines_with_alternatives(said), declines_with_alternatives(said, limits=True)
        (False, True)
    """
    declined = declines(text) or (limits and LIMITATION_CUES.search(text) is not None)
    return declined and ALTERNATIVE_CUES.search(text) is not None


def mentioned_slots(text: str, slot_names: list[str]) -> list[str]:
    """Slots whose label (or raw name) occurs in ``text``, in ``slot_names`` order.

    Longer labels win: in "the charge amount", ``charge_amount`` matches and ``amount`` does not.

    Example:
        >>> mentioned_slots("Your customer ID and the charge amount?", ["amount", "charge_amount",
        ...                 "customer_id"])
        ['charge_amount', 'customer_id']
    """
    lowered = text.casefold()
    found = set()
    for name in sorted(slot_names, key=lambda n: -len(slot_label(n))):
        for needle in {slot_label(name).casefold(), name}:
            if needle in lowered:
                found.add(name)
                lowered = lowered.replace(needle, " " * len(needle))
    return [name for name in slot_names if name in found]
