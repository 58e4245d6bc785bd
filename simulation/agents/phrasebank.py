"""Crowd-written phrases mined from Schema-Guided Dialogue, for the scripted agents to reuse.

SGD (Rastogi et al., 2020; CC BY-SA 4.0) annotates every turn with its dialogue acts and the
character spans of the slot values it mentions. :func:`mine_phrasebank` keeps the turns whose
acts are exactly one of the situations the scripted agents meet and turns them into
templates:

- user ``AFFIRM`` / ``AFFIRM_INTENT`` turns -> ``agree`` (read as a yes by
  :func:`~simulation.agents.text.is_affirmative`);
- user ``THANK_YOU`` / ``GOODBYE`` turns -> ``thanks``; with a ``NEGATE`` -> ``no_thanks``
  (the answer to "anything else?", or to an alternative the user turns down);
- user ``INFORM`` turns of one slot, the value span replaced by ``{value}`` -> ``inform``;
- system ``REQUEST`` turns of one slot whose words follow "your", "the", "what" or "which",
  replaced by ``{label}`` -> ``ask``;
- system ``CONFIRM`` turns, the text before the first value when it ends in a colon ->
  ``confirm_lead`` ("Please confirm the following details:");
- system ``REQ_MORE`` turns -> ``req_more``; system ``NOTIFY_SUCCESS`` turns without a slot
  span that say the thing is done -> ``success``.

A template is relexicalised with any scenario's values, so it must not say anything about
SGD's domains: every word of it must occur in turns of at least ``min_domains`` of SGD's 16
domains on that side (which drops domain words and typos), must not be in `DOMAIN_WORDS`
(verbs and nouns that are common everywhere but still name an SGD task: "book", "ticket",
"enjoy"), and ``inform`` / ``ask`` keep only a small closed vocabulary around the
placeholder, so "{value}" is never "on" or "in" something. These word lists are data,
``word_lists.json`` (:func:`~simulation.agents.wording.word_lists`). The shipped file
(``phrasebank.sgd-train.json``, next to this module) is rebuilt with
``mads-bench build-phrasebank`` from SGD train; phrases used in conversations make the
generated datasets CC BY-SA 4.0, which their cards say.

Example:
    >>> bank = load_phrasebank()
    >>> sorted(bank) == sorted(CATEGORIES)
    True
    >>> all("{label}" in t for t in bank["ask"])
    True
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

from mads_bench.loading import read_sgd_dialogues
from simulation.agents.text import asks_confirmation, is_affirmative, reports_completion
from simulation.agents.wording import word_lists

__all__ = ["CATEGORIES", "DOMAIN_WORDS", "load_phrasebank", "mine_phrasebank"]

SHIPPED = Path(__file__).with_name("phrasebank.sgd-train.json")
USER_CATEGORIES = ("agree", "thanks", "no_thanks", "inform")
CATEGORIES = (*USER_CATEGORIES, "ask", "confirm_lead", "req_more", "success")
LICENSE = "CC BY-SA 4.0"
SOURCE = "Schema-Guided Dialogue (Rastogi et al., 2020), train split, dialogue-act annotated turns"

_WORDS = word_lists()  # the closed vocabulary of the rules below (``word_lists.json``)
DOMAIN_WORDS = _WORDS.domain_words
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_CLEAN = re.compile(r"^[A-Za-z][A-Za-z ,.!?':]*$")
_INFORM_BAD = re.compile(r"\bi would be\b", re.IGNORECASE)
_ASK_BAD = re.compile(
    r"\b(need|want|like) (it|that)\b|\bi what\b|\bi can\b|\bwhat the\b|"
    r"\{label\} (you|that you) (need|want|would like)\b",
    re.IGNORECASE,
)
# "what {label}" only as a bare question: "What order ID would you like?" reads as a preference
_ASK_BARE = re.compile(r"^(\w+[,.!]? )*(what|which) \{label\}( please)?\?$", re.IGNORECASE)
_ASK_SLOT = r"\b(your|the|which|what) ({words})\b"


def _tidy(text: str) -> str:
    """One space between words, a capital and "I" where the crowd typed "i", a final stop."""
    text = re.sub(r"\s+([:,.!?])", r"\1", " ".join(text.split()))
    text = re.sub(r"\bi\b", "I", text)
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?:" else text + "."


def _words(text: str) -> list[str]:
    return _WORD.findall(text.replace("{value}", " ").replace("{label}", " ").casefold())


def _word_before(template: str, placeholder: str) -> str | None:
    match = re.search(r"([\w']+)\W*\{" + placeholder + r"\}", template.casefold())
    return match.group(1) if match else None


def _candidates(dialogues: Iterable[dict[str, Any]]) -> tuple[dict[str, Counter[str]], dict]:
    """Raw templates per category (with their counts) and, per (side, word), the domains."""
    found: dict[str, Counter[str]] = {c: Counter() for c in CATEGORIES}
    domains: dict[tuple[str, str], set[str]] = defaultdict(set)
    for dialogue in dialogues:
        for turn in dialogue["turns"]:
            side, text = turn["speaker"], turn["utterance"]
            for frame in turn["frames"]:
                for word in set(_WORD.findall(text.casefold())):
                    domains[(side, word)].add(frame["service"].split("_")[0])
            acts = [a for frame in turn["frames"] for a in frame["actions"]]
            names = frozenset(a["act"] for a in acts)
            spans = [s for frame in turn["frames"] for s in frame.get("slots", [])]
            category, template = _categorise(side, text, names, acts, spans)
            if category is not None:
                found[category][" ".join(template.split())] += 1
    return found, domains


def _categorise(
    side: str, text: str, names: frozenset[str], acts: list[dict], spans: list[dict]
) -> tuple[str | None, str]:
    if side == "USER":
        if names in ({"AFFIRM"}, {"AFFIRM_INTENT"}) and not spans:
            return "agree", text
        if names and names <= {"THANK_YOU", "GOODBYE"}:
            return "thanks", text
        if "NEGATE" in names and names - {"NEGATE"} and names <= {"NEGATE", "THANK_YOU", "GOODBYE"}:
            return "no_thanks", text
        if names == {"INFORM"} and len(acts) == 1 and len(spans) == 1:
            start, end = spans[0]["start"], spans[0]["exclusive_end"]
            return "inform", text[:start] + "{value}" + text[end:]
        return None, text
    if names == {"REQ_MORE"}:
        return "req_more", text
    if names == {"CONFIRM"} and spans:
        before = text[: min(span["start"] for span in spans)]
        if ":" in before:  # "Please confirm the following details:"
            return "confirm_lead", before[: before.index(":") + 1]
    if names == {"NOTIFY_SUCCESS"} and not spans:
        return "success", text
    if names == {"REQUEST"} and len(acts) == 1:
        slot = acts[0]["slot"]
        words = "|".join(re.escape(w) for w in (slot.replace("_", " "), slot.split("_")[-1]))
        match = re.search(_ASK_SLOT.format(words=words), text, re.IGNORECASE)
        if match:
            return "ask", text[: match.start(2)] + "{label}" + text[match.end(2) :]
    return None, text


def _keeps(category: str, template: str, generic: set[str]) -> bool:
    """Whether a template stays correct with any scenario's values (module docstring)."""
    if not _CLEAN.match(template.replace("{value}", "V").replace("{label}", "L")):
        return False
    words = _words(template)
    if not words or len(words) > 20 or any(w not in generic or w in DOMAIN_WORDS for w in words):
        return False
    if category == "confirm_lead":
        return template.endswith(":") and not re.search(r"\bconfirmed\b", template, re.I)
    if category == "inform":
        return (
            set(words) <= _WORDS.inform_words
            and _word_before(template, "value") in (None, *_WORDS.inform_before)
            and not is_affirmative(template.replace("{value}", "X"))
            and not _INFORM_BAD.search(template)
            and "?" not in template
        )
    if category == "ask":
        return (
            set(words) <= _WORDS.ask_words
            and _word_before(template, "label") in _WORDS.ask_before
            and (_word_before(template, "label") in ("your", "the") or _ASK_BARE.match(template))
            and template.rstrip().endswith("?")
            and not _ASK_BAD.search(template)
        )
    if category == "agree":
        return is_affirmative(template) and "?" not in template
    if category in ("thanks", "no_thanks"):
        return "?" not in template and not re.search(r"\b(help|assist) you\b|\bfor you\b", template)
    if category == "req_more":
        return template.rstrip().endswith("?") and not asks_confirmation(template)
    return (
        category == "success"
        and reports_completion(template)
        and "?" not in template
        # a status word is a fact the validator looks for in the tool results
        and not re.search(r"\byou have been\b|\bconfirm", template, re.IGNORECASE)
    )


def mine_phrasebank(
    dialogues: Iterable[dict[str, Any]],
    *,
    min_domains: int = 12,
    per_category: int = 400,
    vet_user: Callable[[list[str]], list[bool]] | None = None,
) -> dict[str, list[str]]:
    """Templates per category (see the module docstring), most used first.

    Args:
        dialogues: SGD dialogues (`mads_bench.loading.read_sgd_dialogues`).
        min_domains: a word is generic when turns of this many SGD domains use it (per side).
        per_category: at most this many templates per category.
        vet_user: flags the user phrases that sound like the assistant (the CLI passes the
            validator's role-confusion test); flagged ones are dropped.

    Returns:
        `dict[str, list[str]]`: category -> templates, deduplicated ignoring case and
        punctuation; ties in use broken alphabetically, so a build is reproducible.
    """
    found, domains = _candidates(dialogues)
    generic = {
        side: {w for (s, w), names in domains.items() if s == side and len(names) >= min_domains}
        for side in ("USER", "SYSTEM")
    }
    bank: dict[str, list[str]] = {}
    for category, counts in found.items():
        side = "USER" if category in USER_CATEGORIES else "SYSTEM"
        forms: dict[str, Counter[str]] = defaultdict(Counter)
        for raw, count in counts.items():
            text = _tidy(raw)
            if _keeps(category, text, generic[side]):
                key = " ".join(_words(text)) + "".join(re.findall(r"\{\w+\}", text))
                forms[key][text] += count
        # one template per key: its most used surface form, ranked by the key's total use
        ranked = sorted(
            (-sum(c.values()), min(c, key=lambda t: (-c[t], t))) for c in forms.values()
        )
        texts = [text for _, text in ranked]
        if vet_user is not None and side == "USER":
            flags = vet_user([t.replace("{value}", "C1004") for t in texts])
            texts = [t for t, flagged in zip(texts, flags, strict=True) if not flagged]
        bank[category] = texts[:per_category]
    return bank


def build_phrasebank(
    sgd_train: Path | str, out: Path | str = SHIPPED, **options: Any
) -> dict[str, Any]:
    """Mine SGD train and write the phrasebank JSON (with its source and licence); ``options``
    go to :func:`mine_phrasebank`."""
    bank = mine_phrasebank(read_sgd_dialogues(sgd_train), **options)
    document = {"source": SOURCE, "license": LICENSE, "phrases": bank}
    Path(out).write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return document


@cache
def load_phrasebank(path: Path | str = SHIPPED) -> dict[str, tuple[str, ...]]:
    """The mined templates per category (the shipped file unless ``path`` says otherwise)."""
    document = json.loads(Path(path).read_text("utf-8"))
    return {category: tuple(document["phrases"].get(category, ())) for category in CATEGORIES}
