"""Turning a tracker run into an ATOD-format dialogue, so `atod score` can read it.

Only identifiers travel from the input dialogue (`dialogue_id`, `dialogue_index` and, when
the input has one, `complexity_class`; `atod score` pairs by id and groups by gold's label);
the goals, statuses, per-turn records and metadata all come from the tracker. The input is a
gold `Dialogue` or a turns-only `TrackerInput`.

Example:
    >>> from mads_bench.atod_data import load_dialogues  # doctest: +SKIP
    >>> from evaluators.atod.tracker import MemoryTracker  # doctest: +SKIP
    >>> dialogue = load_dialogues("medium_sample.json")[0]  # doctest: +SKIP
    >>> state = MemoryTracker().track(strip_gold(dialogue))  # doctest: +SKIP
    >>> prediction_dialogue(dialogue, state).goal_list[0].intent  # doctest: +SKIP
    'BookHouse'
"""

from __future__ import annotations

from evaluators.atod.memory import TrackedGoal
from evaluators.atod.tracker import TrackerState
from mads_bench.atod_data import Dialogue, Goal, Prediction, StatusEntry, TrackerInput, Turn


def tracked_to_goal(goal: TrackedGoal) -> Goal:
    """One tracked goal in the ATOD goal format."""
    return Goal(
        id=goal.id,
        domain=goal.domain,
        intent=goal.intent,
        content=goal.content,
        core_content=goal.core_content,
        status=goal.status,
        dependencies=list(goal.dependencies),
        slots=list(goal.slot_values),
        slot_values=dict(goal.slot_values),
        status_history=[StatusEntry(turn=t, status=s) for t, s in goal.history],
        first_mentioned_turn=goal.first_turn,
        completion_turn=goal.completion_turn,
        links=list(goal.links),
    )


def prediction_dialogue(source: Dialogue | TrackerInput, state: TrackerState) -> Prediction:
    """Build the predicted dialogue for `source` from a tracker run.

    Args:
        source (`Dialogue | TrackerInput`): The input dialogue (only its ids and complexity
            label are used).
        state (`TrackerState`): What `MemoryTracker.track` returned for its turns.

    Returns:
        `Prediction`: Predicted goals, per-turn states and metadata, in the ATOD format.
    """
    goals = [tracked_to_goal(g) for g in state.goals]
    statuses = {entry.status for g in goals for entry in g.status_history}
    return Prediction(
        dialogue_id=source.dialogue_id,
        dialogue_index=source.dialogue_index,
        complexity_class=source.complexity_class,
        goal_list=goals,
        turns=[Turn.model_validate(turn) for turn in state.turns],
        metadata={
            "num_goals": len(goals),
            "estimated_turns": len(state.turns),
            "async_execution": "pending" in statuses,
            "interleaving": _interleaved(state),
            "proactivity": False,
            "tracker": "mads-bench MemoryTracker",
        },
    )


def _interleaved(state: TrackerState) -> bool:
    """Whether a goal was touched again after another goal had been touched in between."""
    order = [c["goal_id"] for t in state.turns for c in t["goal_status_changes"]]
    seen: list[str] = []
    for goal_id in order:
        if goal_id in seen and seen[-1] != goal_id:
            return True
        seen.append(goal_id)
    return False
