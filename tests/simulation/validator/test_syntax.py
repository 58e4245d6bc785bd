"""Syntax check: hand-corrupted steps are rejected with the right reason code and place."""

from mads_bench.pre_act import Action
from simulation.validator import NO_EMBEDDINGS, validate_trajectory
from tests.simulation.validator.corrupt import TRANSFER, reasons, with_step


def _syntax(trajectory, scenarios):
    verdict = validate_trajectory(trajectory, scenarios[TRANSFER], embedder=NO_EMBEDDINGS)
    return verdict, reasons(verdict, "syntax")


def test_clean_trajectory_passes(transfer, scenarios):
    verdict, found = _syntax(transfer, scenarios)
    # the scripted transfer is valid in every respect
    assert found == [] and verdict["passed"]
    assert verdict["checks"]["syntax"]["decided_by"] == "rules"


def test_missing_plan_on_first_step(transfer, scenarios):
    # message 6 is the first step of turn 1 (the transfer call): drop its plan
    verdict, found = _syntax(with_step(transfer, 6, plan=None), scenarios)
    assert not verdict["passed"]
    assert found == ["turn 1 step 0: missing_plan: the first step of a turn needs a <plan>"]


def test_two_says_in_one_turn(transfer, scenarios):
    # the transfer call (turn 1 step 0) becomes a say, so turn 1 has say, say
    bad = with_step(transfer, 6, action=Action.say("Transferring now."))
    _, found = _syntax(bad, scenarios)
    assert "turn 1 step 0: early_say: only the last step of a turn may say" in found


def test_turn_without_say(transfer, scenarios):
    # the final summary (turn 1 step 1) becomes another tool call: the turn never says
    call = Action.tool("list_customer_accounts", {"customer_id": "C1005"})
    _, found = _syntax(with_step(transfer, 8, action=call), scenarios)
    assert any(r.startswith("turn 1 step 1: missing_say") for r in found)


def test_missing_think(transfer, scenarios):
    # raw text without <think>: the strict parser's reason code is reported
    raw = '<plan>1. x</plan>\n<action type="say">Hello</action>'
    _, found = _syntax(with_step(transfer, 8, raw=raw), scenarios)
    assert found[0].startswith("turn 1 step 1: missing_think:")


def test_invalid_tool_arguments(transfer, scenarios):
    # amount as a string violates the schema (type number)
    args = {"from_account_id": "ACC-0502", "to_account_id": "ACC-0501", "amount": "1200"}
    bad = with_step(transfer, 6, action=Action.tool("transfer_between_accounts", args))
    _, found = _syntax(bad, scenarios)
    assert found == [
        "turn 1 step 0: invalid_arguments: transfer_between_accounts: amount: '1200' is not of "
        "type 'number'"
    ]


def test_unknown_tool(transfer, scenarios):
    # a tool that the banking domain does not have
    bad = with_step(transfer, 2, action=Action.tool("wire_money", {"customer_id": "C1005"}))
    _, found = _syntax(bad, scenarios)
    assert found == ["turn 0 step 0: unknown_tool: 'wire_money' is not a tool of this scenario"]
