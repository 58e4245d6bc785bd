"""Seeded realisations of what the scripted user says, so repetitions of a scenario differ.

Every act the scripted user performs (open with the objective, give slot values, agree to a
confirmation, answer a question, thank and leave, ...) has a set of realisations, written in
``user_phrases.json`` (the assistant's in ``assistant_phrases.json``; both loaded by
:mod:`simulation.agents.wording`); the conversation's RNG picks one per use, and the order
in which slot values are given and how each is phrased ("my phone number is 503-555-0142",
"503-555-0142 for the phone number", "the phone number: ...") vary the same way. Same seed,
same text: determinism per conversation is kept, only the seed changes the wording. Values
are always written out in full, so the assistant's grounding and the validator find them.

Every ``agree`` realisation is one the assistant reads as a yes
(:func:`simulation.agents.text.is_affirmative`): the file declares that cue and the loader
checks it. How often each optional wording is taken is :data:`~.settings.SETTINGS`'.

Example:
    >>> import random
    >>> rng = random.Random(0)
    >>> pick("give", rng) in PHRASES["give"]
    True
    >>> facts_sentence([("order ID", "O1")], random.Random(1))
    'Let me give you what I have: the order ID should be O1.'
"""

from __future__ import annotations

import random
import re
from functools import cache
from typing import NamedTuple

from simulation.agents.phrasebank import load_phrasebank
from simulation.agents.settings import SETTINGS
from simulation.agents.text import joined
from simulation.agents.wording import assistant_wording, user_wording, word_lists

__all__ = [
    "PHRASES",
    "Fact",
    "answer_sentence",
    "facts_sentence",
    "fixed",
    "objective_sentence",
    "pick",
    "say",
    "variants",
]

_USER, _ASSISTANT = user_wording(), assistant_wording()
PHRASES: dict[str, tuple[str, ...]] = {a: p.phrases for a, p in _USER.acts.items() if p.phrases}


def say(act: str, rng: random.Random, *, capital: bool = True, **values: str) -> str:
    """One realisation of an assistant ``act`` (of ``assistant_phrases.json``, with ``success``
    / ``req_more`` from the phrasebank), filled in; with ``capital``, it opens with a capital
    (a snake_case tool name keeps its case)."""
    text = rng.choice(variants(act, assistant=True)).format(**values)
    first = text.split(" ", 1)[0]
    return text if "_" in first or not capital else text[:1].upper() + text[1:]


def fixed(act: str, **values: object) -> str:
    """The first realisation of an assistant ``act``, filled in as written: a step's fixed
    reasoning or note, which draws nothing from the step's RNG."""
    return _ASSISTANT.acts[act].phrases[0].format(**values)


_LONE_FACT_FORMS = tuple(f for f in _USER.fact_forms if f not in _USER.fact_forms_not_alone)


def variants(act: str, *, assistant: bool = False) -> tuple[str, ...]:
    """Every realisation of ``act``: the hand-written ones, then the mined ones.

    A mined ``ask`` names the slots as ``{label}`` (no article): it is written here with
    ``{names}``, the labels without "the".
    """
    phrase_set = (_ASSISTANT if assistant else _USER).acts.get(act)
    if phrase_set is None:
        return ()
    bank = load_phrasebank()
    mined = tuple(t for category in phrase_set.mined_from for t in bank[category])
    if act == "ask":
        mined = tuple(t.replace("{label}", "{names}") for t in mined)
    return phrase_set.phrases + mined


def pick(act: str, rng: random.Random) -> str:
    """One realisation of ``act`` (a key of `PHRASES`, hand-written or mined from SGD); for
    some acts, now and then with a second sentence, so that a short reply repeats less across
    conversations."""
    text = rng.choice(variants(act))
    tails = _USER.tails.get(act)
    if act == "agree":  # or an SGD thank-you that does not take leave
        tails = (*_USER.tails["agree"], *_thanks_in_passing())
    # a goodbye is short more often than not; a yes now and then says thanks too
    share = SETTINGS.goodbye_tail_share if act == "thanks_done" else SETTINGS.act_tail_share
    if tails and rng.random() < share:
        text = f"{text} {rng.choice(tails)}"
    return text


_LEAVE_TAKING = re.compile(rf"\b({'|'.join(word_lists().leave_taking)})\b", re.IGNORECASE)


@cache
def _thanks_in_passing() -> tuple[str, ...]:
    """The phrasebank's thank-yous that do not end the conversation ("Thanks a lot.")."""
    return tuple(t for t in load_phrasebank()["thanks"] if not _LEAVE_TAKING.search(t))


def objective_sentence(objective: str, rng: random.Random) -> str:
    """The opening request, phrased one of several ways (a first-person objective as is)."""
    first = objective.split()[0].casefold() if objective.split() else ""
    if first in ("i", "my", "i'd", "i'm"):
        return objective
    objective = objective.rstrip(" .!?")
    text = rng.choice(_USER.openers).format(objective=objective[0].lower() + objective[1:])
    return text if text.endswith("?") else text + "."


def answer_sentence(value: str, rng: random.Random, forms: tuple[str, ...] = ()) -> str:
    """One value given on its own, as SGD users answer a question ("It's 503-555-0142."),
    or now and then in one of its kind's ``forms`` ("You can reach me at 503-555-0142.")."""
    if forms and rng.random() < SETTINGS.user_slot_form_share:
        text = rng.choice(forms).format(value=value) + "."
    else:
        text = rng.choice(load_phrasebank()["inform"]).format(value=value)
    return text[:1].upper() + text[1:]


class Fact(NamedTuple):
    """One slot value the user gives: its label, the value as said, and the ways its kind
    allows saying it (:func:`simulation.agents.slot_forms.slot_forms`, user voice)."""

    label: str
    value: str
    forms: tuple[str, ...] = ()


def _fact_text(fact: Fact, rng: random.Random, *, alone: bool) -> str:
    label, value, forms = Fact(*fact)
    if forms and rng.random() < SETTINGS.user_slot_form_share:
        return rng.choice(forms).format(value=value)
    forms = _LONE_FACT_FORMS if alone else _USER.fact_forms
    return rng.choice(forms).format(label=label, value=value)


def facts_sentence(facts: list[Fact] | list[tuple[str, str]], rng: random.Random) -> str:
    """Slot values as one sentence: seeded order, form per value (a kind-specific one now
    and then), joiner and lead-in."""
    if not facts:
        return ""
    order = list(facts)
    rng.shuffle(order)
    # a lone "Date May 28th." reads like the assistant's words to the role-confusion check:
    # one value on its own gets a form with a verb or a colon
    split = len(order) >= 3 and rng.random() < SETTINGS.facts_split_share
    cut = len(order) // 2 if split else len(order)
    parts = [
        _fact_text(fact, rng, alone=(cut if i < cut else len(order) - cut) == 1)
        for i, fact in enumerate(order)
    ]
    first, second = parts[:cut], parts[cut:]
    text = rng.choice(_USER.fact_leads) + joined(first, _USER.joiners, rng)
    text = text[0].upper() + text[1:] + "."
    if second:
        rest = rng.choice(_USER.second_leads) + joined(second, _USER.joiners, rng)
        text += " " + rest[0].upper() + rest[1:] + "."
    return text
