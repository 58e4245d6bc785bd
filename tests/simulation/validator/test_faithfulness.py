"""Faithfulness check: fabricated arguments and unsupported says are rejected with reasons."""

from mads_bench.pre_act import Action
from simulation.validator import NO_EMBEDDINGS, validate_trajectory
from simulation.validator.faithfulness import say_facts
from tests.simulation.validator.corrupt import TRANSFER, reasons, with_step

ARGS = {"from_account_id": "ACC-0502", "to_account_id": "ACC-0501", "amount": 1200}


def _faith(trajectory, scenarios):
    verdict = validate_trajectory(trajectory, scenarios[TRANSFER], embedder=NO_EMBEDDINGS)
    return reasons(verdict, "faithfulness")


def test_clean_trajectory_passes(transfer, scenarios):
    # "1,200 dollars" in the user message grounds amount=1200; ids come from tool results
    assert _faith(transfer, scenarios) == []


def test_fabricated_tool_argument(transfer, scenarios):
    # the user asked for 1,200; the call moves 1,300
    bad = with_step(
        transfer, 6, action=Action.tool("transfer_between_accounts", {**ARGS, "amount": 1300})
    )
    assert _faith(bad, scenarios) == [
        "turn 1 step 0: ungrounded_argument: transfer_between_accounts.amount=1300 does not "
        "occur in the user messages or earlier tool results"
    ]


def test_an_empty_optional_argument_needs_no_grounding(transfer, scenarios):
    # an empty memo says nothing the conversation would have to support
    fine = with_step(
        transfer, 6, action=Action.tool("transfer_between_accounts", {**ARGS, "memo": ""})
    )
    assert _faith(fine, scenarios) == []


def test_fabricated_account_id(transfer, scenarios):
    # ACC-0599 was never returned by list_customer_accounts
    bad = with_step(
        transfer,
        6,
        action=Action.tool("transfer_between_accounts", {**ARGS, "from_account_id": "ACC-0599"}),
    )
    assert _faith(bad, scenarios)[0].startswith(
        "turn 1 step 0: ungrounded_argument: transfer_between_accounts.from_account_id='ACC-0599'"
    )


def test_say_with_amount_no_tool_returned(transfer, scenarios):
    # 18,250.00 appears nowhere (the tool returned 17550.0 as the savings balance)
    text = "All done: I moved 1,200 dollars; your savings now hold 18,250.00."
    bad = with_step(transfer, 8, action=Action.say(text))
    assert _faith(bad, scenarios) == [
        "turn 1 step 1: unsupported_say: number 18250 is not in any tool result or user message"
    ]


def test_completion_claim_without_write(transfer, scenarios):
    # the confirmation question (turn 0, before any write) claims the transfer is done
    text = "Your transfer of 1,200 dollars has been completed."
    bad = with_step(transfer, 4, action=Action.say(text))
    found = _faith(bad, scenarios)
    assert found == [
        "turn 0 step 1: unsupported_completion: the say claims 'has been completed' but no write "
        "tool call succeeded before it"
    ]


def test_failure_claim_after_successful_write(transfer, scenarios):
    # the transfer succeeded (message 7) but the summary says it could not be done
    text = "I'm sorry, I could not transfer the money. Instead you could try again later."
    bad = with_step(transfer, 8, action=Action.say(text))
    assert _faith(bad, scenarios) == [
        "turn 1 step 1: unsupported_failure_claim: the say claims 'could not' right after "
        "transfer_between_accounts succeeded"
    ]


def test_wrong_status_claim(transfer, scenarios):
    # the transfer result says "completed"; "declined" occurs in no message
    bad = with_step(transfer, 8, action=Action.say("Your transfer TRF-0018 was declined."))
    assert _faith(bad, scenarios) == [
        "turn 1 step 1: unsupported_say: status 'declined' is not in any tool result or user "
        "message"
    ]


def test_say_facts_extraction():
    # ids, natural dates, times, numbers (small integers skipped), claimed statuses
    facts = say_facts(
        "Booking Q7KX2M for 2 on May 3rd at 7:30 pm costs $1,250.50; it is now confirmed."
    )
    assert facts == {
        "ids": {"Q7KX2M"},
        "dates": {"2026-05-03"},
        "times": {"19:30"},
        "numbers": {"1250.5"},
        "statuses": {"confirmed"},
    }


def test_descriptions_are_not_completion_claims():
    from simulation.validator.faithfulness import completion_claim

    # a record described while declining, and a state the lookup reported, claim nothing
    declining = "I'm sorry. HR-5003 was booked at a non-refundable rate and cannot be cancelled."
    assert completion_claim(declining) is None
    reported = "Flight AU233 has been cancelled by the airline."
    assert completion_claim(reported, frozenset({"cancelled"})) is None
    # the same words without the lookup, or next to a decline elsewhere, still claim
    assert completion_claim(reported).group(0) == "has been cancelled"
    mixed = "Sorry for the wait. Your table has been booked."
    assert completion_claim(mixed).group(0) == "has been booked"


def test_a_stated_limit_in_a_value_does_not_hide_a_claim():
    from simulation.agents.text import declines_with_alternatives
    from simulation.validator.faithfulness import completion_claim

    # "no longer needed" is a return reason, not a decline: the claim still counts
    said = "Your order ORD-5 has been cancelled, reason no longer needed."
    assert completion_claim(said).group(0) == "has been cancelled"
    # nor is "I can go ahead ... no longer needed ...?" a decline with an alternative, while
    # task success's reading of an explanation counts a stated limit
    asked = "I can go ahead and cancel it (reason no longer needed). Are you ready?"
    assert not declines_with_alternatives(asked)
    assert declines_with_alternatives("It can only be moved by phone; I can call.", limits=True)
