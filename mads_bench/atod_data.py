"""The published ATOD dialogue format as typed records, with a loader and a writer.

One dialogue (SPEC §4.5, `../shared/data/atod_sample/schema.json`)::

    {dialogue_id, dialogue_index, complexity_class, metadata,
     goal_list: [{id, domain, intent, slots, slot_values, dependencies, content,
                  core_content, status, status_history: [{turn, status}],
                  first_mentioned_turn, completion_turn}],
     turns: [{turn_id, speaker, utterance, all_goals, goal_status_changes}]}

Three views of it: `Dialogue` (gold: everything above is required), `Prediction` (what
`atod score --pred` reads: the same without `complexity_class`, which is taken from gold) and
`TrackerInput` (what `atod track` reads: an id and turns with speaker and utterance; gold in
it is kept but not validated, so turns-only files work).

Files are a JSON array (as published) or JSONL. Statuses are read case-insensitively and
stored lowercase. Unknown extra keys are kept (the release schema allows them). A malformed
file raises `CatalogError` naming the file, the dialogue and the field::

    medium.json: [1](ab30c6ee-...).goal_list[3].status: Input should be 'open', ...

Example:
    >>> from mads_bench.atod_data import load_dialogues  # doctest: +SKIP
    >>> dialogues = load_dialogues("medium_sample.json")  # doctest: +SKIP
    >>> dialogues[0].goal_list[0].status  # doctest: +SKIP
    'completed'
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)
from pydantic_core import PydanticCustomError

from mads_bench.files import atomic_write_text
from mads_bench.loading import CatalogError, load_json_or_jsonl, validation_error

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


_SPEAKER_ALIASES = {"ASSISTANT": "SYSTEM", "AGENT": "SYSTEM"}


def _upper_speaker(value: Any) -> Any:
    """``user`` / ``system`` in any case; chat role names (assistant, agent) are SYSTEM."""
    if not isinstance(value, str):
        return value
    speaker = value.strip().upper()
    return _SPEAKER_ALIASES.get(speaker, speaker)


Complexity = Literal["medium", "complex"]


class Turn(_Record):
    """One utterance; the tracker may read only `speaker` and `utterance`."""

    turn_id: int = Field(description="1-based turn id.")
    speaker: Literal["USER", "SYSTEM"] = Field(description="Who speaks.")
    utterance: str = Field(description="What is said.")
    all_goals: list[dict[str, Any]] = Field(default_factory=list, description="Per-turn states.")
    goal_status_changes: list[StatusChange] = Field(default_factory=list)
    _upper = field_validator("speaker", mode="before")(_upper_speaker)


class Dialogue(_Record):
    """One ATOD dialogue."""

    dialogue_id: str = Field(min_length=1, description="Unique id.")
    complexity_class: Complexity = Field(description="Construction label.")
    goal_list: list[Goal] = Field(description="Goals with their final statuses and histories.")
    turns: list[Turn] = Field(min_length=1, description="The utterances in order.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Dialogue attributes.")
    dialogue_index: int | None = Field(default=None, description="Position in the release.")

    @property
    def num_turns(self) -> int:
        """The last turn id (turn ids are 1-based)."""
        return max(turn.turn_id for turn in self.turns)


class Prediction(Dialogue):
    """A tracker's output: a dialogue whose complexity label may be absent (gold has it)."""

    complexity_class: Complexity | None = Field(
        default=None, description="Copied from the tracker input when it had one."
    )


class TrackerTurn(_Record):
    """What a tracker reads of a turn: who speaks and what is said."""

    speaker: Literal["USER", "SYSTEM"] = Field(description="Who speaks.")
    utterance: str = Field(description="What is said.")
    turn_id: int | None = Field(default=None, description="1-based turn id (default: position).")
    _upper = field_validator("speaker", mode="before")(_upper_speaker)


class TrackerInput(_Record):
    """A dialogue as `atod track` reads it: an id and turns; gold keys are carried, not read."""

    dialogue_id: str = Field(min_length=1, description="Unique id (pairs predictions with gold).")
    turns: list[TrackerTurn] = Field(min_length=1, description="The utterances in order.")
    dialogue_index: int | None = Field(default=None, description="Position in the release.")
    complexity_class: Complexity | None = Field(default=None, description="Copied if given.")

    @field_validator("turns")
    @classmethod
    def _number_turns(cls, turns: list[TrackerTurn]) -> list[TrackerTurn]:
        given = [turn.turn_id is not None for turn in turns]
        if any(given) and not all(given):
            raise PydanticCustomError(
                "mixed_turn_ids",
                "turns[{index}] has no turn_id; give every turn one, or none",
                {"index": given.index(False)},
            )
        for position, turn in enumerate(turns, start=1):
            if turn.turn_id is None:
                turn.turn_id = position
        return turns


RecordT = TypeVar("RecordT", Dialogue, Prediction, TrackerInput)


def parse_dialogues(
    data: Any, path: Path | str = "<data>", *, model: type[RecordT] = Dialogue
) -> list[RecordT]:
    """Validate already-parsed JSON (a list of dialogue dicts, or one dict) as dialogues.

    Args:
        data (`Any`): The parsed file content.
        path (`Path | str`): Shown in error messages.
        model (`type`): `Dialogue` (gold, default), `Prediction` or `TrackerInput`.

    Returns:
        `list`: The dialogues in file order, as `model` records.

    Raises:
        `CatalogError`: Naming the file, the dialogue (index and id) and the field.

    Example:
        >>> turns = [{"speaker": "user", "utterance": "Book a hotel."}]
        >>> dialogue = parse_dialogues([{"dialogue_id": "d1", "turns": turns}], model=TrackerInput)
        >>> dialogue[0].turns[0].speaker, dialogue[0].turns[0].turn_id
        ('USER', 1)
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
            dialogue = model.model_validate(item)
        except ValidationError as err:
            raise validation_error(path, err, prefix=label) from None
        if isinstance(dialogue, Dialogue):
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


def load_dialogues(path: Path | str, *, model: type[RecordT] = Dialogue) -> list[RecordT]:
    """Read an ATOD file (JSON array as published, or JSONL).

    Args:
        path (`Path | str`): The file: a JSON array (any file starting with `[`, and every
            `.json` file) or JSONL (one dialogue object per line).
        model (`type`): `Dialogue` (gold, default), `Prediction` or `TrackerInput`.

    Returns:
        `list`: The dialogues in file order (none for an empty file).

    Raises:
        `CatalogError`: Unreadable file, bad JSON (line/column) or a malformed dialogue.

    Example:
        >>> load_dialogues("medium_sample.json")[0].num_turns  # doctest: +SKIP
        12
    """
    path = Path(path)
    return parse_dialogues(load_json_or_jsonl(path), path, model=model)


def write_dialogues(dialogues: list[Dialogue], path: Path | str) -> None:
    """Write dialogues as JSONL (`.jsonl`) or as a JSON array (any other suffix).

    The file is replaced whole (`atomic_write_text`): a failed write keeps the old one.

    Args:
        dialogues (`list[Dialogue]`): What to write (a `Prediction` without a complexity
            label is written without the key).
        path (`Path | str`): Target file; parent folders are created.
    """
    path = Path(path)
    rows = [d.model_dump(mode="json") for d in dialogues]
    for row in rows:
        if row.get("complexity_class", "") is None:
            del row["complexity_class"]
    if path.suffix == ".jsonl":
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    else:
        text = json.dumps(rows, ensure_ascii=False, indent=1) + "\n"
    atomic_write_text(path, text)


def strip_gold(dialogue: Dialogue | TrackerInput) -> list[tuple[str, str]]:
    """Return only what a tracker may see: `(speaker, utterance)` per turn, in order.

    Args:
        dialogue (`Dialogue | TrackerInput`): A gold dialogue or a tracker input.

    Returns:
        `list[tuple[str, str]]`: The speaker and utterance of each turn, by turn id.
    """
    turns = sorted(dialogue.turns, key=lambda turn: turn.turn_id)
    return [(turn.speaker, turn.utterance) for turn in turns]
