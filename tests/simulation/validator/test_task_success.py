"""Task-success check: final state vs the gold replay, and impossible tasks declined well."""

from mads_bench.catalog import domain_of
from mads_bench.pre_act import Action
from simulation.validator import NO_EMBEDDINGS, validate_trajectory
from simulation.validator.common import Context
from simulation.validator.task_success import user_agreed_before_write
from tests.simulation.validator.corrupt import FROZEN, TRANSFER, reasons, with_state, with_step


def _task(trajectory, scenario, embedder=NO_EMBEDDINGS):
    verdict = validate_trajectory(trajectory, scenario, embedder=embedder)
    return verdict["checks"]["task_success"], reasons(verdict, "task_success")


def test_clean_normal_and_impossible_pass(transfer, frozen, scenarios):
    # the transfer happened as in the gold replay; the impossible payment was declined
    assert _task(transfer, scenarios[TRANSFER])[1] == []
    assert _task(frozen, scenarios[FROZEN])[1] == []


def test_missing_write(transfer, scenarios):
    # the final state is the seed state: the transfer never happened
    seedless = transfer.model_copy(update={"final_state": _seed_state(scenarios[TRANSFER])})
    _, found = _task(seedless, scenarios[TRANSFER])
    assert any(r.startswith("final state: missing_change: no new transfers record") for r in found)


def test_hard_constraint_violated(transfer, scenarios):
    # the stored transfer moved 1000 instead of the required 1200
    new_id = [r for r in transfer.final_state["transfers"] if r["amount"] == 1200.0][0]
    bad = with_state(transfer, "transfers", "transfer_id", new_id["transfer_id"], amount=1000.0)
    _, found = _task(bad, scenarios[TRANSFER])
    assert found == [
        f"final state: hard_constraint_violated: new transfers {new_id['transfer_id']}.amount is "
        "1000.0, expected 1200.0"
    ]


def test_soft_difference_with_user_agreement_passes(transfer, scenarios):
    # the memo is no hard constraint, and the user said "Yes, please go ahead" before the write
    new_id = [r for r in transfer.final_state["transfers"] if r["amount"] == 1200.0][0]
    bad = with_state(transfer, "transfers", "transfer_id", new_id["transfer_id"], memo="tax")
    assert _task(bad, scenarios[TRANSFER])[1] == []


def test_a_no_is_not_agreement(transfer, scenarios):
    # "No, don't go ahead, it doesn't sound good" names "go ahead" and "sounds good" but
    # refuses: the soft difference is then unagreed (task_success's old yes-parser read any
    # "go ahead" as a yes)
    new_id = [r for r in transfer.final_state["transfers"] if r["amount"] == 1200.0][0]
    bad = with_state(transfer, "transfers", "transfer_id", new_id["transfer_id"], memo="tax")
    assert user_agreed_before_write(
        Context(bad, scenarios[TRANSFER], domain=domain_of(scenarios[TRANSFER]))
    )
    messages = [
        m.model_copy(update={"content": "No, don't go ahead, it doesn't sound good."})
        if m.role == "user" and m.content.startswith("Yes, it sounds good")
        else m
        for m in bad.messages
    ]
    refused = bad.model_copy(update={"messages": messages})
    assert not user_agreed_before_write(
        Context(refused, scenarios[TRANSFER], domain=domain_of(scenarios[TRANSFER]))
    )
    _, found = _task(refused, scenarios[TRANSFER])
    assert len(found) == 1 and found[0].endswith("(and the user never agreed to the write)")


def test_impossible_task_pretending_success(frozen, scenarios):
    # the decline (message 10) becomes a success story
    bad = with_step(frozen, 10, action=Action.say("All done! Your payment of 600 has been sent."))
    check, found = _task(bad, scenarios[FROZEN])
    assert found == [
        "turn 1 step 1: pretends_success: the goal cannot be reached but the last say claims "
        "'has been sent'"
    ]
    assert check["decided_by"] == "rules"


def test_impossible_task_with_forbidden_write(frozen, scenarios):
    # the frozen account's balance dropped by 600: money left an account it must not leave
    bad = with_state(frozen, "accounts", "account_id", "ACC-0401", balance=4610.88)
    _, found = _task(bad, scenarios[FROZEN])
    assert found == [
        "final state: unexpected_change: accounts ACC-0401 changed (balance: 5210.88 -> 4610.88)"
    ]


def test_impossible_without_explanation_embedding(frozen, scenarios, embedder):
    # no decline cue, nothing like the fallback: MiniLM finds it far from the explanation
    bad = with_step(frozen, 10, action=Action.say("Okay. Have a nice weekend!"))
    check, found = _task(bad, scenarios[FROZEN], embedder)
    assert len(found) == 1 and found[0].startswith("[embedding] turn 1 step 1: no_explanation")
    assert check["decided_by"] == "embedding"


def test_loop_end_fails(transfer, scenarios):
    # a conversation cut by the loop detector is not a success
    looped = transfer.model_copy(update={"end_reason": "loop"})
    _, found = _task(looped, scenarios[TRANSFER])
    assert found == ["conversation: not_ended: the run ended with 'loop', not the user's [DONE]"]


def _seed_state(scenario):
    from mads_bench.catalog import load_domain

    return load_domain(scenario.domain).database(scenario.backend_state).dump()


def test_rule_refusing_a_gold_lookup_blocks_the_rest(transfer, scenarios):
    """A policy refusal of the first lookup: nothing after it can happen, so the assistant's
    explanation passes, and a transfer made anyway is an unexpected change."""
    from mads_bench.data_model import Scenario
    from simulation.environment import simulate

    policy = {
        "kind": "policy_constraint",
        "tool": "list_customer_accounts",
        "on_calls": [1],
        "policy": "requests of this kind need a manual review by a supervisor",
    }
    refused = Scenario.model_validate(
        {**scenarios[TRANSFER].model_dump(), "complexity": "unhappy", "behaviors": [policy]}
    )
    explained = simulate(refused, seed=0)
    assert _task(explained, refused)[1] == []
    # the clean run made the transfer the refused lookup should have stopped
    _, found = _task(transfer.model_copy(update={"scenario_id": refused.id}), refused)
    assert any("unexpected_change" in r or "new transfers" in r for r in found), found
