"""Records SAGE reads and writes: turn records (SPEC §4.4), labels, criteria and verdicts.

A turn record holds one user turn and the agent's reply with the workflow state before and
after the turn; dialogue acts are optional (the evaluator must also work from text alone).
A criterion is one atomic question compiled from a turn ("does the failure X fire?"); each
stage of the cascade answers it with ``True`` (fires), ``False`` or ``None`` (abstain).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from mads_bench.files import atomic_write_text
from mads_bench.loading import JsonlError
from mads_bench.loading import read_jsonl as jsonl_rows

if TYPE_CHECKING:
    from evaluators.sage.workflow import WorkflowSpec

FailureClass = Literal["IUV", "WNF", "PC", "UV"]
FAILURE_CLASSES: tuple[str, ...] = ("IUV", "WNF", "PC", "UV")
Stage = Literal["S1", "S2", "S3"]
TurnVerdictLabel = Literal["failure", "acceptable", "undecided"]
Speaker = Literal["user", "agent", "system", "tool", "USER", "SYSTEM"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DialogueAct(_Strict):
    """One dialogue act in SGD's vocabulary (INFORM, REQUEST, CONFIRM, NOTIFY_SUCCESS, ...)."""

    act: str = Field(description="Act name, upper case.")
    slot: str = Field(default="", description="Slot the act is about; empty for slot-less acts.")
    values: list[str] = Field(default_factory=list, description="Surface values of the act.")


class HistoryItem(_Strict):
    """One earlier utterance of the dialogue."""

    speaker: Speaker = Field(
        description="`user` or `agent` (SGD's USER/SYSTEM and MADS' system/tool are accepted)."
    )
    text: str = Field(description="The utterance.")


class TurnRecord(_Strict):
    """One turn to evaluate (SPEC §4.4)."""

    dialogue_id: str
    turn_id: str
    service: str = Field(description="Workflow service, e.g. `Restaurants_2` or a MADS domain.")
    intent: str = Field(description="Active intent / workflow within the service.")
    history: list[HistoryItem] = Field(default_factory=list, description="Turns before u_t.")
    user: str = Field(description="User utterance u_t.")
    agent: str = Field(description="Agent response a_t.")
    state_before: dict[str, str] = Field(default_factory=dict, description="s_{t-1}.")
    state_after: dict[str, str] = Field(default_factory=dict, description="s_t.")
    user_acts: list[DialogueAct] | None = Field(default=None, description="Acts of u_t.")
    agent_acts: list[DialogueAct] | None = Field(default=None, description="Acts of a_t.")

    @property
    def key(self) -> tuple[str, str]:
        """``(dialogue_id, turn_id)``, the join key with labels and verdicts."""
        return (self.dialogue_id, self.turn_id)

    def state_diff(self) -> dict[str, tuple[str | None, str | None]]:
        """Slots whose value changed: ``{slot: (before, after)}`` (None = absent)."""
        slots = sorted(set(self.state_before) | set(self.state_after))
        return {
            s: (self.state_before.get(s), self.state_after.get(s))
            for s in slots
            if self.state_before.get(s) != self.state_after.get(s)
        }

    def without_acts(self) -> TurnRecord:
        """The same turn with its dialogue acts removed (the text-only condition)."""
        return self.model_copy(update={"user_acts": None, "agent_acts": None})


class TurnLabel(_Strict):
    """Gold label of a benchmark turn."""

    dialogue_id: str
    turn_id: str
    label: Literal["failure", "acceptable"]
    failure_class: FailureClass | None = None


class Criterion(_Strict):
    """One atomic, schema-grounded question compiled from a turn: does ``failure_class`` fire?"""

    criterion_id: str = Field(description="Unique within the turn, e.g. `UV:restaurant_name`.")
    failure_class: FailureClass
    args: dict[str, Any] = Field(default_factory=dict, description="Schema-grounded arguments.")
    evidence: dict[str, Any] = Field(default_factory=dict, description="Minimal evidence span.")
    text: str = Field(description="The question in words (what an S3 judge is asked).")


class CriterionResult(_Strict):
    """The cascade's answer on one criterion."""

    criterion: Criterion
    fires: bool | None = Field(description="True = failure, False = fine, None = abstained.")
    stage: Stage | None = Field(description="Stage that decided; None when every stage abstained.")
    margin: float = Field(description="Decision confidence in [0, 1]; 1 for symbolic decisions.")
    trace: list[str] = Field(default_factory=list, description="What each stage found.")


class Verdict(_Strict):
    """The turn-level verdict with its evidence and, for failures, a repair signal."""

    dialogue_id: str
    turn_id: str
    verdict: TurnVerdictLabel
    failure_classes: list[FailureClass] = Field(default_factory=list)
    margin: float = Field(description="Minimum decision margin over decided criteria.")
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    repair: list[dict[str, Any]] = Field(default_factory=list)
    stages: dict[str, int] = Field(default_factory=dict, description="Criteria decided per stage.")
    latency_s: float = Field(default=0.0, description="Wall time share of this turn.")


def read_jsonl(path: Path, model: type[BaseModel]) -> list[Any]:
    """Read a JSONL file into models; errors name the file, the line and the field.

    Args:
        path (`Path`): The file.
        model (`type[BaseModel]`): `TurnRecord`, `TurnLabel` or `Verdict`.

    Returns:
        `list`: One model per non-empty line.

    Raises:
        `JsonlError`: For unreadable JSON or a record that does not validate.
    """
    return [row for _, row in jsonl_rows(path, model, what=None)]


class SageFileError(JsonlError):
    """A SAGE input file that cannot be used: ``<file>[:<line>]: <field>: <reason>``."""


KeyedT = TypeVar("KeyedT", TurnRecord, TurnLabel, Verdict)


def _file_error(path: Path, line: int, reason: str) -> SageFileError:
    problem = SageFileError(f"{path}:{line}: {reason}")
    problem.line, problem.reason = line, reason
    return problem


def read_keyed(path: Path, model: type[KeyedT]) -> list[tuple[int, KeyedT]]:
    r"""Read turn records, labels or verdicts with their line numbers, one per turn key.

    Args:
        path (`Path`): The JSONL file.
        model (`type`): `TurnRecord`, `TurnLabel` or `Verdict`.

    Returns:
        `list[tuple[int, model]]`: ``(line, row)`` for each non-blank line, in file order.

    Raises:
        `SageFileError`: A line that is not JSON or does not validate, a ``(dialogue_id,
            turn_id)`` seen on an earlier line (scores would count that turn twice), or a file
            without a single record (scores of nothing would read as real ones).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "labels.jsonl"
        >>> row = '{"dialogue_id": "d", "turn_id": "1", "label": "acceptable"}\n'
        >>> _ = path.write_text(row + row)
        >>> read_keyed(path, TurnLabel)
        Traceback (most recent call last):
        ...
        evaluators.sage.records.SageFileError: ...labels.jsonl:2: turn_id: duplicate turn ...
    """
    path = Path(path)
    rows = list(jsonl_rows(path, model, what=None, error=SageFileError))
    if not rows:
        what = {TurnRecord: "turn records", TurnLabel: "labels", Verdict: "verdicts"}[model]
        raise SageFileError(f"{path}: no {what} (the file is empty)")
    first_line: dict[tuple[str, str], int] = {}
    for line, row in rows:
        key = (row.dialogue_id, row.turn_id)
        if key in first_line:
            reason = f"turn_id: duplicate turn {key} (first on line {first_line[key]})"
            raise _file_error(path, line, reason)
        first_line[key] = line
    return rows


def read_turns(path: Path, spec: WorkflowSpec | None = None) -> list[TurnRecord]:
    """Read a turn-record file, each turn checked against the workflow it is evaluated on.

    Args:
        path (`Path`): The JSONL file of `TurnRecord` rows.
        spec (`WorkflowSpec`, *optional*): The workflow; every service, intent and slot of a
            record must be one it knows (an unknown slot would be judged against nothing).

    Returns:
        `list[TurnRecord]`: The records, in file order.

    Raises:
        `SageFileError`: As `read_keyed`, or ``<file>:<line>: <field>: <reason>`` for a
            service, intent or slot the workflow does not hold.
    """
    rows = read_keyed(path, TurnRecord)
    if spec is not None:
        for line, record in rows:
            problem = spec.unknown_field(record)
            if problem:
                raise _file_error(Path(path), line, problem)
    return [record for _, record in rows]


def write_jsonl(path: Path, rows: list[BaseModel]) -> None:
    """Write models as JSONL (one per line) all at once, creating the parent folder."""
    text = "".join(row.model_dump_json(exclude_none=False) + "\n" for row in rows)
    atomic_write_text(path, text)
