"""Raw S2 scores of the offline grounding verifier, one function per failure class.

``score_criterion`` does the lexical work at once, registers the strings it needs embedded in a
shared ``ScoreRequests`` (so a whole batch is encoded in one call) and returns a closure that
finishes the score once the embeddings exist. Scores (before the gate):

* UV: support of the written value in h_{<t} ∪ {u_t} — 1.0 for a normalised/typed match,
  otherwise max(fuzzy window ratio, MiniLM cosine of the value to word windows of the last
  two history turns and u_t); booleans by the slot's own words, ``dontcare`` by its phrases.
* IUV: how well the user's value is held by s_t — max over state values of
  max(normalised/typed similarity, MiniLM cosine); 0 when no candidate slot is filled.
* WNF: best similarity of the question to an already filled slot minus the best to a legal
  next field (floor 0.25); similarity = MiniLM cosine to "slot words: description" + 0.2 ×
  share of the slot's name words in the question. NaN (abstain) when the best match is a slot
  outside the legal and filled sets (an optional or result slot). With the act tagger: -1 when
  every slot it reads a_t as requesting is a legal next field (or an empty optional one).
* PC: 1.0 with a lexical confirmation cue, else the best cosine of a sentence of a_t to a few
  confirmation paraphrases.
* Criteria from the act tagger (``"tagged"`` in their args): the tagger's probability, under
  their own gates (``IUV-tag``, ``WNF-tag``, ``PC-tag``; see ``gate_key``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import numpy as np

from evaluators.sage.extract import has_confirmation_cue
from evaluators.sage.normalize import (
    DONTCARE_PHRASES,
    normalize_text,
    span_support,
    typed_key,
    value_similarity,
)
from evaluators.sage.records import Criterion, TurnRecord
from evaluators.sage.symbolic import context_texts
from evaluators.sage.tagger import name_share, slot_prompt
from evaluators.sage.workflow import WorkflowSpec
from mads_bench.text import split_sentences

Finisher = Callable[[dict[str, np.ndarray]], tuple[float, str]]
NO_SLOT_FLOOR = 0.25
CONFIRMATION_PARAPHRASES = (
    "Your booking has been confirmed.",
    "I have made the reservation for you.",
    "The purchase was completed successfully.",
    "Please confirm the following details.",
    "Your appointment is scheduled.",
    "The payment has been sent.",
)
_SLOT_FILLER_WORDS = frozenset({"has", "is", "are", "allows", "offers", "number", "of", "the"})


class ScoreRequests:
    """Strings a batch needs embedded (collected, then encoded in one call)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def need(self, *texts: str) -> None:
        self.texts.extend(t for t in texts if t)


def _cos(vectors: dict[str, np.ndarray], a: str, b: str) -> float:
    return float(np.dot(vectors[a], vectors[b]))


def _windows(texts: list[str], size: int, limit: int = 60) -> list[str]:
    out: list[str] = []
    for text in texts:
        words = re.sub(r"[^\w:' -]", " ", text).split()
        for n in (size, size + 1):
            out.extend(" ".join(words[i : i + n]) for i in range(max(1, len(words) - n + 1)))
    return list(dict.fromkeys(w for w in out if w))[:limit]


SEMANTIC_WINDOWS = 12
"""Windows per UV criterion that go to the encoder: those closest to the value in characters
(a window sharing no letters with the value is rarely its paraphrase, and encoding every
window of the last two utterances was four fifths of a text-only turn's time)."""


def _closest_windows(value: str, windows: list[str]) -> list[str]:
    target = Counter(normalize_text(value))
    overlap = {w: sum((target & Counter(w.lower())).values()) / (len(w) + 1) for w in windows}
    return sorted(windows, key=lambda w: -overlap[w])[:SEMANTIC_WINDOWS]


def gate_key(criterion: Criterion) -> str:
    """The gate a criterion's score goes through: its class, ``-tag`` for tagger readings."""
    return criterion.failure_class + ("-tag" if "tagged" in criterion.args else "")


def score_criterion(
    criterion: Criterion, record: TurnRecord, spec: WorkflowSpec, requests: ScoreRequests
) -> Finisher:
    """Start scoring one criterion; the returned closure finishes it from the embeddings."""
    return _SCORERS[criterion.failure_class](criterion.args, record, spec, requests)


_NEGATION = re.compile(r"\b(?:no|not|don't|dont|doesn't|isn't|without|never|nope)\b|n't\b", re.I)


def _flag_said(words: list[str], sentences: list[str]) -> bool | None:
    """The polarity the conversation gives a flag: the last sentence naming one of the slot's
    words, negated or not (None when no sentence names it)."""
    for sentence in reversed(sentences):
        text = normalize_text(sentence)
        if any(re.search(rf"\b{re.escape(w[:5])}", text) for w in words):
            return not _NEGATION.search(sentence)
    return None


def _statements(record: TurnRecord) -> list[str]:
    """Sentences of the recent context that can inform a flag: the user's own questions
    ("Is smoking allowed?") ask about a slot, they do not set it; the agent's questions stay
    (a "yes" to "Do you want smoking?" does)."""
    items = [(h.speaker, h.text) for h in record.history[-2:]] + [("user", record.user)]
    out = []
    for speaker, text in items:
        for sentence in split_sentences(text, newlines=False):
            if speaker == "user" and sentence.rstrip().endswith("?"):
                continue
            out.append(sentence)
    return out


def _uv(args: dict, record: TurnRecord, spec: WorkflowSpec, req: ScoreRequests) -> Finisher:
    value, slot = args["value"], args["slot"]
    context = context_texts(record)
    key = typed_key(value)
    if key and key[0] == "bool":
        words = [w for w in slot.split("_") if w not in _SLOT_FILLER_WORDS and len(w) > 2]
        said = _flag_said(words, _statements(record)[-6:])
        if said is None:
            return lambda _v: (0.3, f"slot words {words} absent")
        agrees = said == (key[1] == "true")
        score = 0.9 if agrees else 0.2
        return lambda _v: (
            score,
            f"slot words {words} said as {said} ({'agrees' if agrees else 'contradicts'})",
        )
    if key and key[0] == "dontcare":
        recent = normalize_text(" ".join(context[-3:])) + " "
        found = next((p for p in DONTCARE_PHRASES if p in recent), None)
        return lambda _v: (0.9 if found else 0.2, f"dontcare phrase {found!r}")
    # Verbatim support anywhere was S1's job; fuzzy support is searched in the recent window.
    lex, span = max((span_support(value, text) for text in context[-5:]), key=lambda x: x[0])
    if lex >= 0.999 or key:
        return lambda _v: (lex, f"best span {span!r}")
    windows = _closest_windows(value, _windows(context[-2:], len(normalize_text(value).split())))
    req.need(value, *windows)

    def finish(vectors: dict[str, np.ndarray]) -> tuple[float, str]:
        sem, best = max(((_cos(vectors, value, w), w) for w in windows), default=(0.0, ""))
        if sem > lex:
            return sem, f"closest window {best!r} (cosine)"
        return lex, f"best fuzzy span {span!r}"

    return finish


def _tagged(args: dict) -> Finisher:
    p = args["tagged"]
    return lambda _v: (p, f"act tagger p={p:.3f}")


def _iuv(args: dict, record: TurnRecord, spec: WorkflowSpec, req: ScoreRequests) -> Finisher:
    if "tagged" in args:
        return _tagged(args)
    value = args["value"]
    state = record.state_after
    slots = [s for s in args.get("candidate_slots") or [] if s] or list(state)
    taken = set(args.get("taken", ()))  # slots holding another value of the turn verbatim
    targets = [(s, state[s]) for s in slots if state.get(s) and s not in taken]
    if not targets:
        return lambda _v: (0.0, f"none of {slots} is filled in s_t")
    kind = typed_key(value)

    def typed(held: str) -> float | None:
        """Two dates (or times) compare by what they mean; "dontcare" and a flag are held
        only by themselves, never by a value that looks or embeds alike (None: embed)."""
        other = typed_key(held)
        if kind and other and kind[0] == other[0]:
            return value_similarity(value, held)
        return 0.0 if kind and kind[0] in ("dontcare", "bool") else None

    fixed = [(typed(v), value_similarity(value, v), s, v) for s, v in targets]
    embedded = [v for score, _, _, v in fixed if score is None]
    if embedded:
        req.need(value, *embedded)

    def finish(vectors: dict[str, np.ndarray]) -> tuple[float, str]:
        scored = [
            (score if score is not None else max(lx, _cos(vectors, value, v)), s, v)
            for score, lx, s, v in fixed
        ]
        score, slot, held = max(scored)
        return score, f"closest state value {slot}={held!r}"

    return finish


_OFFER = re.compile(
    r"\b(?:know|hear|learn|see|check|find out|look up|anything else|more (?:info|details))\b",
    re.IGNORECASE,
)
_ASKS_CHOICE = re.compile(
    r"\b(?:would you like|do you want|do you prefer|should (?:it |that |the \w+ )?be|"
    r"let me know|tell me|may i ask|i'll (?:also )?need|i will (?:also )?need|which|what is the|"
    r"what's the|what \w+ (?:would|do|should)|and the)\b",
    re.IGNORECASE,
)


def _wnf(args: dict, record: TurnRecord, spec: WorkflowSpec, req: ScoreRequests) -> Finisher:
    if "tagged" in args:
        return _tagged(args)
    if args.get("slot"):  # the slot came from a REQUEST act: only S1's rule applies
        return lambda _v: (float("nan"), "requested slot known from acts; S1 decides")
    sentence = args["sentence"]
    reads = args.get("tag_requests")
    if reads and all(
        s in args["next"] or (s in args["optional"] and s not in args["filled"]) for s in reads
    ):
        return lambda _v: (-1.0, f"act tagger reads a request for {reads}: legal")
    slots = list(spec.service(record.service).slots)
    service = spec.service(record.service)
    prompts = {s: slot_prompt(service, s) for s in slots}
    req.need(sentence, *prompts.values())

    words = set(re.findall(r"[a-z]+", sentence.lower()))

    def slot_sim(vectors: dict[str, np.ndarray], slot: str) -> float:
        # The slot's own name words in the question ("what time" → *_time) add to the cosine.
        found = name_share(slot, words, _SLOT_FILLER_WORDS)
        return _cos(vectors, sentence, prompts[slot]) + 0.2 * found

    def finish(vectors: dict[str, np.ndarray]) -> tuple[float, str]:
        sims = {s: slot_sim(vectors, s) for s in prompts}
        top = max(sims, key=sims.__getitem__)
        if top not in args["next"] and top not in args["filled"] and sims[top] > NO_SLOT_FLOOR:
            # Text-only: a question about a slot outside the intent is often an offer about a
            # result ("Do you want to know the address?"): abstain on those; a request for
            # the user's choice of it ("Which song would you like?") is a wrong next field.
            if (
                top in args["optional"]
                or _OFFER.search(sentence)
                or not _ASKS_CHOICE.search(sentence)
            ):
                return float("nan"), f"asks about {top}, outside the intent (indeterminate)"
            return 1.0, f"asks the user to choose {top}, which is not a field of the intent"
        legal = max([sims[s] for s in args["next"]] + [NO_SLOT_FLOOR])
        worst = max((s for s in args["filled"] if s in sims), key=sims.__getitem__, default=None)
        if worst is None:
            return -1.0, "no field is filled yet: nothing to re-ask"
        return sims[worst] - legal, f"closest filled field {worst} ({sims[worst]:.2f})"

    return finish


def _pc(args: dict, record: TurnRecord, spec: WorkflowSpec, req: ScoreRequests) -> Finisher:
    if has_confirmation_cue(record.agent):
        return lambda _v: (1.0, "confirmation cue in a_t")
    if "tagged" in args:
        return _tagged(args)
    # Questions are not confirmations (confirming questions carry a lexical cue instead).
    split = split_sentences(record.agent, newlines=False, strip="")  # embedded as written
    sentences = [s for s in split if not s.endswith("?")]
    req.need(*sentences, *CONFIRMATION_PARAPHRASES)

    def finish(vectors: dict[str, np.ndarray]) -> tuple[float, str]:
        best = max(
            ((_cos(vectors, s, p), s) for s in sentences for p in CONFIRMATION_PARAPHRASES),
            default=(0.0, ""),
        )
        return best[0], f"closest to a confirmation: {best[1]!r}"

    return finish


_SCORERS = {"UV": _uv, "IUV": _iuv, "WNF": _wnf, "PC": _pc}
