"""Goal sequences from Schema-Guided Dialogue (SGD) dialogues (atod.md §4.1, Appendix A.3).

A *goal* is an SGD service-intent pair (`Restaurants_1`, `ReserveRestaurant`); its ATOD
domain is the service name without the version suffix (`Restaurants`). The goal sequence of
a dialogue is the ordered list of the active intents of its user frames, a new entry each
time the active intent changes (so an intent resumed later appears again). As in the paper,
only multi-domain dialogues (two or more services) yield sequences: on the full SGD train
split this gives Table 12's 10,739 sequences of length 2-8.

The same pass collects, per service and slot, the values users gave in SGD (the pools the
trajectory annotation draws realistic slot values from), and reads `schema.json`.

Example:
    >>> corpus = load_sgd_corpus("../shared/data/sgd/train", max_files=2)  # doctest: +SKIP
    >>> corpus.sequences[0].goals[0]  # doctest: +SKIP
    GoalKey(service='Restaurants_1', intent='FindRestaurants')
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from mads_bench.loading import CatalogError


class GoalKey(NamedTuple):
    """One node of the co-occurrence graph: an SGD service and one of its intents."""

    service: str
    intent: str

    @property
    def domain(self) -> str:
        """The ATOD domain: the service name without its `_N` version suffix."""
        return self.service.split("_")[0]

    def label(self) -> str:
        """`Restaurants_1:ReserveRestaurant`."""
        return f"{self.service}:{self.intent}"


@dataclass(frozen=True)
class GoalSequence:
    """The goal sequence of one SGD dialogue."""

    dialogue_id: str
    goals: tuple[GoalKey, ...]

    @property
    def distinct(self) -> tuple[GoalKey, ...]:
        """The goals without repeats, in order of first appearance."""
        return tuple(dict.fromkeys(self.goals))


@dataclass(frozen=True)
class IntentSchema:
    """An SGD intent's slots and kind (from `schema.json`)."""

    key: GoalKey
    description: str
    required_slots: tuple[str, ...]
    optional_slots: tuple[str, ...]
    transactional: bool


@dataclass
class SgdCorpus:
    """What the generator needs from SGD: sequences, intent schemas and slot-value pools."""

    sequences: list[GoalSequence]
    schemas: dict[GoalKey, IntentSchema]
    slot_values: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    n_dialogues: int = 0
    files: list[str] = field(default_factory=list)


def goal_sequence(dialogue: dict[str, Any]) -> tuple[GoalKey, ...]:
    """The ordered active intents of a dialogue's user frames (consecutive repeats merged).

    Args:
        dialogue (`dict`): One SGD dialogue record.

    Returns:
        `tuple[GoalKey, ...]`: The sequence (may be empty).

    Example:
        >>> turn = {"speaker": "USER", "frames": [{"service": "Buses_1",
        ...         "state": {"active_intent": "FindBus"}}]}
        >>> goal_sequence({"turns": [turn, turn]})
        (GoalKey(service='Buses_1', intent='FindBus'),)
    """
    sequence: list[GoalKey] = []
    for turn in dialogue.get("turns", []):
        if turn.get("speaker") != "USER":
            continue
        for frame in turn.get("frames", []):
            intent = frame.get("state", {}).get("active_intent", "NONE")
            if intent == "NONE":
                continue
            key = GoalKey(frame["service"], intent)
            if not sequence or sequence[-1] != key:
                sequence.append(key)
    return tuple(sequence)


def read_schema(path: Path | str) -> dict[GoalKey, IntentSchema]:
    """Read an SGD `schema.json` into intent schemas keyed by service-intent.

    Args:
        path (`Path | str`): The file.

    Returns:
        `dict[GoalKey, IntentSchema]`: One entry per intent of every service.

    Raises:
        `CatalogError` (a `ValueError`): When the file is not an SGD schema (names the file
            and the field).
    """
    path = Path(path)
    services = _read_json(path)
    if not isinstance(services, list):
        raise CatalogError(path, "", f"expected a JSON array of services, got {_kind(services)}")
    schemas = {}
    for index, service in enumerate(services):
        try:
            for intent in service["intents"]:
                key = GoalKey(service["service_name"], intent["name"])
                schemas[key] = IntentSchema(
                    key=key,
                    description=intent.get("description", ""),
                    required_slots=tuple(intent["required_slots"]),
                    optional_slots=tuple(intent.get("optional_slots", {})),
                    transactional=bool(intent.get("is_transactional", False)),
                )
        except (KeyError, TypeError, AttributeError) as err:
            raise CatalogError(path, f"[{index}]", f"not an SGD service schema ({err})") from None
    return schemas


def _kind(value: Any) -> str:
    return type(value).__name__


def _read_json(path: Path) -> Any:
    """Parse a JSON or gzip-compressed JSON file; a corrupt one names the file."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as err:
        raise CatalogError(path, f"line {err.lineno} column {err.colno}", err.msg) from None
    except (EOFError, UnicodeDecodeError, gzip.BadGzipFile) as err:
        raise CatalogError(path, "", f"cannot read file ({err})") from None


def load_sgd_corpus(
    folder: Path | str, *, multi_domain_only: bool = True, max_files: int | None = None
) -> SgdCorpus:
    """Read `dialogues_*.json(.gz)` and `schema.json` of an SGD split folder.

    Args:
        folder (`Path | str`): E.g. `../shared/data/sgd/train`.
        multi_domain_only (`bool`): Keep only dialogues with two or more services (the
            paper's rule); slot-value pools always use every dialogue.
        max_files (`int`, *optional*): Read only the first N dialogue files (tests).

    Returns:
        `SgdCorpus`: Sequences (with two or more goals), schemas and slot-value pools.

    Raises:
        `FileNotFoundError`: When the folder has no dialogue files or no `schema.json`.
        `CatalogError`: When a file is not SGD JSON (names the file and the dialogue).
    """
    folder = Path(folder)
    files = sorted(folder.glob("dialogues_*.json.gz")) + sorted(folder.glob("dialogues_*.json"))
    if not files or not (folder / "schema.json").is_file():
        raise FileNotFoundError(f"{folder}: expected SGD dialogues_*.json(.gz) and schema.json")
    files = files[:max_files] if max_files else files
    schemas = read_schema(folder / "schema.json")  # first: a bad schema fails before the long read
    sequences, pools, n_dialogues = [], defaultdict(dict), 0
    for file in files:
        dialogues = _read_json(file)
        if not isinstance(dialogues, list):
            raise CatalogError(
                file, "", f"expected a JSON array of dialogues, got {_kind(dialogues)}"
            )
        for index, dialogue in enumerate(dialogues):
            n_dialogues += 1
            try:
                _collect_values(dialogue, pools)
                if multi_domain_only and len(dialogue.get("services", [])) < 2:
                    continue
                goals = goal_sequence(dialogue)
                if len(goals) >= 2:
                    sequences.append(GoalSequence(dialogue["dialogue_id"], goals))
            except (KeyError, TypeError, AttributeError) as err:
                reason = f"not an SGD dialogue ({type(err).__name__}: {err})"
                raise CatalogError(file, f"[{index}]", reason) from None
    return SgdCorpus(
        sequences=sequences,
        schemas=schemas,
        slot_values={key: sorted(values) for key, values in sorted(pools.items())},
        n_dialogues=n_dialogues,
        files=[f.name for f in files],
    )


def _collect_values(dialogue: dict[str, Any], pools: dict) -> None:
    for turn in dialogue.get("turns", []):
        if turn.get("speaker") != "USER":
            continue
        for frame in turn.get("frames", []):
            for slot, values in frame.get("state", {}).get("slot_values", {}).items():
                for value in values[:1]:
                    if value and value.lower() not in {"dontcare", "none"}:
                        pools[(frame["service"], slot)][value] = None
