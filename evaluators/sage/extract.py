"""Text-only extraction used by the compiler when a turn carries no dialogue acts.

* ``extract_user_values``: candidate slot values the user supplies in ``u_t`` (categorical
  values of the service, times, dates, counts, "any will do" statements, quoted and
  capitalised names, values known from SGD train in any case), each with an extraction
  confidence; the compiler keeps those at or above the confidence floor (0.5).
* ``request_sentences``: sentences of ``a_t`` that ask the user for a field (questions with a
  wh-word or a preference phrase); which slot they ask for is decided later, in S2.
* ``CONFIRMATION_CUES``: surface cues of a confirmation, used by the S2 confirmation check.

All of this is deterministic pattern matching (and a lexicon lookup, `evaluators.sage.lexicon`):
no model is involved here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evaluators.sage.lexicon import Lexicon, bundled_lexicon
from evaluators.sage.normalize import normalize_text, parse_date, parse_time
from evaluators.sage.workflow import ServiceSpec
from mads_bench.text import split_sentences

_STOP_CAPS = {
    "i",
    "i'm",
    "i'd",
    "i'll",
    "i've",
    "ok",
    "okay",
    "yes",
    "no",
    "thanks",
    "thank",
    "please",
    "sure",
    "great",
    "hi",
    "hello",
    "hey",
    "cool",
    "perfect",
    "nope",
    "yeah",
    "alright",
    "sounds",
    "can",
    "could",
    "would",
    "will",
    "what",
    "which",
    "where",
    "when",
    "how",
    "is",
    "are",
    "do",
    "does",
    "that",
    "this",
    "it",
    "the",
    "a",
    "an",
    "find",
    "get",
    "book",
    "show",
    "let",
    "tell",
}
_PREPOSITIONS = {"in", "at", "on", "from", "to", "for", "with", "near", "by", "of", "and"}
_COUNT_NOUNS = (
    r"people|persons|person|tickets?|rooms?|adults?|seats?|passengers?|guests?|beds?|bedrooms?"
    r"|baths?|bathrooms?|stars?|riders?|days?|nights?"
)
_WH = re.compile(
    r"\b(what|which|when|where|who|how many|how much|what time|preferred|preference|"
    r"tell me|let me know|please (?:provide|specify|give))\b",
    re.IGNORECASE,
)
_HOURS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_NEED = re.compile(  # requests without a question word: "I'll also need the ...", "And the ...?"
    r"^\s*(?:and (?:the|your|a)\b.*\?\s*$|(?:i'll|i will|i'd|i would) (?:also |still )?"
    r"(?:need|require)\b|(?:could|can|may) i (?:also )?(?:have|get|ask)\b|(?:could|can) you "
    r"(?:also )?(?:give|provide|share|send)\b)",
    re.IGNORECASE,
)
CONFIRMATION_CUES = (
    "confirmed",
    "is booked",
    "been booked",
    "has been made",
    "successfully",
    "all set",
    "please confirm",
    "can you confirm",
    "is that correct",
    "is that right",
    "confirming",
    "transfer is done",
    "have been set",
    "has been set",
    "is done",
    "completed",
)


_INFO_QUESTION = re.compile(
    r"\s*(?:what(?! about)|what's|is|are|does|do|how(?! about)|when|where|which|who|may i|"
    r"by the way)\b",  # "What about in Union City?" offers a value
    re.IGNORECASE,
)


_NOT_A_CHOICE = (  # "any" that asks or refuses, not "any of them will do"
    r"chance|other|others|more|further|additional|else|kind|information|info|details?|help|"
    r"assistance|questions?|problem|way|time|thing|one|body|in|have"
)
_DONTCARE = re.compile(
    r"\b(?:do(?:n't| not) care|do(?:n't| not) mind (?:which|what|the|about)|doesn't matter|"
    r"does not matter|no preference|not particular|not picky|easy on|whatever|"
    r"(?<!n't )(?<!not )(?<!no )(?<!if )(?<!there )(?<!see )(?<!want )(?<!have )"
    rf"any (?:of (?:my|his|her|their|the|them)\b|(?!(?:{_NOT_A_CHOICE})\b)[a-z]+))",
    re.IGNORECASE,
)
"""A statement that any value will do (SGD's ``dontcare``): "happy with any model"."""


@dataclass(frozen=True)
class UserValue:
    """A value the user appears to supply, with the slots it may fill."""

    span: str
    kind: str
    confidence: float
    slots: tuple[str, ...] = ()


def extract_user_values(
    text: str, service: ServiceSpec, asked: str = "", lexicon: Lexicon | None = None
) -> list[UserValue]:
    """Candidate values in a user utterance, most specific first, without overlaps.

    ``asked`` is the agent turn before it: after "How many …?" a bare number ("I want four.")
    is a count. ``lexicon`` holds the values known from SGD train, read in any case (default:
    the shipped one).
    """
    lexicon = bundled_lexicon() if lexicon is None else lexicon
    found: list[UserValue] = []
    norm = f" {normalize_text(text)} "
    for slot in service.slots.values():
        for value in slot.possible_values:
            nv = normalize_text(value)
            if len(nv) >= 3 and nv not in {"true", "false", "dontcare"} and f" {nv} " in norm:
                found.append(UserValue(value, "categorical", 0.9, (slot.name,)))
    time_slots = tuple(s for s in service.slots if "time" in s)
    date_slots = tuple(s for s in service.slots if "date" in s)
    for m in re.finditer(
        r"\b(?:(?:half|quarter) (?:past|to) \d{1,2}|\d{1,2}(?::\d{2})? ?(?:am|pm|a\.m\.|p\.m\.)"
        rf"|\d{{1,2}}:\d{{2}}|noon|(?:\d{{1,2}}|{_HOURS})(?: o'clock)?"
        r"(?= in the (?:morning|evening|afternoon)| at night))"
        r"(?: in the (?:morning|evening|afternoon)| at night)?",
        text,
        re.IGNORECASE,
    ):
        if parse_time(m.group(0)) and time_slots:
            found.append(UserValue(m.group(0), "time", 0.8, time_slots))
    for m in re.finditer(
        r"\b(?:today|tomorrow|day after tomorrow|(?:next |this )?(?:monday|tuesday|wednesday|"
        r"thursday|friday|saturday|sunday)|(?:january|february|march|april|may|june|july|august|"
        r"september|october|november|december) \d{1,2}(?:st|nd|rd|th)?|(?:the )?\d{1,2}(?:st|nd|"
        r"rd|th)(?: of \w+)?)\b",
        text,
        re.IGNORECASE,
    ):
        if parse_date(m.group(0)) and date_slots:
            found.append(UserValue(m.group(0), "date", 0.8, date_slots))
    count_slots = tuple(
        name
        for name, slot in service.slots.items()
        if re.search(r"^number_|passengers|travelers|riders|size|seats|tickets|rooms|adults", name)
        or (slot.possible_values and all(v.isdigit() for v in slot.possible_values))
    )
    for m in re.finditer(
        rf"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten) ({_COUNT_NOUNS})\b",
        text,
        re.IGNORECASE,
    ):
        # the noun picks the slot when one is named for it: "three baths" → number_of_baths
        noun = m.group(2).lower()[:4]
        named = tuple(s for s in count_slots if any(w.startswith(noun) for w in s.split("_")))
        if count_slots:
            found.append(UserValue(m.group(1), "count", 0.7, named or count_slots))
    if count_slots and re.search(r"\bhow many\b", asked, re.IGNORECASE):
        for m in re.finditer(rf"\b(\d+|{_HOURS})\b", text, re.IGNORECASE):
            found.append(UserValue(m.group(1), "count", 0.6, count_slots))
    sentences = split_sentences(text, newlines=False)
    for sentence in sentences:
        if not sentence.rstrip().endswith("?") and _DONTCARE.search(sentence):
            found.append(UserValue("dontcare", "dontcare", 0.6))  # any slot of s_t may hold it
    for m in re.finditer(r"\"([^\"]{2,40})\"", text):
        found.append(UserValue(m.group(1), "quoted", 0.7))
    for sentence in sentences:
        if _INFO_QUESTION.match(sentence):  # asking about a result, not supplying a value
            continue
        words = sentence.split()
        for m in re.finditer(
            r"(?:[A-Z][\w'&-]*|\d+[A-Za-z]*)(?:\s+(?:[A-Z][\w'&-]*|of|de|the|and|&|\d+))*", sentence
        ):
            parts = m.group(0).strip(" ,.?!").split()
            while parts and parts[0].lower() in _STOP_CAPS | _PREPOSITIONS:
                parts = parts[1:]  # "In San Jose" → "San Jose"
            span = " ".join(parts)
            if not span or span.isdigit():
                continue
            at_start = words and sentence.startswith(span) and len(span.split()) == 1
            if not at_start:
                found.append(UserValue(span, "name", 0.6))
        for value in lexicon.find(normalize_text(sentence)):  # "it is sacramento"
            slots = lexicon.slots_for(value, service.slots)
            if slots:
                found.append(UserValue(value, "known", 0.6, slots))
    return _dedupe(found)


def _dedupe(values: list[UserValue]) -> list[UserValue]:
    """Keep the most confident reading of overlapping spans."""
    kept: list[UserValue] = []
    for value in sorted(values, key=lambda v: (-v.confidence, -len(v.span))):
        nv = normalize_text(value.span)
        if any(
            (nv in normalize_text(k.span) or normalize_text(k.span) in nv)
            and not (value.kind == k.kind == "count" and value.slots != k.slots)  # 1 star, 1 room
            for k in kept
        ):
            continue
        kept.append(value)
    return kept


def request_sentences(text: str, known_values: tuple[str, ...] = ()) -> list[str]:
    """Sentences of an agent reply that ask the user for a field.

    Sentences that carry a confirmation cue or repeat a known value (offers, confirmations)
    are not requests.
    """
    out = []
    known = [f" {normalize_text(v)} " for v in known_values if len(v) > 2]
    for sentence in split_sentences(text, newlines=False):
        norm = f" {normalize_text(sentence)} "
        if has_confirmation_cue(sentence) or any(k in norm for k in known):
            continue
        asks = (
            sentence.endswith("?")
            or len(sentence.split()) <= 6
            or re.search(r"tell me|let me know|please", sentence, re.IGNORECASE)
        )
        if (_WH.search(sentence) and asks) or _NEED.search(sentence):
            out.append(sentence)
    return out


_DONE = re.compile(
    r"\b(?:has|have|is|are|was|were|been|i've|i have|i)\s+(?:\w+\s+)?(?:booked|reserved|"
    r"confirmed|scheduled|added|made|ordered|purchased|bought|placed|completed|sent|transferred|"
    r"initiated|started|set up|created|rented)\b",
    re.IGNORECASE,
)


def has_confirmation_cue(text: str) -> bool:
    """True when the agent text carries a lexical confirmation or completion cue."""
    norm = f" {normalize_text(text)} "
    return bool(_DONE.search(text)) or any(
        f" {normalize_text(c)} " in norm for c in CONFIRMATION_CUES
    )


_CONFIRM_REQUEST = re.compile(
    r"\b(?:please confirm|can you confirm|could you confirm|confirm (?:that|the|these|this|me)|"
    r"to confirm|confirming|is (?:that|this|it|everything) (?:correct|right|ok|okay|fine)|"
    r"details correct|shall i|should i|do you want me to|would you like me to|want me to|"
    r"please verify|to verify|kindly (?:ensure|confirm|verify))\b",
    re.IGNORECASE,
)
_SUCCESS = re.compile(
    r"\b(?:all set|good to go|(?:is|are|has been|have been|was|were) (?:now )?(?:confirmed|"
    r"booked|reserved|scheduled|placed|made|completed|done|sent|processed|set up)|"
    r"went through|taken care of|successfully|i've made|i have made|"
    r"(?:went|gone) ahead and (?:booked|reserved|placed|made|scheduled|ordered|bought|"
    r"purchased|sent|transferred|set up|added))\b",
    re.IGNORECASE,
)


def claims_success(text: str) -> bool:
    """True when an agent reply reports the task as done (a statement, not a question and
    not a request to confirm the details first)."""
    for sentence in split_sentences(text, newlines=False):
        if sentence.rstrip().endswith("?") or _CONFIRM_REQUEST.search(sentence):
            continue
        if _DONE.search(sentence) or _SUCCESS.search(sentence):
            return True
    return False
