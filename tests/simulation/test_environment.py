"""The environment: reset and step play the runner's conversation; the domain is handed in."""

from __future__ import annotations

import pytest

from mads_bench.catalog import load_domain
from mads_bench.data_model import Trajectory
from simulation.agents import make_agent
from simulation.environment import Environment, simulate
from simulation.runner import conversation_seed

MOCK = load_domain("mock")


def test_reset_and_step_play_the_same_conversation_as_simulate() -> None:
    scenario = MOCK.scenarios[1]
    seed = conversation_seed(4, scenario.id, 0)
    environment = Environment(MOCK, scenario, seed=seed, assistant_spec="scripted")
    assistant = make_agent("assistant", "scripted", scenario, domain=MOCK, seed=seed)
    view, steps = environment.reset(), 0
    # the first view is the system prompt and the user's opening
    assert [m.role for m in view] == ["system", "user"]
    while not isinstance(view, Trajectory):
        view = environment.step(assistant.respond(view).content)
        steps += 1
    # step by step gives exactly what simulate writes for that seed (the id aside)
    expected = simulate(scenario, seed=4, domain=MOCK)
    assert view.model_copy(update={"id": expected.id}) == expected
    assert steps == sum(m.role == "assistant" for m in expected.messages) > 1
    # a finished conversation takes no more steps until it is reset
    with pytest.raises(RuntimeError, match="reset"):
        environment.step("hello")
    assert environment.reset()[1].content == view.messages[1].content


def test_truncate_ends_the_conversation_at_its_pending_step() -> None:
    environment = Environment(MOCK, MOCK.scenarios[0], seed=0)
    environment.reset()
    trajectory = environment.truncate()
    assert trajectory.end_reason == "truncated" and trajectory.backends["assistant"] == "policy"
    assert [m.role for m in trajectory.messages] == ["system", "user"]


def test_a_scenario_of_another_domain_is_refused() -> None:
    banking = load_domain("banking")
    with pytest.raises(ValueError, match="is of 'banking', not 'mock'"):
        Environment(MOCK, banking.scenarios[0], seed=0)
