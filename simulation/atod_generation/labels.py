"""Per-turn goal-status annotation and assembly of the ATOD record (atod.md §4.4, SPEC §4.5).

The status of every goal after every turn follows from the plan's act effects
(`dialogue.status_timeline`), so the labels are exact by construction: `status_history`
starts with `{turn: 0, status: not_mentioned}` and adds an entry at each change,
`first_mentioned_turn` is the turn the user introduced the goal, `completion_turn` the turn
the system confirmed it (None unless completed), and each turn lists `all_goals` (every
goal's status, with `status_changed`) and `goal_status_changes`, as the release does.

Example:
    >>> record = build_record(trajectory, plan, rendered, "d-1", {"seed": 0})  # doctest: +SKIP
    >>> record["goal_list"][0]["status_history"][0]  # doctest: +SKIP
    {'turn': 0, 'status': 'not_mentioned'}
"""

from __future__ import annotations

from typing import Any

from simulation.atod_generation.annotate import Trajectory
from simulation.atod_generation.dialogue import PlannedTurn, is_interleaved, status_timeline
from simulation.atod_generation.render import RenderedTurn


def build_record(
    trajectory: Trajectory,
    plan: list[PlannedTurn],
    rendered: list[RenderedTurn],
    dialogue_id: str,
    extra_metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ATOD dialogue record for a planned and rendered dialogue.

    Args:
        trajectory (`Trajectory`): The annotated trajectory.
        plan (`list[PlannedTurn]`): The planned turns.
        rendered (`list[RenderedTurn]`): Their utterances.
        dialogue_id (`str`): The id to use.
        extra_metadata (`dict`, *optional*): Added to `metadata` (seed, generator, ...).

    Returns:
        `dict`: `{dialogue_id, dialogue_index, complexity_class, goal_list, turns, metadata}`
        in the release format (loads with `evaluators.atod.load_dialogues`).
    """
    timeline = status_timeline(trajectory, plan)
    goals = trajectory.goals
    history: dict[str, list[dict[str, Any]]] = {
        g.id: [{"turn": 0, "status": "not_mentioned"}] for g in goals
    }
    turns = []
    previous = {g.id: "not_mentioned" for g in goals}
    for turn_id, (turn, text, status) in enumerate(zip(plan, rendered, timeline, strict=True), 1):
        changes = [g.id for g in goals if status[g.id] != previous[g.id]]
        for goal_id in changes:
            history[goal_id].append({"turn": turn_id, "status": status[goal_id]})
        turns.append(
            {
                "turn_id": turn_id,
                "speaker": turn.speaker,
                "utterance": text.utterance,
                "all_goals": [
                    {
                        "goal_id": g.id,
                        "goal_content": g.content,
                        "status": status[g.id],
                        "status_changed": g.id in changes,
                    }
                    for g in goals
                ],
                "goal_status_changes": [
                    {"goal_id": goal_id, "new_status": status[goal_id], "turn": turn_id}
                    for goal_id in changes
                ],
            }
        )
        previous = status
    goal_list = []
    for goal in goals:
        entries = history[goal.id]
        first = next((e["turn"] for e in entries if e["status"] != "not_mentioned"), None)
        done = next((e["turn"] for e in entries if e["status"] == "completed"), None)
        goal_list.append(
            {
                "id": goal.id,
                "domain": goal.key.domain,
                "intent": goal.key.intent,
                "service": goal.key.service,
                "slots": list(goal.slot_values),
                "slot_values": dict(goal.slot_values),
                "dependencies": list(goal.dependencies),
                "content": goal.content,
                "core_content": goal.core_content,
                "status": entries[-1]["status"],
                "status_history": entries,
                "first_mentioned_turn": first,
                "completion_turn": done,
            }
        )
    metadata = {
        "num_goals": len(goals),
        "estimated_turns": len(turns),
        "async_execution": any(_waits(h, len(turns)) for h in history.values()),
        "interleaving": is_interleaved(plan),
        "proactivity": any(a.kind == "proactive" for t in plan for a in t.acts),
        "num_dependencies": trajectory.num_dependencies,
        "defectiveness_label": trajectory.failure_scenario,
        "domains": sorted({g.key.domain for g in goals}),
        **(extra_metadata or {}),
    }
    return {
        "dialogue_id": dialogue_id,
        "dialogue_index": trajectory.index,
        "complexity_class": trajectory.complexity,
        "goal_list": goal_list,
        "turns": turns,
        "metadata": metadata,
    }


def _waits(entries: list[dict[str, Any]], num_turns: int) -> bool:
    """Whether a goal stayed pending across at least two later turns (asynchronous work)."""
    for index, entry in enumerate(entries):
        if entry["status"] == "pending":
            end = entries[index + 1]["turn"] if index + 1 < len(entries) else num_turns + 1
            if end - entry["turn"] >= 3:
                return True
    return False
