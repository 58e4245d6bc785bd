"""What the status model sees of one tracked goal at one turn: a fixed vector of evidence.

Per (goal, turn) the tracker gathers the clauses it attributed to the goal on that turn and the
turn's context; `goal_features` turns them into `FEATURES` (names in order, values mostly 0/1):

- **what was said about the goal**, per speaker: whether it was touched, which evidence word
  groups (`status_evidence.json`: correction, deferral, a done report, a failure report, …)
  occur in its clauses, and the weights of the tracker's status cues (`cues.status_scores`);
- **the previous turn** on the same goal (usually the other speaker): touched, done / failure
  report, an offer or results — a user's "thanks" after "I've booked it" is not the same
  evidence as a "thanks" after a list of options;
- **what came before**: whether the system ever reported the goal done or failed, whether the
  user ever accepted an offer for it, the goal's age and how long it has been idle;
- **whether the user moved on or came back**: another goal was touched or opened while this one
  was left alone, a goal of the same domain was opened (a replacement) or opened by a switch
  ("… instead"), the user returned to a goal left idle, the user closed the dialogue.

Example:
    >>> record = GoalRecord(first_turn=1, last_touch=1, last_user_touch=1)
    >>> context = TurnContext(turn=2, speaker="SYSTEM", closing=False)
    >>> x = goal_features(record, ["I've booked your table."], True, context, "Restaurants", True)
    >>> float(x[FEATURES.index("system_done_report")]), float(x[FEATURES.index("pending")])
    (1.0, 0.0)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evaluators.atod import cues

EVIDENCE_FILE = Path(__file__).with_name("status_evidence.json")


def _load_groups(path: Path = EVIDENCE_FILE) -> dict[str, re.Pattern]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: re.compile(p, re.IGNORECASE) for name, p in data.items() if name[0] != "_"}


GROUPS = _load_groups()
_CUES = (("USER", "abandoned"), ("USER", "completed"), ("SYSTEM", "completed"))
_CUES += (("SYSTEM", "failed"), ("SYSTEM", "pending"))
_LAGGED = ("touched", "done_report", "failure_report", "offer", "results", "question")
_SIDES = {"USER": "user", "SYSTEM": "system"}

FEATURES: tuple[str, ...] = (
    "bias",
    *(f"{side}_{name}" for side in _SIDES.values() for name in ("touched", *GROUPS)),
    *(f"{_SIDES[speaker]}_cue_{status}" for speaker, status in _CUES),
    *(f"previous_{name}" for name in _LAGGED),
    "pending",
    "informational",
    "age",
    "idle",
    "done_before",
    "failure_before",
    "accepted_before",
    "moved_on",
    "replaced",
    "switched",
    "came_back",
    "closing",
    "closing_untouched",
    "closing_informational",
    "closing_done_before",
)
_INDEX = {name: i for i, name in enumerate(FEATURES)}


@dataclass
class GoalRecord:
    """What the tracker remembers about one goal between turns, for its features."""

    first_turn: int
    last_touch: int
    last_user_touch: int
    done_before: bool = False
    failure_before: bool = False
    accepted_before: bool = False
    previous: dict[str, float] = field(default_factory=dict)


@dataclass
class TurnContext:
    """The turn around the goals: who spoke, whether the user closed, what was opened."""

    turn: int
    speaker: str
    closing: bool
    others_touched: bool = False
    opened: dict[int, str] = field(default_factory=dict)  # goal index -> domain, new this turn
    switched: frozenset[int] = frozenset()


def clause_evidence(clauses: list[str], touched: bool, speaker: str) -> dict[str, float]:
    """Evidence of the clauses one speaker said about one goal on one turn."""
    side = _SIDES[speaker]
    found: dict[str, float] = {f"{side}_touched": float(touched)}
    for name, pattern in GROUPS.items():
        found[f"{side}_{name}"] = float(any(pattern.search(c) for c in clauses))
    for cue_speaker, status in _CUES:
        if cue_speaker == speaker:
            total = sum(cues.status_scores(c, speaker).get(status, 0.0) for c in clauses)
            found[f"{side}_cue_{status}"] = min(total, 3.0) / 3.0
    return found


def goal_features(
    record: GoalRecord,
    clauses: list[str],
    touched: bool,
    context: TurnContext,
    domain: str,
    informational: bool,
    status: str = "open",
    index: int = -1,
) -> np.ndarray:
    """The feature vector of one goal at one turn (`FEATURES` order).

    Args:
        record (`GoalRecord`): The goal's memory from earlier turns (not yet updated).
        clauses (`list[str]`): This turn's clauses about the goal (attributed to it or naming
            its domain).
        touched (`bool`): Whether the tracker attributed a clause of this turn to the goal.
        context (`TurnContext`): The turn.
        domain (`str`): The goal's domain.
        informational (`bool`): Whether its intent only asks for information.
        status (`str`): Its status before the model decides (`open` or `pending`).
        index (`int`): Its position in the goal table (to tell it from the goals just opened).

    Returns:
        `np.ndarray`: float32 features.
    """
    x = np.zeros(len(FEATURES), dtype=np.float32)
    values = clause_evidence(clauses, touched, context.speaker)
    values.update({f"previous_{k}": record.previous.get(k, 0.0) for k in _LAGGED})
    user = context.speaker == "USER"
    idle = context.turn - record.last_touch
    values.update(
        bias=1.0,
        pending=float(status == "pending"),
        informational=float(informational),
        age=min(context.turn - record.first_turn, 20) / 10,
        idle=min(idle, 20) / 10,
        done_before=float(record.done_before),
        failure_before=float(record.failure_before),
        accepted_before=float(record.accepted_before),
        moved_on=float(user and not touched and context.others_touched),
        replaced=float(
            user
            and index not in context.opened
            and any(other == domain for other in context.opened.values())
        ),
        switched=float(index in context.switched),
        came_back=float(user and touched and context.turn - record.last_user_touch > 2),
        closing=float(context.closing),
        closing_untouched=float(context.closing and not touched),
        closing_informational=float(context.closing and informational),
        closing_done_before=float(context.closing and record.done_before),
    )
    for name, value in values.items():
        x[_INDEX[name]] = value
    return x


def remember(record: GoalRecord, x: np.ndarray, context: TurnContext) -> None:
    """Fold this turn's evidence (`x` from `goal_features`) into the goal's record."""
    side = _SIDES[context.speaker]
    touched = bool(x[_INDEX[f"{side}_touched"]])
    if touched:
        record.last_touch = context.turn
        if context.speaker == "USER":
            record.last_user_touch = context.turn
    if context.speaker == "SYSTEM":
        record.done_before |= bool(
            x[_INDEX["system_cue_completed"]] or x[_INDEX["system_done_report"]]
        )
        record.failure_before |= bool(x[_INDEX["system_cue_failed"]])
    else:
        record.accepted_before |= bool(x[_INDEX["user_accept"]])
    record.previous = {
        name: float(x[_INDEX[f"{side}_{name}"]]) if f"{side}_{name}" in _INDEX else 0.0
        for name in _LAGGED
    }
