"""The scripted user's objective with withheld values left out, in grammatical English.

A user who withholds a slot (``partial_information``) or reveals it later
(``incremental_constraint_revelation``) must not state its value in the opening, yet the
scenario's objective often names it ("Pay off the full balance of my Visa credit card from
my checking account"). :func:`vague_objective` rewrites each literal occurrence by the
role the value plays in the sentence, looking only at its neighbouring words:

1. after a word of the slot's own label ("booking H4DDAM", slot ``booking_ref``): the pair
   becomes "my booking";
2. a noun phrase before "of" ("the full balance of my card"): dropped with its determiner
   and the "of" ("my card");
3. a modifier before a noun ("a birthday dinner", "my checking account"): dropped ("a
   dinner", "my account");
4. the object of a preposition ("payment to Harbor Gym;", "a room with video."): the
   prepositional phrase is dropped ("payment;", "a room.");
5. otherwise the value and a determiner before it become "my <slot label>".

A determiner or possessive next to the value is absorbed, so "the my", "my my" or "a my"
cannot appear.
"""

from __future__ import annotations

import re
from typing import Any

from simulation.agents.text import render_value, slot_label
from simulation.agents.wording import word_lists

_WORDS = word_lists()  # the determiners, prepositions and other function words
_FUNCTION_WORDS = _WORDS.determiners | _WORDS.prepositions | _WORDS.function_words
_WORD_BEFORE = re.compile(r"(\s*)([A-Za-z']+)(\s+)$")
_WORD_AFTER = re.compile(r"^(\s+)([A-Za-z']+)")


def vague_objective(objective: str, withheld: dict[str, Any]) -> str:
    """``objective`` without the literal values of ``withheld`` slots (see the module doc).

    Args:
        objective: the scenario's objective sentence.
        withheld: slot name -> value the user does not say yet.

    Returns:
        `str`: the rewritten objective (unchanged when no value occurs in it).

    Example:
        >>> vague_objective(
        ...     "Pay off the full balance of my Visa credit card from my checking account.",
        ...     {"pay_from": "checking", "payment_amount": "full balance"})
        'Pay off my Visa credit card from my account.'
        >>> vague_objective("Pay Harbor Gym to My Gym; I left.", {"payee_name": "My Gym"})
        'Pay Harbor Gym; I left.'
    """
    text = objective
    for name in sorted(withheld):
        value = render_value(withheld[name])
        pattern = r"(?<![\w.-])" + re.escape(value) + r"(?![\w-]|\.\d)"
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            text = _rewrite(text, found.start(), found.end(), slot_label(name))
    return _tidy(text)


def _rewrite(text: str, start: int, end: int, label: str) -> str:
    before, after = text[:start], text[end:]
    prev = _WORD_BEFORE.search(before)
    nxt = _WORD_AFTER.match(after)
    prev_word = prev.group(2).casefold() if prev else ""
    next_word = nxt.group(2).casefold() if nxt else ""
    label_words = set(label.casefold().split()) - _FUNCTION_WORDS
    if prev and prev_word in label_words:  # 1. "booking H4DDAM" -> "my booking"
        head = _drop_determiner(before[: prev.start(2)])
        return f"{head}my {prev.group(2)}{after}"
    if next_word == "of":  # 2. "the full balance of my card" -> "my card"
        return _drop_determiner(before) + after[nxt.end() :].lstrip()
    if nxt and next_word not in _FUNCTION_WORDS:  # 3. "a birthday dinner" -> "a dinner"
        return before + after.lstrip()
    phrase = _drop_determiner(before)
    prep = _WORD_BEFORE.search(phrase)
    if prep and prep.group(2).casefold() in _WORDS.prepositions:  # 4. "payment to Harbor Gym;"
        return phrase[: prep.start()] + after
    return f"{phrase}my {label}{after}"  # 5. the value as a noun phrase of its own


def _drop_determiner(before: str) -> str:
    """``before`` without a trailing determiner or possessive (its space kept)."""
    last = _WORD_BEFORE.search(before)
    if last and last.group(2).casefold() in _WORDS.determiners:
        return before[: last.start(2)]
    return before


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.;:!?)])", r"\1", text)
    text = re.sub(r"\(\s+", "(", text)
    text = re.sub(r"([,;:])(?=[,.;:!?])", "", text)
    return text[:1].upper() + text[1:] if text else text
