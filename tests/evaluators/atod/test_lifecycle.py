"""dGCR, NTC, status snapshots and correlations, with hand-checked values."""

from __future__ import annotations

from mads_bench.atod_data import Goal, load_dialogues
from mads_bench.atod_lifecycle import (
    correlation,
    dgcr,
    ntc,
    per_dialogue_lifecycle,
    pooled_goals,
    status_at,
    terminal_turn,
)


def _goal(status, history, first=None, completion=None) -> Goal:
    return Goal(
        id="g",
        domain="D",
        intent="I",
        content="c",
        core_content="c",
        status=status,
        dependencies=[],
        first_mentioned_turn=first,
        completion_turn=completion,
        status_history=[{"turn": t, "status": s} for t, s in history],
    )


def test_sample_gold_dgcr_and_ntc(sample_path):
    dialogues = load_dialogues(sample_path)
    goals = pooled_goals(dialogues)
    # 12 goals: 10 completed, 2 abandoned (excluded), 0 failed -> dGCR = 10 / 10
    assert dgcr(goals) == 1.0
    # spans (completion - first mention): d0: 9-1, 9-1; d1: 17-1, 17-5, 17-3, 17-11;
    # d2: 4-1, 9-3, 10-5, 13-11 -> (8+8+16+12+14+6+3+6+5+2) / 10 = 80 / 10
    assert ntc(goals) == 8.0
    # per dialogue: 16/2, 48/4, 16/4
    per = per_dialogue_lifecycle(dialogues)
    assert [row["ntc"] for row in per.values()] == [8.0, 12.0, 4.0]


def test_failed_goal_terminal_turn_from_history():
    failed = _goal("failed", [(0, "not_mentioned"), (2, "open"), (3, "pending"), (7, "failed")])
    done = _goal(
        "completed", [(0, "not_mentioned"), (1, "open"), (4, "completed")], first=1, completion=4
    )
    dropped = _goal("abandoned", [(1, "open"), (5, "abandoned")], first=1)
    # failed goal: first mention 2 (from the history), terminal 7 -> span 5
    assert terminal_turn(failed) == 7
    # 1 completed of 2 decided; the abandoned goal is excluded from both
    assert dgcr([failed, done, dropped]) == 0.5
    # (5 + 3) / 2
    assert ntc([failed, done, dropped]) == 4.0
    # nothing decided -> undefined
    assert dgcr([dropped]) is None and ntc([dropped]) is None


def test_status_at_reads_the_history():
    goal = _goal("completed", [(0, "not_mentioned"), (3, "open"), (4, "pending"), (9, "completed")])
    # before, at and between transitions
    assert [status_at(goal, t) for t in (2, 3, 5, 9, 20)] == [
        "not_mentioned",
        "open",
        "pending",
        "completed",
        "completed",
    ]


def test_correlation_undefined_and_defined():
    # a constant anchor (all dGCR 1.0, as on the sample) has no correlation
    assert correlation([8.0, 12.0, 4.0], [1.0, 1.0, 1.0])["pearson"] is None
    # monotone but not linear: rho 1, r < 1; None pairs are skipped
    result = correlation([1, 2, 3, 4, None], [1, 2, 3, 10, 5])
    assert result["spearman"] == 1.0 and 0.8 < result["pearson"] < 1.0 and result["n"] == 4
