"""Goal-lifecycle metrics: dGCR, NTC, status snapshots and correlations (atod.md §6.1, §8.3).

- dGCR = completed / decided goals, decided = final status `completed` or `failed`, counts
  pooled over all dialogues given.
- NTC = mean over the same decided goals of (terminal turn - first-mention turn); the
  terminal turn is `completion_turn` (or the history's first `completed` turn) for completed
  goals and the turn the history turns `failed` for failed ones. Abandoned and unresolved
  goals are excluded from both.

Example:
    >>> from mads_bench.atod_data import Goal
    >>> done = Goal(id="g1", domain="Hotels", intent="BookHouse", content="c", core_content="c",
    ...             status="completed", dependencies=[], first_mentioned_turn=1, completion_turn=9)
    >>> dgcr([done]), ntc([done])
    (1.0, 8.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from mads_bench.atod_data import DECIDED, Dialogue, Goal


def status_at(goal: Goal, turn: int) -> str:
    """The status a goal holds after turn `turn` (from its status history).

    Args:
        goal (`Goal`): A goal with a `status_history`.
        turn (`int`): Turn id.

    Returns:
        `str`: The last history status at or before `turn`; `not_mentioned` before the
        first entry. Without any history, the final status once `first_mentioned_turn` is
        reached (else `not_mentioned`).
    """
    if not goal.status_history:
        first = goal.first_mentioned_turn
        return goal.status if first is None or turn >= first else "not_mentioned"
    status = "not_mentioned"
    for entry in goal.status_history:
        if entry.turn > turn:
            break
        status = entry.status
    return status


def first_mention_turn(goal: Goal) -> int | None:
    """`first_mentioned_turn`, else the first history turn whose status is not `not_mentioned`."""
    if goal.first_mentioned_turn is not None:
        return goal.first_mentioned_turn
    return next((e.turn for e in goal.status_history if e.status != "not_mentioned"), None)


def terminal_turn(goal: Goal) -> int | None:
    """The turn a decided goal reached its final status (None for undecided goals)."""
    if goal.status not in DECIDED:
        return None
    if goal.status == "completed" and goal.completion_turn is not None:
        return goal.completion_turn
    # The transition into the final status that is never left again.
    turn = None
    for entry in goal.status_history:
        if entry.status == goal.status and turn is None:
            turn = entry.turn
        elif entry.status != goal.status:
            turn = None
    return turn


def dgcr(goals: Iterable[Goal]) -> float | None:
    """Decided goal completion rate; None when no goal is decided.

    Args:
        goals (`Iterable[Goal]`): Goals pooled from any number of dialogues.

    Returns:
        `float | None`: completed / (completed + failed).
    """
    statuses = [g.status for g in goals]
    decided = sum(s in DECIDED for s in statuses)
    return statuses.count("completed") / decided if decided else None


def turns_to_completion(goals: Iterable[Goal]) -> list[int]:
    """(terminal turn - first mention) for every decided goal where both turns are known."""
    spans = []
    for goal in goals:
        start, end = first_mention_turn(goal), terminal_turn(goal)
        if start is not None and end is not None:
            spans.append(end - start)
    return spans


def ntc(goals: Iterable[Goal]) -> float | None:
    """Mean number of turns to a decided terminal status; None when no goal is decided.

    Args:
        goals (`Iterable[Goal]`): Goals pooled from any number of dialogues.

    Returns:
        `float | None`: The mean span.
    """
    spans = turns_to_completion(goals)
    return sum(spans) / len(spans) if spans else None


def pooled_goals(dialogues: Iterable[Dialogue]) -> list[Goal]:
    """All goals of all dialogues, in order."""
    return [goal for dialogue in dialogues for goal in dialogue.goal_list]


def per_dialogue_lifecycle(dialogues: Iterable[Dialogue]) -> dict[str, dict[str, float | None]]:
    """dGCR and NTC of each dialogue on its own, keyed by dialogue id."""
    return {d.dialogue_id: {"dgcr": dgcr(d.goal_list), "ntc": ntc(d.goal_list)} for d in dialogues}


def correlation(xs: Sequence[float | None], ys: Sequence[float | None]) -> dict[str, float | None]:
    """Pearson r and Spearman rho over the pairs where both values exist.

    Args:
        xs (`Sequence[float | None]`): One value per dialogue (None = undefined, skipped).
        ys (`Sequence[float | None]`): The anchor (dGCR) per dialogue, same order.

    Returns:
        `dict`: `pearson`, `spearman` (None with fewer than 3 pairs or a constant side) and
        `n` (pairs used).

    Example:
        >>> correlation([1, 2, 3, 4], [2, 4, 6, 9])["spearman"]
        1.0
    """
    from scipy.stats import pearsonr, spearmanr

    pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if x is not None and y is not None]
    result: dict[str, float | None] = {"pearson": None, "spearman": None, "n": len(pairs)}
    if len(pairs) < 3:
        return result
    a, b = zip(*pairs, strict=True)
    if len(set(a)) < 2 or len(set(b)) < 2:
        return result  # undefined: one side does not vary
    r, rho = float(pearsonr(a, b)[0]), float(spearmanr(a, b)[0])
    result["pearson"] = None if math.isnan(r) else round(r, 6)
    result["spearman"] = None if math.isnan(rho) else round(rho, 6)
    return result
