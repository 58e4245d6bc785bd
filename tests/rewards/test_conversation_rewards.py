"""Conversation-mode rewards: ranges, None where a part does not apply, and their inputs.

The summaries come from `rewards.summarise_conversation` over real scripted and broken
conversations of the mock domain, so every reward sees what a rollout would give it.
"""

from __future__ import annotations

import math

import pytest

from mads_bench.catalog import domain_of, load_domain
from rewards import summarise_conversation
from rewards.conversation import CONVERSATION_REWARDS, gold_step_score
from simulation.environment import simulate

RANGES = {
    "task_success": (0.0, 1.0),
    "partial_credit": (0.0, 1.0),
    "gold_steps": (0.0, 1.0),
    "sage_turns": (-1.0, 0.0),
    "conversation_format": (0.0, 1.0),
    "turn_cost": (-1.0, 0.0),
}


@pytest.fixture(scope="module")
def outcomes() -> list[dict]:
    """Summaries of scripted conversations, and of the same ones cut short or broken."""
    out = []
    for scenario in load_domain("mock").scenarios:
        trajectory = simulate(scenario, seed=1)
        out.append(summarise_conversation(trajectory, scenario, max_steps=4))
        broken = trajectory.model_copy(
            update={"messages": trajectory.messages[:3], "end_reason": "truncated"}
        )
        out.append(summarise_conversation(broken, scenario, max_steps=4))
    return out


def test_every_conversation_reward_is_registered_with_a_range() -> None:
    assert set(RANGES) == set(CONVERSATION_REWARDS)
    assert all(f.rollout == "conversation" for f in CONVERSATION_REWARDS.values())


@pytest.mark.parametrize("name", sorted(CONVERSATION_REWARDS))
def test_values_are_in_range(name: str, outcomes: list[dict]) -> None:
    low, high = RANGES[name]
    values = CONVERSATION_REWARDS[name](["transcript"] * len(outcomes), outcome=outcomes)
    assert len(values) == len(outcomes)
    for value in values:
        assert value is None or (type(value) is float and math.isfinite(value)), (name, value)
        assert value is None or low <= value <= high, (name, value)


def test_the_scripted_gold_policy_scores_full_marks_and_a_cut_run_none(outcomes) -> None:
    whole, cut = outcomes[0], outcomes[1]
    assert whole["success"] and whole["gold_steps"] == 1.0 and whole["format"] == 1.0
    assert not cut["success"] and cut["truncated"] and cut["partial_credit"] == 0.0
    # the impossible scenario has no gold writes: partial credit does not apply
    assert outcomes[4]["partial_credit"] is None


def test_gold_steps_stop_after_the_first_move_off_the_gold_policy() -> None:
    scenario = load_domain("mock").scenarios[0]
    trajectory = simulate(scenario, seed=1)
    messages = list(trajectory.messages)
    first = next(i for i, m in enumerate(messages) if m.role == "assistant")
    wrong = messages[first].model_copy(
        update={"content": messages[first].content.replace('"I1"', '"I9"')}
    )
    messages[first] = wrong
    # right type and tool, wrong argument: 2/3 on the first step, and nothing after it counts
    score = gold_step_score(
        trajectory.model_copy(update={"messages": messages}), scenario, domain=domain_of(scenario)
    )
    assert score == pytest.approx(2 / 3)


def test_logged_parts_reach_trl(outcomes) -> None:
    logged: dict[str, float] = {}
    CONVERSATION_REWARDS["task_success"](
        ["t"] * len(outcomes), outcome=outcomes, log_metric=logged.__setitem__
    )
    assert logged["conversation/truncated"] == 0.5 and 0 < logged["conversation/state"] <= 1
