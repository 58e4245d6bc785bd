"""The judge path, with the ``fake:`` backend standing in for a remote LLM judge."""

from mads_bench.pre_act import Action
from simulation.backends import get_backend, parse_judge_answer
from simulation.validator import NO_EMBEDDINGS, validate_trajectories
from simulation.validator.common import JUDGE_ANSWER_WORDS
from tests.simulation.validator.corrupt import TRANSFER, reasons, with_step

ARGS = {"from_account_id": "ACC-0502", "to_account_id": "ACC-0501", "amount": 1200}
# 4 of the 7 content words occur in the user's messages (57%): between the rule thresholds
PARAPHRASED = "quarterly tax top-up for the new office lease"


def _run(trajectories, scenarios, judge):
    return list(validate_trajectories(trajectories, scenarios, judge=judge, embedder=NO_EMBEDDINGS))


def test_judge_fails_unmet_criteria(transfer, scenarios):
    # rules pass the transfer; the judge says NO to the success criteria
    judge = get_backend("fake:", replies=["NO - the memo is wrong."])
    (out,) = _run([transfer], scenarios, judge)
    check = out.verdict["checks"]["task_success"]
    assert out.verdict["judge"] == "fake:" and not out.verdict["passed"]
    assert check["decided_by"] == "judge"
    assert check["reasons"] == [
        "[judge] conversation: criteria_not_met: the judge found unmet success criteria"
    ]
    # the prompt carries the criteria and the transcript
    assert "Success criteria:" in judge.calls[0][0]["content"]


def test_judge_batches_one_call_per_chunk(transfer, scenarios):
    # three conversations -> one complete() call holding three criteria questions
    copies = [transfer.model_copy(update={"id": f"t{i}"}) for i in range(3)]
    judge = get_backend("fake:", replies=lambda conv: "YES")
    out = _run(copies, scenarios, judge)
    assert [t.verdict["passed"] for t in out] == [True, True, True]
    assert [s["batch"] for s in judge.settings] == [3]
    assert out[0].verdict["checks"]["task_success"]["decided_by"] == "judge"


def test_judge_overrides_offline_free_text_decision(transfer, scenarios):
    # offline, a 57% paraphrase fails (threshold 60%); the judge accepts it
    bad = with_step(
        transfer, 6, action=Action.tool("transfer_between_accounts", {**ARGS, "memo": PARAPHRASED})
    )
    (offline,) = _run([bad], scenarios, None)
    assert reasons(offline.verdict, "faithfulness") == [
        f"turn 1 step 0: ungrounded_argument: transfer_between_accounts.memo={PARAPHRASED!r} "
        "paraphrases the user only partly (57% of its words occur)"
    ]
    judge = get_backend("fake:", replies=lambda conv: "Yes, a faithful paraphrase.")
    (judged,) = _run([bad], scenarios, judge)
    assert judged.verdict["checks"]["faithfulness"] == {
        "passed": True,
        "reasons": [],
        "decided_by": "judge",
    }


def test_unparseable_reply_falls_back_to_offline(transfer, scenarios):
    # "maybe" is no answer: the offline decision (rules: pass) stands
    judge = get_backend("fake:", replies=["maybe"])
    (out,) = _run([transfer], scenarios, judge)
    assert out.verdict["passed"] and out.verdict["checks"]["task_success"]["decided_by"] == "rules"


def test_parse_answer():
    # the first yes/no-like word decides, case and markup aside (True: "yes")
    def parse_answer(reply):
        return parse_judge_answer(reply, words=JUDGE_ANSWER_WORDS)

    assert parse_answer("**YES**, grounded") is True
    assert parse_answer("False: the amount is invented") is False
    assert parse_answer("I cannot tell") is None
    # pass/fail count as yes/no, anywhere in the reply
    assert parse_answer("Verdict: PASS") is True and parse_answer("it would fail") is False


def test_unknown_scenario_is_rejected_not_dropped(transfer):
    # without its scenario every check fails with the reason, and the trajectory is kept
    (out,) = _run([transfer], {}, None)
    assert not out.verdict["passed"]
    assert reasons(out.verdict, "syntax") == [
        f"conversation: unknown_scenario: no scenario {TRANSFER!r}"
    ]
