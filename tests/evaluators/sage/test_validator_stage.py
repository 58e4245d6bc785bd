"""The SAGE validator stage on MADS trajectories: fabricated arguments fire UV, a completion
claim without the write call fires PC, clean scripted mock conversations pass."""

from __future__ import annotations

import pytest

from evaluators.sage.mads_turns import claims_completion, compile_trajectory
from evaluators.sage.validator_stage import sage_check
from mads_bench.catalog import load_domain
from mads_bench.data_model import Message, ToolCall, ToolResult, Trajectory
from mads_bench.pre_act import Action, PreActStep, render_step
from simulation.environment import simulate
from tests.simulation.validator.corrupt import with_step

BUY, CANCEL, KETTLE = "mock-buy-mug-unhappy", "mock-cancel-normal", "mock-kettle-impossible"
MOCK = load_domain("mock")  # the pack each check is handed (nothing below looks it up)
SYSTEM = "You are a mock shop assistant.\nToday is 2026-03-16.\n\nTools (...)"


def _assistant(turn: int, step: int, action: Action) -> Message:
    call = None
    if action.type == "tool":
        call = ToolCall(id=f"c{turn}{step}", name=action.name, arguments=action.arguments)
    return Message(
        role="assistant",
        content=render_step(PreActStep(think="t", action=action)),
        turn_index=turn,
        step_index=step,
        tool_call=call,
    )


def cancel_conversation(*steps: Message) -> Trajectory:
    """A hand-made mock-cancel conversation: system, the user's request, then ``steps``."""
    head = [
        Message(role="system", content=SYSTEM, turn_index=0),
        Message(role="user", content="Hello, please cancel my order O1.", turn_index=0),
    ]
    return Trajectory(
        id="hand-1",
        scenario_id=CANCEL,
        domain="mock",
        complexity="normal",
        persona="priya_raman",
        seed=0,
        messages=[*head, *steps],
    )


def cancel_result(ok: bool) -> Message:
    content = '{"order_id": "O1", "refund": 12.5}' if ok else '{"code": "policy", "message": "no"}'
    result = ToolResult(call_id="c00", name="cancel_order", ok=ok, content=content)
    return Message(role="tool", content=content, turn_index=0, step_index=0, tool_result=result)


@pytest.mark.parametrize("scenario_id", [BUY, KETTLE])
def test_scripted_mock_conversations_pass(scenario_id, scenarios, minilm_static_path):
    # the scripted policy grounds every argument and claims completion only after the write
    scenario = scenarios[scenario_id]
    verdict = sage_check(simulate(scenario, seed=0), scenario, domain=MOCK)
    assert verdict == {"passed": True, "reasons": [], "decided_by": "rules"} or (
        verdict["passed"] and verdict["decided_by"] == "embedding"
    )


def test_fabricated_argument_fires_uv(scenarios, minilm_static_path):
    # the scripted run calls place_order(item_id="I1", quantity=2); "I7" was never said nor
    # returned (where the call falls depends on the seeded wording: find it)
    scenario = scenarios[BUY]
    clean = simulate(scenario, seed=0)
    index, call = next(
        (i, m)
        for i, m in enumerate(clean.messages)
        if m.tool_call is not None and m.tool_call.name == "place_order"
    )
    assert call.tool_call.arguments == {"item_id": "I1", "quantity": 2}
    action = Action.tool("place_order", {"item_id": "I7", "quantity": 2})
    verdict = sage_check(with_step(clean, index, action=action), scenario, domain=MOCK)
    assert not verdict["passed"]
    # exactly one failure: the item id of that call (quantity 2 is an exempt small count)
    assert len(verdict["reasons"]) == 1
    where = f"turn {call.turn_index} step {call.step_index}"
    assert verdict["reasons"][0].startswith(f"[embedding] {where}: sage_uv: ")
    assert verdict["reasons"][0].endswith("(UV:item_id of place_order)")


def test_completion_claim_without_write_fires_pc(minilm_static_path):
    # "is cancelled" with no cancel_order call at all: O(s) is false, the say confirms
    claim = _assistant(0, 0, Action.say("Your order O1 is cancelled."))
    verdict = sage_check(cancel_conversation(claim), domain=MOCK)
    assert verdict == {
        "passed": False,
        "reasons": [
            "turn 0 step 0: sage_pc: agent confirms while O(s) is false (missing ['order_id']) "
            "(PC of cancel_order)"
        ],
        "decided_by": "rules",
    }


def test_claim_after_successful_write_passes(minilm_static_path):
    # the same claim after cancel_order(O1) succeeded; O1 is in the user message (S1 support)
    call = _assistant(0, 0, Action.tool("cancel_order", {"order_id": "O1"}))
    claim = _assistant(0, 1, Action.say("Your order O1 is cancelled."))
    verdict = sage_check(cancel_conversation(call, cancel_result(True), claim), domain=MOCK)
    # "o1." keeps its full stop under SAGE's normaliser, so S2 (not S1) grounds the id
    assert verdict == {"passed": True, "reasons": [], "decided_by": "embedding"}
    # after a refused call the claim is premature again
    verdict = sage_check(cancel_conversation(call, cancel_result(False), claim), domain=MOCK)
    assert [r.split(":")[1].strip() for r in verdict["reasons"]] == ["sage_pc"]


def test_compiled_records():
    # one record per tool call (its arguments are the state diff) and per say
    call = _assistant(0, 0, Action.tool("cancel_order", {"order_id": "O1"}))
    claim = _assistant(0, 1, Action.say("Done: order O1 has been cancelled."))
    records = compile_trajectory(cancel_conversation(call, cancel_result(True), claim), domain=MOCK)
    assert [(r.turn_id, r.intent) for r in records] == [
        ("0.0", "cancel_order"),
        ("0.1", "cancel_order"),
    ]
    assert records[0].state_diff() == {"order_id": (None, "O1")}
    # the say's state is the successful write's arguments, and it carries the claim as an act
    assert records[1].state_after == {"order_id": "O1"} and records[1].state_diff() == {}
    assert records[1].agent_acts[0].values == ["has been cancelled"]


def test_claims_completion():
    # past-tense completion claims count; questions, negations and reported statuses do not
    assert claims_completion("Your order is cancelled.") == "is cancelled"
    assert claims_completion("I have just booked the room for you!") == "I have just booked"
    assert claims_completion("Shall I cancel it? It is not cancelled yet.") is None
    assert claims_completion("Sorry, it could not be cancelled.") is None
    assert claims_completion("Your order is placed.", ['{"status": "placed"}']) is None
