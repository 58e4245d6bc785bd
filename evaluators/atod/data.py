"""The published ATOD dialogue format as typed records, with a loader and a writer.

One dialogue (SPEC §4.5, `../shared/data/atod_sample/schema.json`)::

    {dialogue_id, dialogue_index, complexity_class, metadata,
     goal_list: [{id, domain, intent, slots, slot_values, dependencies, content,
                  core_content, status, status_history: [{turn, status}],
                  first_mentioned_turn, completion_turn}],
     turns: [{turn_id, speaker, utterance, all_goals, goal_status_changes}]}

Files are a JSON array (as published) or JSONL. Statuses are read case-insensitively and
stored lowercase. Unknown extra keys are kept (the release schema allows them). A malformed
file raises `CatalogError` naming the file, the dialogue and the field::

    medium.json: [1](ab30c6ee-...).goal_list[3].status: Input should be 'open', ...

Example:
    >>> from evaluators.atod.data import load_dialogues  # doctest: +SKIP
    >>> dialogues = load_dialogues("medium_sample.json")  # doctest: +SKIP
    >>> dialogues[0].goal_list[0].status  # doctest: +SKIP
    'completed'
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mads_bench.loading import CatalogError, read_data_file, validation_error

Status = Literal["not_mentioned", "open", "pending", "completed", "failed", "abandoned"]
STATUSES: tuple[str, ...] = Status.__args__
DECIDED = ("completed", "failed")


def _lower_status(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")


class StatusEntry(_Record):
    """One point of a goal's status history: the status holds from `turn` on."""

    turn: int = Field(description="Turn id at which the status starts (0 = before the dialogue).")
    status: Status = Field(description="Lifecycle status from that turn on.")
    _lower = field_validator("status", mode="before")(_lower_status)


class Goal(_Record):
    """One goal of a dialogue (gold annotation or a tracker's prediction)."""

    id: str = Field(description="Goal id, unique within the dialogue (`goal_1`).")
    domain: str = Field(description="SGD domain (`Hotels`).")
    intent: str = Field(description="SGD intent (`BookHouse`).")
    content: str = Field(description="Natural-language description of the goal.")
    core_content: str = Field(description="Short canonical description (`book a hotel room`).")
    status: Status = Field(description="Final status.")
    dependencies: list[str] = Field(description="Ids of the goals this goal depends on.")
    slots: list[Any] = Field(default_factory=list, description="Slot names.")
    slot_values: dict[str, Any] = Field(default_factory=dict, description="Slot values.")
    status_history: list[StatusEntry] = Field(default_factory=list, description="Transitions.")
    first_mentioned_turn: int | None = Field(default=None, description="First mention turn.")
    completion_turn: int | None = Field(default=None, description="Turn it became completed.")
    _lower = field_validator("status", mode="before")(_lower_status)


class StatusChange(_Record):
    """A status transition recorded on a turn."""

    goal_id: str
    new_status: Status
    turn: int | None = None
    _lower = field_validator("new_status", mode="before")(_lower_status)


class Turn(_Record):
    """One utterance; the tracker may read only `speaker` and `utterance`."""

    turn_id: int = Field(description="1-based turn id.")
    speaker: Literal["USER", "SYSTEM"] = Field(description="Who speaks.")
    utterance: str = Field(description="What is said.")
    all_goals: list[dict[str, Any]] = Field(default_factory=list, description="Per-turn states.")
    goal_status_changes: list[StatusChange] = Field(default_factory=list)

    @field_validator("speaker", mode="before")
    @classmethod
    def _upper_speaker(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value


class Dialogue(_Record):
    """One ATOD dialogue."""

    dialogue_id: str = Field(min_length=1, description="Unique id.")
    complexity_class: Literal["medium", "complex"] = Field(description="Construction label.")
    goal_list: list[Goal] = Field(description="Goals with their final statuses and histories.")
    turns: list[Turn] = Field(min_length=1, description="The utterances in order.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Dialogue attributes.")
    dialogue_index: int | None = Field(default=None, description="Position in the release.")

    @property
    def num_turns(self) -> int:
        """The last turn id (turn ids are 1-based)."""
        return max(turn.turn_id for turn in self.turns)


def parse_dialogues(data: Any, path: Path | str = "<data>") -> list[Dialogue]:
    """Validate already-parsed JSON (a list of dialogue dicts, or one dict) as dialogues.

    Args:
        data (`Any`): The parsed file content.
        path (`Path | str`): Shown in error messages.

    Returns:
        `list[Dialogue]`: The dialogues in file order.

    Raises:
        `CatalogError`: Naming the file, the dialogue (index and id) and the field.
    """
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        kind = type(data).__name__
        raise CatalogError(path, "", f"expected a JSON array of dialogues, got {kind}")
    dialogues, seen = [], set()
    for index, item in enumerate(data):
        label = f"[{index}]"
        if isinstance(item, dict) and isinstance(item.get("dialogue_id"), str):
            label += f"({item['dialogue_id']})"
        if not isinstance(item, dict):
            raise CatalogError(path, label, f"expected an object, got {type(item).__name__}")
        try:
            dialogue = Dialogue.model_validate(item)
        except ValidationError as err:
            raise validation_error(path, err, prefix=label) from None
        _check_consistency(dialogue, path, label)
        if dialogue.dialogue_id in seen:
            raise CatalogError(path, f"{label}.dialogue_id", "duplicate dialogue id")
        seen.add(dialogue.dialogue_id)
        dialogues.append(dialogue)
    return dialogues


def _check_consistency(dialogue: Dialogue, path: Path | str, label: str) -> None:
    ids = [goal.id for goal in dialogue.goal_list]
    for index, goal in enumerate(dialogue.goal_list):
        where = f"{label}.goal_list[{index}]"
        if ids.count(goal.id) > 1:
            raise CatalogError(path, f"{where}.id", f"duplicate goal id {goal.id!r}")
        for dep in goal.dependencies:
            if dep not in ids:
                raise CatalogError(path, f"{where}.dependencies", f"unknown goal id {dep!r}")
        turns = [entry.turn for entry in goal.status_history]
        if turns != sorted(turns):
            raise CatalogError(path, f"{where}.status_history", "turns are not in order")


def load_dialogues(path: Path | str) -> list[Dialogue]:
    """Read an ATOD file (JSON array as published, or JSONL).

    Args:
        path (`Path | str`): The file.

    Returns:
        `list[Dialogue]`: The dialogues in file order.

    Raises:
        `CatalogError`: Unreadable file, bad JSON (line/column) or a malformed dialogue.

    Example:
        >>> load_dialogues("medium_sample.json")[0].num_turns  # doctest: +SKIP
        12
    """
    path = Path(path)
    if path.suffix not in {".json", ".jsonl"}:
        # read_data_file picks the parser from the suffix; sniff the first character instead.
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        data = _parse_unknown_suffix(path, text)
    else:
        data = read_data_file(path)
    return parse_dialogues(data, path)


def _parse_unknown_suffix(path: Path, text: str) -> Any:
    if not path.is_file():
        raise CatalogError(path, "", "cannot read file (no such file)")
    stripped = text.lstrip()
    try:
        if stripped.startswith("["):
            return json.loads(text)
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as err:
        raise CatalogError(path, f"line {err.lineno} column {err.colno}", err.msg) from None


def write_dialogues(dialogues: list[Dialogue], path: Path | str) -> None:
    """Write dialogues as JSONL (`.jsonl`) or as a JSON array (any other suffix).

    Args:
        dialogues (`list[Dialogue]`): What to write.
        path (`Path | str`): Target file; parent folders are created.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [d.model_dump(mode="json") for d in dialogues]
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    else:
        path.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n")


def strip_gold(dialogue: Dialogue) -> list[tuple[str, str]]:
    """Return only what a tracker may see: `(speaker, utterance)` per turn, in order.

    Args:
        dialogue (`Dialogue`): A gold dialogue.

    Returns:
        `list[tuple[str, str]]`: The speaker and utterance of each turn.
    """
    return [(turn.speaker, turn.utterance) for turn in sorted(dialogue.turns, key=_turn_key)]


def _turn_key(turn: Turn) -> int:
    return turn.turn_id
