"""The rubric: one graded outcome per conversation, the parts the validator's verdict reports."""

from mads_bench.catalog import domain_of
from simulation.backends import get_backend
from simulation.validator import NO_EMBEDDINGS, validate_trajectories
from simulation.validator.rubric import grade_conversation
from tests.simulation.validator.corrupt import FROZEN, TRANSFER


def _grade(trajectory, scenario, **kwargs):
    return grade_conversation(
        trajectory, scenario, domain=domain_of(scenario), embedder=NO_EMBEDDINGS, **kwargs
    )


def test_a_clean_transfer_and_a_clean_decline_succeed(transfer, frozen, scenarios):
    done = _grade(transfer, scenarios[TRANSFER])
    assert done.success and done.parts == {"state": True, "told": True, "ended": True}
    assert done.partial_credit == 1.0 and done.malformed_steps == 0 and done.reasons == []
    # an impossible scenario has no partial credit to earn
    assert _grade(frozen, scenarios[FROZEN]).partial_credit is None


def test_a_cut_conversation_did_not_end_and_earned_no_write(transfer, scenarios):
    cut = transfer.model_copy(update={"messages": transfer.messages[:3], "end_reason": "truncated"})
    outcome = _grade(cut, scenarios[TRANSFER])
    assert not outcome.success and not outcome.ended and outcome.partial_credit == 0.0
    assert outcome.steps == sum(m.role == "assistant" for m in cut.messages)


def test_the_sage_counter_is_called_only_when_given(transfer, scenarios):
    assert _grade(transfer, scenarios[TRANSFER]).sage_failures_per_turn is None
    counted = _grade(transfer, scenarios[TRANSFER], sage=lambda t, s, d: 0.25)
    assert counted.sage_failures_per_turn == 0.25


def test_the_verdict_parts_are_the_rubric_graded_from_the_judged_check(transfer, scenarios):
    # the judge fails the success criteria (a `state` question): the verdict's parts say so,
    # while the rules-only grade of the same conversation passes every part
    judge = get_backend("fake:", replies=["NO - the memo is wrong."])
    (out,) = validate_trajectories([transfer], scenarios, judge=judge, embedder=NO_EMBEDDINGS)
    parts = out.verdict["checks"]["task_success"]["parts"]
    assert parts == {"state": False, "told": True, "ended": True}
    assert _grade(transfer, scenarios[TRANSFER]).parts == {
        "state": True,
        "told": True,
        "ended": True,
    }
