"""Slot values users say, learned from SGD train: how the extractor reads values in lower case.

The extractor reads names by their capital letters, so "it is sacramento" or "a drama film"
gives it nothing. SGD train's user turns mark, for free, the span of every non-categorical slot
value they supply. ``build_lexicon`` keeps the spans that

* at least two dialogues supply (one-off titles and typos stay out),
* are not typed values (dates, times, numbers: the extractor reads those by their pattern),
* are a value whenever they occur: of the user turns of train that contain the span as words
  (not inside a longer value: "after" in "day after tomorrow" does not count), at least
  ``min_precision`` supply it or a part of it as a value. This drops the slot words that are
  sometimes values and mostly not ("food", "appointment", "house").

Each kept span maps to the slot names it filled. ``Lexicon.slots_for`` carries them to a service
the lexicon never saw by the words of the slot names ("city" fills ``city_of_event``), so a value
is read only for a service that has a slot of its kind.

The shipped lexicon (``lexicon.sgd-train.json`` next to this file) is built from SGD train only
by ``mads-bench sage build-lexicon``; dev is for calibration and the bench slices.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from evaluators.sage.normalize import normalize_text, parse_date, parse_time
from evaluators.sage.workflow import WorkflowSpec

LEXICON_FILE = Path(__file__).with_name("lexicon.sgd-train.json")
_WEAK_WORDS = frozenset({"of", "name", "to", "from", "where", "event", "date", "show", "number"})
"""Slot-name words that say nothing about a value's kind (``city_of_event`` ≠ ``event_name``)."""


def _kind_words(slot: str) -> frozenset[str]:
    return frozenset(w for w in slot.split("_") if w not in _WEAK_WORDS and len(w) > 2)


class Lexicon:
    """Normalised value → the slot names it was supplied for.

    Args:
        values (`dict[str, tuple[str, ...]]`): The values and their slots.
    """

    def __init__(self, values: dict[str, tuple[str, ...]]) -> None:
        self.values = values
        self._lengths: dict[str, set[int]] = defaultdict(set)  # first word → value lengths
        for value in values:
            words = value.split()
            self._lengths[words[0]].add(len(words))
        self.longest = max((n for ns in self._lengths.values() for n in ns), default=0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lexicon) and other.values == self.values

    def slots_for(self, value: str, service_slots: Iterable[str]) -> tuple[str, ...]:
        """The service's slots of the value's kind: same name, or a shared name word."""
        learned = self.values.get(value, ())
        kinds = frozenset().union(*map(_kind_words, learned)) if learned else frozenset()
        return tuple(s for s in service_slots if s in learned or _kind_words(s) & kinds)

    def find(self, norm: str) -> list[str]:
        """Known values in normalised text as whole words, the longest at each place first,
        without overlaps."""
        words = norm.split()
        found, i = [], 0
        while i < len(words):
            for n in sorted(self._lengths.get(words[i], ()), reverse=True):
                if " ".join(words[i : i + n]) in self.values:
                    found.append(" ".join(words[i : i + n]))
                    i += n - 1
                    break
            i += 1
        return found

    def save(self, path: str | Path) -> None:
        """Write the lexicon as sorted JSON (atomically)."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        lines = [f"{json.dumps(v)}: {json.dumps(list(s))}" for v, s in sorted(self.values.items())]
        tmp.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> Lexicon:
        """Read a lexicon written by `save` (``ValueError`` names the file when it is not one)."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            values = {str(v): tuple(map(str, s)) for v, s in data.items()}
        except (OSError, ValueError, AttributeError, TypeError) as err:
            raise ValueError(f"{path}: not a value lexicon ({err})") from None
        return cls(values)


@cache
def bundled_lexicon() -> Lexicon:
    """The shipped lexicon; empty when the file is absent (the extractor then reads none)."""
    return Lexicon.load(LEXICON_FILE) if LEXICON_FILE.is_file() else Lexicon({})


def _user_spans(dialogue: dict[str, Any], categorical: set[tuple[str, str]]):
    """(utterance, {non-categorical spans}, {every informed value}) per user turn."""
    for turn in dialogue["turns"]:
        if turn["speaker"] != "USER":
            continue
        text = turn["utterance"]
        spans: dict[str, str] = {}
        informed: set[str] = set()
        for frame in turn["frames"]:
            for s in frame.get("slots", []):
                value = normalize_text(text[s["start"] : s["exclusive_end"]])
                informed.add(value)
                if (frame["service"], s["slot"]) not in categorical:
                    spans[value] = s["slot"]
            for act in frame.get("actions", []):
                if act["act"] == "INFORM":
                    informed |= {normalize_text(v) for v in act.get("values", [])}
        yield normalize_text(text), spans, informed


def build_lexicon(
    dialogues: list[dict[str, Any]],
    spec: WorkflowSpec,
    min_dialogues: int = 2,
    min_precision: float = 0.6,
) -> Lexicon:
    """Learn the lexicon from SGD dialogues (with their ``slots`` spans) and their schema."""
    categorical = {
        (service.name, slot.name)
        for service in spec.services.values()
        for slot in service.slots.values()
        if slot.is_categorical
    }
    slots: dict[str, Counter[str]] = defaultdict(Counter)
    seen_in: dict[str, set[str]] = defaultdict(set)
    for dialogue in dialogues:
        for _, spans, _ in _user_spans(dialogue, categorical):
            for value, slot in spans.items():
                slots[value][slot] += 1
                seen_in[value].add(dialogue["dialogue_id"])
    candidates = Lexicon(
        {
            v: tuple(sorted(c))
            for v, c in slots.items()
            if len(seen_in[v]) >= min_dialogues
            and re.search(r"[a-z]", v)
            and not re.search(r"\d", v)
            and not parse_date(v)
            and not parse_time(v)
        }
    )
    said, supplied = Counter(), Counter()
    for dialogue in dialogues:
        for norm, _, informed in _user_spans(dialogue, categorical):
            for gram in _grams(norm, candidates.longest):
                if gram not in candidates.values:
                    continue
                inside = any(f" {gram} " in f" {x} " for x in informed if x != gram)
                covers = any(f" {x} " in f" {gram} " for x in informed)
                if covers or not inside:  # inside a longer value, the longer one is the reading
                    said[gram] += 1
                    supplied[gram] += covers
    return Lexicon(
        {v: s for v, s in candidates.values.items() if supplied[v] >= min_precision * said[v]}
    )


def _grams(norm: str, longest: int) -> set[str]:
    words = norm.split()
    return {
        " ".join(words[i : i + n]) for n in range(1, longest + 1) for i in range(len(words) - n + 1)
    }
