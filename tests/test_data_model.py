"""Tests for the pydantic data model: strictness and the scenario consistency rules."""

import pytest
from pydantic import ValidationError

from mads_bench.data_model import (
    BackendFailure,
    GoalRevision,
    Scenario,
    ToolSpec,
    Trajectory,
)

BASE = {
    "id": "s1",
    "domain": "mock",
    "objective": "Cancel order O1.",
    "persona": "priya_raman",
    "hard_constraints": {"order_id": "O1"},
    "success_criteria": ["cancelled"],
    "complexity": "normal",
    "gold_workflow": [{"name": "cancel_order", "arguments": {"order_id": "O1"}}],
}


def test_unknown_fields_are_rejected():
    # a typo in a hand-written file must not be silently ignored
    with pytest.raises(ValidationError, match="objectiv"):
        Scenario.model_validate({**BASE, "objectiv": "x"})


def test_complexity_rules():
    # impossible needs the flag and a fallback
    with pytest.raises(ValidationError, match="exactly when"):
        Scenario.model_validate({**BASE, "complexity": "impossible"})
    with pytest.raises(ValidationError, match="fallback_behavior"):
        Scenario.model_validate({**BASE, "complexity": "impossible", "impossible": True})
    # unhappy needs a behavior, normal must have none
    with pytest.raises(ValidationError, match="at least one behavior"):
        Scenario.model_validate({**BASE, "complexity": "unhappy"})
    timeout = {"kind": "timeout", "tool": "get_item"}
    with pytest.raises(ValidationError, match="no injected behaviors"):
        Scenario.model_validate({**BASE, "behaviors": [timeout]})
    ok = Scenario.model_validate({**BASE, "complexity": "unhappy", "behaviors": [timeout]})
    assert ok.behaviors[0].kind == "timeout" and ok.behaviors[0].on_calls == [1]


def test_a_goal_needs_a_call_or_a_fact():
    # with no gold call and nothing to tell, an assistant that does nothing would reach it
    with pytest.raises(ValidationError, match="doing nothing"):
        Scenario.model_validate({**BASE, "gold_workflow": []})
    told = Scenario.model_validate({**BASE, "gold_workflow": [], "must_say": ["O1 shipped"]})
    assert told.must_say == ["O1 shipped"]
    declined = {"complexity": "impossible", "impossible": True, "fallback_behavior": "Say no."}
    assert Scenario.model_validate({**BASE, "gold_workflow": [], **declined}).impossible


def test_behaviors_must_name_known_slots():
    # withholding a slot the user does not have is a scenario bug
    bad = {"kind": "partial_information", "withheld": ["color"]}
    with pytest.raises(ValidationError, match="unknown slots"):
        Scenario.model_validate({**BASE, "complexity": "unhappy", "behaviors": [bad]})


def test_behavior_parameters():
    # a revision must change something; a trigger needs calls or a probability
    with pytest.raises(ValidationError, match="must revise"):
        GoalRevision(after_user_turn=1)
    assert BackendFailure(probability=0.5).on_calls is None
    with pytest.raises(ValidationError):
        BackendFailure(on_calls=[])
    with pytest.raises(ValidationError):
        BackendFailure(status_code=404)


def test_tool_spec_schema_checks():
    prop = {"type": "string", "description": "an x"}
    params = {"type": "object", "properties": {"x": prop}, "required": ["x"]}
    spec = ToolSpec(name="t", description="d", parameters=params, returns={}, kind="read")
    assert spec.required == ["x"]
    assert spec.to_openai()["function"]["parameters"] == params
    # required names must exist, parameters must be an object schema, schemas must be valid
    with pytest.raises(ValidationError, match="without a property"):
        ToolSpec(
            name="t",
            description="d",
            parameters={**params, "required": ["y"]},
            returns={},
            kind="read",
        )
    with pytest.raises(ValidationError, match="type"):
        ToolSpec(name="t", description="d", parameters={"type": "array"}, returns={}, kind="read")
    # every parameter is described, and YAML slips that leave null-valued keys are caught
    with pytest.raises(ValidationError, match="string description"):
        ToolSpec(
            name="t",
            description="d",
            parameters={"type": "object", "properties": {"x": {"type": "string"}}},
            returns={},
            kind="read",
        )
    slip = {"type": "object", "properties": {"x": {**prop, "YYYY-MM-DD": None}}}
    with pytest.raises(ValidationError, match="without a value"):
        ToolSpec(name="t", description="d", parameters=slip, returns={}, kind="read")
    # formats are enforced when arguments are checked
    dated = {
        "type": "object",
        "properties": {"d": {"type": "string", "format": "date", "description": "day"}},
    }
    spec = ToolSpec(name="t", description="d", parameters=dated, returns={}, kind="read")
    assert spec.argument_errors({"d": "2026-02-30"}) == ["d: '2026-02-30' is not a 'date'"]
    assert spec.argument_errors({"d": "2026-02-28"}) == []
    with pytest.raises(ValidationError, match="not a valid JSON Schema"):
        ToolSpec(name="t", description="d", parameters=params, returns={"type": 3}, kind="read")


def test_trajectory_round_trips_through_json():
    traj = Trajectory(
        id="t",
        scenario_id="s",
        domain="mock",
        complexity="normal",
        persona="p",
        seed=3,
        messages=[{"role": "user", "content": "hi", "turn_index": 0}],
        injections=[{"kind": "timeout", "tool": "get_item", "call_index": 1, "seed": 3}],
    )
    again = Trajectory.model_validate_json(traj.model_dump_json())
    assert again == traj
