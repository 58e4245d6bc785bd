"""Role-confusion check (MADS §3.1): did the simulated user break character?

A user breaks character when it acts as the assistant: writes Pre-Act blocks or tool
calls, offers help ("How can I help you today?"), asks the assistant's questions ("Could
you tell me your customer ID?"), or reports having done the back-office work itself.

1. Rules (decide alone): Pre-Act tags or tool-call JSON in a user message; service phrases
   (:data:`SERVICE_PHRASES`); a question asking for *your* account details.
2. Embedding (all-MiniLM-L6-v2, sentences of every user message encoded in one batch):
   each sentence's best cosine to the assistant-style prototypes
   (:mod:`simulation.validator.prototypes`) against its best cosine to user-style ones
   (generic prototypes plus the persona's own sample messages). A sentence is flagged when
   ``assistant >= ASSISTANT_MIN`` and ``assistant - user >= MARGIN``. Near the boundary
   (``MARGIN - BAND`` .. ``MARGIN + BAND``) a judge decides when one is given.
"""

from __future__ import annotations

import re

from mads_bench.embedding import SentenceEncoder
from mads_bench.text import split_sentences
from simulation.validator.common import DONE_TOKEN, CheckResult, Context, JudgeQuestion
from simulation.validator.prototypes import ASSISTANT_PROTOTYPES, USER_PROTOTYPES

ASSISTANT_MIN = 0.55
MARGIN = 0.12
BAND = 0.06
_PRE_ACT = re.compile(r"<\s*/?\s*(think|plan|action)\b|\"arguments\"\s*:", re.IGNORECASE)
SERVICE_PHRASES = re.compile(
    r"\bhow (?:can|may) i (?:help|assist)\b|\bwhat can i do for you\b|"
    r"\banything else i can (?:help|do|assist)\b|\bi(?:'d| would) be (?:happy|glad) to "
    r"(?:help|assist)\b|\bi(?:'ll| will| can| could) [^.?!]*\bfor you\b|"
    r"\bthank you for (?:contacting|reaching out|your patience|choosing)\b|\bas an ai\b|"
    r"\bi(?:'m| am) (?:an? |your )?(?:ai |virtual |digital )?assistant\b|"
    r"\bhere is what i (?:found|did)\b|\bshall i (?:go ahead|proceed)\b|"
    r"\bi(?:'ve| have) (?:successfully )?(?:cancell?ed|booked|processed|scheduled|refunded|"
    r"issued|updated|opened|filed) (?:your|the customer)",
    re.IGNORECASE,
)
_ASKS_DETAILS = re.compile(
    r"\b(?:what is|what's|could you|can you|would you|please)\b[^?]*\byour\b[^?]*"
    r"\b(?:id|number|account|name|date|reference|email|phone|address|card|order|booking|"
    r"zip|postcode|last four|digits|details|password|passcode)\b[^?]*\?",
    re.IGNORECASE,
)
_FIELDS_ONLY = re.compile(
    r"^(?:\d+\)\s*)?(?:details:\s*)?(?:[\w' -]{1,40}:\s*(?:[^:;]|:(?=\d))+(?:;\s*|$))+$", re.I
)


def sentences(text: str) -> list[str]:
    """Sentences of a user message worth scoring: three or more words, not ``[DONE]``, and
    not a bare ``label: value; ...`` list (giving details is what users do).

    Example:
        >>> sentences("Details: order ID: O1; reason: late. Can you check where it is? [DONE]")
        ['Can you check where it is?']
    """
    parts = split_sentences(text.replace(DONE_TOKEN, " "), strip=" -*•\t")
    return [p for p in parts if len(p.split()) >= 3 and not _FIELDS_ONLY.match(p)]


def rule_findings(text: str) -> list[str]:
    """Why a user message is assistant-like by the rules (empty when it is not).

    Example:
        >>> rule_findings("Sure. How can I help you today?")
        ["offers help: 'How can I help'"]
        >>> rule_findings("Could you tell me your customer ID?")
        ["asks the assistant's question: 'Could you tell me your customer ID?'"]
        >>> rule_findings("Can you help me cancel my order?")
        []
    """
    found = []
    if match := _PRE_ACT.search(text):
        found.append(f"writes assistant markup: {match.group(0)!r}")
    if match := SERVICE_PHRASES.search(text):
        found.append(f"offers help: {match.group(0)!r}")
    if match := _ASKS_DETAILS.search(text):
        found.append(f"asks the assistant's question: {match.group(0).strip()!r}")
    return found


def assistant_like(texts: list[str], embedder: SentenceEncoder | None = None) -> list[bool]:
    """Whether each text, as a user message, could fail this check: a rule finding, or a
    sentence within ``BAND`` of the embedding margin against the generic user prototypes
    (a persona's own samples can only make it more user-like). For vetting phrases that
    scripted users say, e.g. those mined from SGD.

    Example:
        >>> assistant_like(["Could you tell me your customer ID?"], embedder=object())
        [True]
    """
    flagged = [bool(rule_findings(t)) for t in texts]
    queued = [(i, s) for i, t in enumerate(texts) if not flagged[i] for s in sentences(t)]
    if not queued:
        return flagged
    embedder = embedder or SentenceEncoder()
    assistant = embedder.encode(list(ASSISTANT_PROTOTYPES))
    users = embedder.encode(list(USER_PROTOTYPES))
    vectors = embedder.encode([s for _, s in queued])
    for (i, _), vector in zip(queued, vectors, strict=True):
        to_assistant, to_user = float((assistant @ vector).max()), float((users @ vector).max())
        flagged[i] = flagged[i] or _may_fail(to_assistant, to_user)
    return flagged


def _may_fail(to_assistant: float, to_user: float) -> bool:
    """Whether a sentence's cosines reach the band where the check fails or asks the judge."""
    return to_assistant >= ASSISTANT_MIN and to_assistant - to_user >= MARGIN - BAND


class RoleConfusionChecker:
    """Checks many trajectories at once (one encoder batch for all their user sentences).

    Args:
        embedder: the shared :class:`~simulation.validator.embedding.SentenceEncoder` (a new one
            loading ``minilm`` when omitted).
    """

    def __init__(self, embedder: SentenceEncoder | None = None) -> None:
        self.embedder = embedder or SentenceEncoder()
        self._encode = self.embedder.encode

    def check_many(self, contexts: list[Context]) -> list[CheckResult]:
        """One :class:`CheckResult` per context, in order."""
        from mads_bench.catalog import load_personas

        assistant = self._encode(list(ASSISTANT_PROTOTYPES))
        results, queued = [], []
        for context in contexts:
            result = CheckResult()
            persona = load_personas().get(context.scenario.persona)
            own = list(persona.sample_messages) if persona else []
            for position, message in context.user_messages():
                where = f"turn {message.turn_index} (message {position})"
                for finding in rule_findings(message.content):
                    result.fail(f"{where}: user acts as the assistant: {finding}")
                for sentence in sentences(message.content):
                    queued.append((result, where, sentence, own))
            results.append(result)
        all_sentences = [q[2] for q in queued]
        user_texts = list(dict.fromkeys([*USER_PROTOTYPES, *(s for q in queued for s in q[3])]))
        vectors = self._encode(all_sentences)
        user_vectors = self._encode(user_texts)
        index = {t: i for i, t in enumerate(user_texts)}
        generic = [index[t] for t in USER_PROTOTYPES]
        for (result, where, sentence, own), vector in zip(queued, vectors, strict=True):
            to_assistant = float((assistant @ vector).max())
            user_rows = generic + [index[t] for t in own]
            to_user = float((user_vectors[user_rows] @ vector).max())
            self._decide(result, where, sentence, to_assistant, to_user)
        return results

    def _decide(
        self, result: CheckResult, where: str, sentence: str, to_assistant: float, to_user: float
    ) -> None:
        margin = to_assistant - to_user
        result.consulted("embedding")
        if not _may_fail(to_assistant, to_user):
            return
        reason = (
            f"{where}: user sounds like the assistant: {sentence!r} (cosine {to_assistant:.2f} "
            f"to assistant prototypes, {to_user:.2f} to user ones)"
        )
        if margin >= MARGIN + BAND:
            result.fail(reason, by="embedding")
            return
        prompt = (
            "In a customer-service chat a simulated CUSTOMER wrote this sentence:\n"
            f"{sentence!r}\nDoes the customer break character here, i.e. speak like the "
            "service assistant (offering help, asking the customer's own questions, reporting "
            "work done on the account)? Answer YES or NO first, then one sentence."
        )
        result.pending.append(JudgeQuestion(prompt, "yes", reason, margin >= MARGIN, "embedding"))
