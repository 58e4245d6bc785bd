"""The cascade end to end: aggregation, margins, ablations, S3 with a fake judge, repairs."""

from __future__ import annotations

import pytest

from evaluators.sage import (
    Criterion,
    CriterionResult,
    DialogueAct,
    OfflineGroundingVerifier,
    SageConfig,
    SageEvaluator,
    aggregate,
)
from evaluators.sage.judge import ANSWER_WORDS
from simulation.backends import parse_judge_answer
from tests.evaluators.sage.conftest import HashEncoder, turn


def result(fires, stage, margin, kind="UV"):
    criterion = Criterion(
        criterion_id=f"{kind}:x", failure_class=kind, args={"slot": "x", "value": "v"}, text="?"
    )
    return CriterionResult(criterion=criterion, fires=fires, stage=stage, margin=margin)


def test_aggregate_rules():
    record = turn()
    # any firing criterion → failure, whatever else abstains
    v = aggregate(record, [result(True, "S2", 0.3), result(None, None, 0.0)])
    assert v.verdict == "failure" and v.failure_classes == ["UV"]
    # all decided and false → acceptable, margin = the smallest decided margin
    v = aggregate(record, [result(False, "S1", 1.0), result(False, "S2", 0.25)])
    assert v.verdict == "acceptable" and v.margin == 0.25
    # nothing fires but one abstains → undecided, ranked last (margin 0)
    v = aggregate(record, [result(False, "S1", 1.0), result(None, None, 0.0)])
    assert v.verdict == "undecided" and v.margin == 0.0
    # stage counts for the report
    assert v.stages == {"S1": 1, "abstained": 1}
    # no criteria at all → acceptable
    assert aggregate(record, []).verdict == "acceptable"


def core(spec, **config):
    verifier = OfflineGroundingVerifier(encoder=HashEncoder())
    return SageEvaluator(spec, SageConfig(verifier=verifier, **config))


def test_core_on_clean_and_failures(spec):
    clean = turn()
    premature = turn(
        turn_id="3",
        state_after={"restaurant_name": "Sino"},
        agent_acts=[DialogueAct(act="NOTIFY_SUCCESS")],
    )
    verdicts = core(spec).evaluate([clean, premature])
    # the clean turn passes; the premature confirmation fails as PC, through S1
    assert [v.verdict for v in verdicts] == ["acceptable", "failure"]
    assert "PC" in verdicts[1].failure_classes
    pc = next(r for r in verdicts[1].repair if r["class"] == "PC")
    # the repair names the empty required slots
    assert pc["action"] == "do_not_confirm" and pc["missing"] == ["city", "time"]
    trace = next(e for e in verdicts[1].evidence if e["criterion"] == "PC")
    assert trace["stage"] == "S1" and trace["trace"][0].startswith("S1: agent confirms")


def test_iuv_repair_span(spec):
    dropped = turn(state_after={"restaurant_name": "Sino", "time": "7 pm"})
    verdict = core(spec).evaluate([dropped])[0]
    repair = next(r for r in verdict.repair if r["class"] == "IUV")
    # "San Jose" sits at characters 3..11 of "In San Jose, at 7 pm."
    assert repair == {
        "criterion": "IUV:city",
        "class": "IUV",
        "action": "record_value",
        "slot": "city",
        "value": "San Jose",
        "span": [3, 11],
        "say": "record 'San Jose' into city",
    }


def test_ablation_orphans(spec):
    dropped = turn(state_after={"restaurant_name": "Sino", "time": "7 pm"})
    # without S1 the IUV criterion (decided by S1 with acts) goes to S2 only
    no_s1 = core(spec).config.ablate("S1")
    assert no_s1.name == "no_S1" and no_s1.use_s1 is False
    # without S1 and S2 all 4 criteria (UV:time, 2 IUV, PC) are orphaned: undecided
    bare = core(spec, use_s1=False, use_s2=False).evaluate([dropped])[0]
    assert bare.verdict == "undecided" and bare.stages["abstained"] == 4
    asking = turn(
        agent="Which restaurant?", agent_acts=[DialogueAct(act="REQUEST", slot="restaurant_name")]
    )
    verdict = core(spec, use_s1=False).evaluate([asking])[0]
    wnf = next(e for e in verdict.evidence if e["criterion"] == "WNF:restaurant_name")
    # an act-based WNF criterion has no S2 route: without S1 it is orphaned (abstains)
    assert wnf["fires"] is None and verdict.verdict == "undecided"
    with pytest.raises(ValueError, match="unknown tier"):
        SageConfig().ablate("S4")


class FakeJudge:
    """Stands in for a paid LLM: answers every prompt with a fixed word, counts prompts."""

    def __init__(self, answer: str) -> None:
        self.answer, self.prompts = answer, []

    def complete(self, prompts):
        self.prompts.extend(prompts)
        return [self.answer] * len(prompts)


def test_sage_llm_decides_abstentions(spec):
    dropped = turn(state_after={"restaurant_name": "Sino", "time": "7 pm"})
    judge = FakeJudge("false")
    config = SageConfig.llm(judge, OfflineGroundingVerifier(encoder=HashEncoder()))
    config.use_s1 = config.use_s2 = False
    verdict = SageEvaluator(spec, config).evaluate([dropped])[0]
    # S3 sees only the open classes (UV, IUV, PC): 1 UV + 2 IUV + 1 PC prompts; WNF none here
    assert len(judge.prompts) == 4
    # the prompt is criterion-local: it holds the question and the user turn
    assert "Is this value missing" in judge.prompts[1] and dropped.user in judge.prompts[1]
    # every criterion answered false → acceptable, decided at S3
    assert verdict.verdict == "acceptable" and verdict.stages == {"S3": 4, "abstained": 0}
    # SAGE-LLM without a judge is refused
    with pytest.raises(ValueError, match="judge"):
        SageEvaluator(spec, SageConfig(use_s3=True))


def test_parse_answer():
    # first verdict word wins; abstain and junk are None
    def parse_answer(text):
        return parse_judge_answer(text, words=ANSWER_WORDS)

    assert parse_answer("True.") is True
    assert parse_answer("no, it is written") is False
    assert parse_answer("abstain") is None and parse_answer("maybe") is None
