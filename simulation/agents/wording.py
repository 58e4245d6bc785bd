"""The agents' wording as data: the JSON files beside the SGD phrasebank, validated once.

* ``user_phrases.json`` — the user's acts (agree, give, thanks, ...), the second sentences that
  may follow them, openers, slot-value forms and lead-ins, tone remarks, style slips;
* ``assistant_phrases.json`` — the assistant's acts (asks, confirmations, declines, reports,
  a step's reasoning) and its speech (argument and field forms, synonyms, offers);
* ``slot_forms.json`` — how a slot value is worded by kind, in either voice;
* ``prompts.json`` — the fixed text of the LLM agents' prompts (step formats, rules);
* ``cues.json`` — the cue words the agents and the validator read (:mod:`.text`);
* ``word_lists.json`` — closed word lists the agents' rules read, never say (the
  phrasebank's mining vocabulary, the words a greeting opens with).

Each file is read once, on first use, into a pydantic model (``extra="forbid"``); a malformed
file is a :class:`~mads_bench.loading.CatalogError` naming the file and the field. An act may
declare ``cues``: what the other agent must read in each of its phrases (a yes, a
confirmation question, a completion report, a decline with an alternative). The detectors of
:mod:`simulation.agents.text` check every phrase at load, placeholders filled in, so a phrase
the other side would misread cannot ship. Order is kept: the RNG picks by index.

Example:
    >>> user_wording().acts["agree"].cues
    ('yes',)
    >>> "{question}" in assistant_wording().acts["confirm"].phrases[0]
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from mads_bench.loading import CatalogError, load_model

HERE = Path(__file__).parent
Phrases = tuple[str, ...]
Cue = Literal["yes", "confirmation", "completion", "declines", "decline_with_alternative",
              "question_slot"]  # fmt: skip
ModelT = TypeVar("ModelT", bound=BaseModel)
# cue -> the detector of simulation.agents.text every phrase must pass ("" for the placeholder)
DETECTORS = {
    "yes": "is_affirmative",
    "confirmation": "asks_confirmation",
    "completion": "reports_completion",
    "declines": "declines",
    "decline_with_alternative": "declines_with_alternatives",
    "question_slot": "",  # the phrase holds the {question} a confirm_question fills
}
_SAMPLE = {
    "facts": "status booked", "tool": "book table", "change": " or change the time",
    "message": "Tables are full.", "slot": "time", "value": "19:00", "lead": "I can now",
    "action": "book table", "args": "time 19:00", "question": "<question>",
}  # fmt: skip


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PhraseSet(_Strict):
    """One act's realisations, its note, the cues it must carry and the phrasebank's share."""

    note: str = ""
    cues: tuple[Cue, ...] = ()
    mined_from: Phrases = ()
    phrases: Phrases = ()


class UserWording(_Strict):
    """``user_phrases.json``."""

    about: str
    acts: dict[str, PhraseSet]
    tails: dict[str, Phrases]  # second sentences after an act's realisation (none says no)
    openers: Phrases
    fact_forms: Phrases
    fact_forms_not_alone: Phrases
    fact_leads: Phrases
    second_leads: Phrases  # a second sentence for the rest of the values, when there are several
    joiners: Phrases
    tone: dict[str, Phrases]
    typos: dict[str, str]
    abbreviations: dict[str, str]
    hedges: Phrases


class AssistantWording(_Strict):
    """``assistant_phrases.json``."""

    about: str
    acts: dict[str, PhraseSet]
    # ways of writing one "label value" pair; none puts a status word after "is" (the
    # validator reads "X is cancelled" as a claim) or reads as a completion claim
    pair_forms: Phrases
    arg_joiners: Phrases
    field_forms: Phrases
    report_forms: Phrases
    field_joiners: Phrases
    verb_synonyms: dict[str, Phrases]  # other verbs a person would use for a tool's verb
    determiners: Phrases
    noun_synonyms: dict[str, Phrases]  # other names for what a tool acts on
    named_forms: Phrases
    # an instruction's "offer X" / "offer to do X" said: each keeps a cue the user reads as an
    # alternative ("I can offer", "option", "you could", "instead")
    offers: tuple[tuple[str, str], ...]


class VoicedForms(_Strict):
    user: Phrases
    assistant: Phrases


class SlotForms(_Strict):
    """``slot_forms.json``: forms by slot kind, and the kind of each slot name."""

    about: str
    forms: dict[str, VoicedForms]
    kinds: dict[str, str]

    @field_validator("kinds")
    @classmethod
    def _kinds_have_forms(cls, kinds: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        unknown = sorted(set(kinds.values()) - set(info.data.get("forms", {})))
        if unknown:
            raise ValueError(f"kinds without forms: {unknown}")
        return kinds


class PromptText(_Strict):
    """``prompts.json``: the fixed text of the LLM agents' prompts."""

    about: str
    step_formats: dict[str, str]
    assistant_rules: str
    assistant_prompt: str
    tools_header: str
    brief_tools_header: str
    user_prompt: str
    who_persona: str
    who_brief: str
    situation: str
    behaviors: dict[str, str]
    goal_revision: str
    impossible: str
    user_rules: str


class CueLexicon(_Strict):
    """``cues.json``: the words of the cue detectors of :mod:`simulation.agents.text`."""

    about: str
    confirmation: Phrases
    completion: Phrases
    affirmative: Phrases
    negative: Phrases
    decline: Phrases
    limitation: Phrases
    alternative: Phrases
    resubmission: Phrases

    def pattern(self, name: str) -> re.Pattern[str]:
        """Whole words or phrases of one list, case-insensitive."""
        words = "|".join(re.escape(word) for word in getattr(self, name))
        return re.compile(rf"\b(?:{words})\b", re.IGNORECASE)


class WordLists(_Strict):
    """``word_lists.json``: the closed word lists the agents' rules read (its ``about``)."""

    about: str
    # the phrasebank's mining
    domain_words: frozenset[str]  # common in every SGD domain, but each names an SGD task
    inform_words: frozenset[str]  # what may stand around an inform's {value}
    inform_before: frozenset[str]  # the word right before it, if any
    ask_words: frozenset[str]  # what may stand around an ask's {label}
    ask_before: frozenset[str]  # the word right before it
    leave_taking: Phrases  # a thank-you with one of these ends the conversation
    greeting_words: frozenset[str]  # a sample message opening with one greets
    label_words: dict[str, str]  # a slot name's part -> its words in the label
    months: Phrases  # January first
    # the objective with a value cut out: the neighbouring words' roles
    determiners: frozenset[str]
    prepositions: frozenset[str]
    function_words: frozenset[str]  # neither a determiner nor a preposition
    detail_kinds: frozenset[str]  # slot kinds the opening request may leave for later
    # a tool name said as an action, and a result record as a report
    verb_names: dict[str, str]
    bare_verbs: frozenset[str]  # no "the" before their object ("search flights")
    object_prepositions: frozenset[str]
    name_fields: Phrases  # the first of these a record has names it
    state_fields: frozenset[str]  # what state a record is in: told before its figures
    bookkeeping_fields: frozenset[str]  # when a record was made: never told


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "it"


def check_cues(path: Path, acts: dict[str, PhraseSet]) -> None:
    """Every phrase of an act carries the act's cues; else a CatalogError naming the phrase."""
    from simulation.agents import text

    for act, phrase_set in acts.items():
        for cue in phrase_set.cues:
            detector = getattr(text, DETECTORS[cue], lambda said: "<question>" in said)
            for index, phrase in enumerate(phrase_set.phrases):
                where = f"acts.{act}.phrases[{index}]"
                try:
                    filled = phrase.format_map(_Blank(_SAMPLE))
                except (ValueError, IndexError, AttributeError) as err:
                    raise CatalogError(path, where, f"bad placeholder ({err})") from None
                if not detector(filled):
                    name = DETECTORS[cue] or "a {question} placeholder"
                    raise CatalogError(path, where, f"{phrase!r} fails its cue {cue} ({name})")


def _loader(name: str, model: type[ModelT], what: str) -> Callable[[], ModelT]:
    """The loader of one data file: read on first use, validated as ``model``, cues checked."""

    @cache
    def load() -> ModelT:
        data = load_model(HERE / name, model)
        check_cues(HERE / name, getattr(data, "acts", {}))
        return data

    load.__doc__ = f"{what} (``{name}``), loaded once."
    return load


user_wording = _loader("user_phrases.json", UserWording, "The user's phrase sets")
assistant_wording = _loader("assistant_phrases.json", AssistantWording, "The assistant's phrases")
slot_form_data = _loader("slot_forms.json", SlotForms, "The slot forms by kind")
prompt_text = _loader("prompts.json", PromptText, "The fixed text of the LLM agents' prompts")
cue_lexicon = _loader("cues.json", CueLexicon, "The cue words")
word_lists = _loader("word_lists.json", WordLists, "The closed word lists")
