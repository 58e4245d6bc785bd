"""Text cues of the zero-LLM tracker: clauses, request cues, slot cues and status cues.

The status classifier is NLI-free: weighted regular-expression cues per status, conditioned
on the speaker (a user cannot *complete* a booking by saying it, but accepting an offer or
thanking for information closes a goal in the ATOD annotations; only the system reports
success or failure). It returns `None` when no cue fires, so the caller keeps the status.
The offline tracker no longer moves statuses by it: its per-status weights
(`status_scores`) are features of the fitted status model (`status_features.py`); the
classifier itself backs a judge's unreadable verdicts and tells an unnamed completion report
("Your confirmation number is …") from other clauses.

Example:
    >>> classify_status("I've booked your table; the confirmation number is R-12.", "SYSTEM")
    'completed'
    >>> classify_status("Let's hold off on the hotel for now.", "USER")
    'abandoned'
    >>> split_clauses("Hi. I need a bus to Boston. Also, what's the weather there?")
    ['I need a bus to Boston.', "Also, what's the weather there?"]
"""

from __future__ import annotations

import re

from mads_bench.text import split_sentences

_MIN_CLAUSE_WORDS = 3

REQUEST = re.compile(
    r"\b(i (?:do |also |still |really )?need|i(?:'d| would) (?:also |really |actually )?like|"
    r"i (?:also |really )?want|i(?:'m| am) (?:also )?(?:looking|trying|hoping|planning)|"
    r"looking for|i(?:'ll| will) (?:also )?need|i was thinking about|"
    r"can you|could you|would you|help me|i also|also need|wondering|"
    r"i'd love|please (?:find|book|check|search|get|reserve|buy)|do you know|what about|"
    r"is there|are there|what's|what is|how about|i have to|let's (?:find|book|look))\b",
    re.IGNORECASE,
)
NEW_GOAL = re.compile(
    r"\b(also|another|as well|additionally|one more|separate|second)\b", re.IGNORECASE
)
REFERENCE = re.compile(
    r"\b(those|these|them|it|that one|the one|(?:book|reserve|purchase|buy|get) that)\b",
    re.IGNORECASE,
)
SWITCH = re.compile(r"\b(instead|change (?:it|the \w+|that) to|switch to)\b", re.IGNORECASE)
DEPENDENCY = re.compile(
    r"\b(once|after (?:that|the|you)|as soon as|depending on|depends on|before (?:i|we)|"
    r"if (?:the|that|it) (?:is|goes|works)|then)\b",
    re.IGNORECASE,
)
CLOSING = re.compile(
    r"\b(that covers everything|that'?s (?:all|everything)|that covers it|nothing else|"
    r"thanks for (?:all )?(?:your|the) help|that'?s it for (?:now|today)|have a (?:great|good|"
    r"nice|wonderful) day|goodbye|covers everything)\b",
    re.IGNORECASE,
)

# (pattern, weight) per status; the highest total wins, ties resolved by list order.
_STATUS_CUES: dict[str, dict[str, list[tuple[str, float]]]] = {
    "SYSTEM": {
        "failed": [
            (r"\bunfortunately\b", 1.0),
            (r"\b(no|not any) (available|availability|flights|rooms|tickets|seats|results)\b", 1.5),
            (
                r"\b(sold out|fully booked|unable to|could ?n[o']t (find|book|complete)|"
                r"can ?n[o']t (find|book|complete)|not available|no longer available|declined)\b",
                1.5,
            ),
            (
                r"\b(not (finding|seeing) any|(don'?t|do not) see any|no exact match(es)?|"
                r"(could ?n[o']t|was ?n[o']t able to|wasn'?t able to|unable to) (find|locate) any|"
                r"there (are|were) no)\b",
                1.5,
            ),
        ],
        "completed": [
            (
                r"\b(i'?ve|i have|we'?ve|we have)\s+(successfully\s+)?(booked|reserved|purchased|"
                r"bought|scheduled|confirmed|added|set up|set|transferred|completed|placed|sent|"
                r"started playing|made)\b",
                2.0,
            ),
            (
                r"\b(has|have) been (successfully )?(booked|reserved|purchased|scheduled|confirmed|"
                r"added|transferred|completed|placed|set)\b",
                2.0,
            ),
            (r"\bconfirmation (number|code)\b", 1.5),
            (r"\b(is|are) (now )?(confirmed|booked|all set)\b", 1.5),
            (r"\bnow playing\b|\bsuccessfully\b", 1.0),
        ],
        "pending": [
            (
                r"\b(let me|i'll|i will|i'm|i am)\s+(check|search|look|find|book|reserve|work|"
                r"process|checking|searching|looking|processing|working)",
                1.0,
            ),
            (r"\b(one moment|please hold|searching|looking into)\b", 0.8),
            (
                r"\b(could you|can you|would you like|do you have|what|which|when|how many)\b.*\?",
                0.6,
            ),
        ],
    },
    "USER": {
        "abandoned": [
            (
                r"\b(never ?mind|cancel|hold off|forget (about )?(it|that|the)|skip (it|that|the)|"
                r"don'?t need|no longer need|not interested|changed my mind|i'?ll pass|"
                r"let me think about|put (it|that|the \w+) on hold|not anymore)\b",
                2.0,
            ),
            (
                r"\b(no need to (buy|book|purchase|reserve|order|get)|i'?ll think about it|"
                r"not ready to (book|buy|purchase|reserve))\b",
                2.0,
            ),
        ],
        "completed": [
            (
                r"\b(please|go ahead (and|with)|let'?s|yes,? (please )?)\s*(book|reserve|purchase|"
                r"buy|confirm|proceed)",
                1.5,
            ),
            (
                r"\b(sounds perfect|that works|i'?ll take it|perfect, thanks?|that'?s perfect)\b",
                1.0,
            ),
            (
                r"\bthanks? (you )?for the (info|information|details|update)\b|"
                r"\b(that'?s|that is|really) helpful\b|\blooks right\b",
                1.0,
            ),
        ],
    },
}
_COMPILED = {
    speaker: {
        status: [(re.compile(p, re.IGNORECASE), w) for p, w in cues]
        for status, cues in table.items()
    }
    for speaker, table in _STATUS_CUES.items()
}
_NEGATED_COMPLETION = re.compile(r"\b(not yet|yet\b.*\?|haven'?t|hasn'?t|no need to)\b", re.I)


def split_clauses(text: str) -> list[str]:
    """Split an utterance into sentences; greetings and fragments under 3 words are dropped."""
    parts = split_sentences(text or "")
    return [p for p in parts if len(p.split()) >= _MIN_CLAUSE_WORDS]


def is_request(clause: str) -> bool:
    """Whether a user clause asks for something (a candidate for a new goal)."""
    return bool(REQUEST.search(clause))


def status_scores(clause: str, speaker: str) -> dict[str, float]:
    """Total cue weight per status for one clause (empty when nothing fires)."""
    scores: dict[str, float] = {}
    for status, cues in _COMPILED.get(speaker.upper(), {}).items():
        weight = sum(w for pattern, w in cues if pattern.search(clause))
        if weight:
            scores[status] = weight
    if "completed" in scores and _NEGATED_COMPLETION.search(clause):
        del scores["completed"]
    return scores


def classify_status(clause: str, speaker: str) -> str | None:
    """The status a clause moves its goal to, or None when no cue fires.

    Args:
        clause (`str`): One clause attributed to a goal.
        speaker (`str`): `USER` or `SYSTEM`.

    Returns:
        `str | None`: `completed`, `failed`, `abandoned`, `pending` or None.
    """
    scores = status_scores(clause, speaker)
    return max(scores, key=scores.get) if scores else None


_DATE = re.compile(
    r"\b(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|"
    r"th)?(?:,? \d{4})?|\d{1,2}/\d{1,2}(?:/\d{2,4})?|(?:next |this )?(?:monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday)|tomorrow|today)\b",
    re.IGNORECASE,
)
_TIME = re.compile(r"\b\d{1,2}(?::\d{2})? ?(?:am|pm|a\.m\.|p\.m\.)|\bnoon\b", re.IGNORECASE)
_COUNT = re.compile(
    r"\b(\d+|one|two|three|four|five|six|a couple of) (people|persons|adults|tickets|seats|"
    r"passengers|guests|travell?ers|rooms|nights)\b",
    re.IGNORECASE,
)


def slot_cues(clause: str, slots: tuple[str, ...]) -> dict[str, str]:
    """Dates, times and counts in a clause, named after the intent's matching slot.

    Args:
        clause (`str`): The text.
        slots (`tuple[str, ...]`): The intent's slot names (from the catalogue).

    Returns:
        `dict[str, str]`: e.g. `{"departure_date": "October 12th", "passengers": "2 people"}`.
    """
    found: dict[str, str] = {}
    for pattern, keys in [
        (_DATE, ("date",)),
        (_TIME, ("time",)),
        (_COUNT, ("number", "travelers", "passengers", "group_size", "party_size", "seats")),
    ]:
        match = pattern.search(clause)
        slot = next((s for s in slots if any(k in s for k in keys)), None)
        if match and slot:
            found[slot] = match.group(0)
    return found
