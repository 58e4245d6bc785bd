"""MRA, PE, turn relevance and coherence through deterministic `fake:` judges."""

from __future__ import annotations

import pytest

from evaluators.atod.judge_metrics import add_judge_metrics, judge_scores, parse_score
from evaluators.atod.matching import GoalMatcher
from evaluators.atod.report import score_dialogues
from simulation.backends import FakeBackend
from tests.evaluators.atod.toy import toy_dialogue


def scripted(conversation: list[dict]) -> str:
    """MRA: 0 after turn 4, unreadable after turn 2, else 1; PE: grounded, not beneficial;
    relevance: 4 for the turn-2 reply, unreadable otherwise; coherence: "5" as a string."""
    prompt = conversation[-1]["content"]
    if prompt.startswith("You check the goal memory"):
        if "after turn 4" in prompt:
            return '{"match": 0}'
        return "I think it matches" if "after turn 2" in prompt else 'ok {"match": 1}'
    if prompt.startswith("A task-oriented dialogue system raised"):
        return '{"grounded": 1, "beneficial": 0}'
    if prompt.startswith("Rate one response"):
        return '{"relevance": 4}' if "Response: Booking your hotel now." in prompt else "great!"
    return '{"coherence": "5"}'


@pytest.fixture
def matcher(keyword_embedder) -> GoalMatcher:
    return GoalMatcher(mode="strict", embedder=keyword_embedder)


def test_parse_score_rejects_malformed():
    # in-range ints (also as strings / integral floats) are read; anything else is missing
    assert parse_score('{"match": 1}', "match", 0, 1) == 1
    assert parse_score('{"coherence": "3"}', "coherence", 1, 5) == 3
    assert parse_score('{"coherence": 4.0}', "coherence", 1, 5) == 4
    assert parse_score('{"coherence": 6}', "coherence", 1, 5) is None
    assert parse_score('{"coherence": 2.5}', "coherence", 1, 5) is None
    assert parse_score("no json here", "match", 0, 1) is None
    assert parse_score('{"other": 1}', "match", 0, 1) is None
    assert parse_score(None, "match", 0, 1) is None


def test_probes_gold_against_itself(matcher):
    gold = [toy_dialogue()]
    scores = judge_scores(gold, gold, FakeBackend(replies=scripted), matcher)[0]
    # MRA probes = gold status changes at t>=1: hotel @1,@2,@4, weather @3,@4
    # -> [1 (t1), None (t2 unreadable), 0 (t4), 1 (t3), 0 (t4)]
    assert scores["mra"] == [1, None, 0, 1, 0]
    # PE: only turn 4 raises the hotel goal the user's turn 3 did not mention; 1 * 0 = 0
    assert scores["pe"] == [0]
    # relevance: system turns 2 (4/5) and 4 (unreadable)
    assert scores["turn_relevance"] == [0.8, None]
    # coherence: one score per dialogue
    assert scores["coherence"] == [5]


def test_unretrieved_goal_scores_zero_without_a_call(matcher):
    gold = [toy_dialogue()]
    empty = [gold[0].model_copy(update={"goal_list": []})]
    judge = FakeBackend(replies=scripted)
    scores = judge_scores(empty, gold, judge, matcher)[0]
    # no predicted goal -> all 5 MRA probes are 0, no PE probe (nothing tracked)
    assert scores["mra"] == [0, 0, 0, 0, 0] and scores["pe"] == []
    # no MRA prompt reached the judge
    assert not any(c[-1]["content"].startswith("You check") for c in judge.calls)


def test_batched_calls(matcher):
    gold = [toy_dialogue("a"), toy_dialogue("b")]
    judge = FakeBackend(replies=scripted)
    judge_scores(gold, gold, judge, matcher, batch_size=4)
    # per metric, prompts of both dialogues in chunks of 4: MRA 10 -> 4,4,2; PE 2; rel 4; coh 2
    assert [s["batch"] for s in judge.settings] == [4, 4, 2, 2, 4, 2]


def test_report_keys_and_correlation(keyword_embedder):
    # three dialogues: hotel completed / completed / failed -> predicted dGCR 1, 1, 0.5
    gold = [toy_dialogue("a"), toy_dialogue("b"), toy_dialogue("c", hotel_final="failed")]

    def judge_fn(conversation: list[dict]) -> str:
        prompt = conversation[-1]["content"]
        if prompt.startswith("You check"):  # MRA 0 only for the failed hotel probe
            return '{"match": 0}' if '"status": "failed"' in prompt else '{"match": 1}'
        return scripted(conversation)

    report = score_dialogues(gold, gold, mode="strict", embedder=keyword_embedder)
    add_judge_metrics(
        report,
        gold,
        gold,
        FakeBackend(replies=judge_fn),
        GoalMatcher("strict", 0.4, keyword_embedder),
    )
    # MRA pooled: 15 probes, one 0 -> 14/15; per dialogue 1, 1, 0.8
    assert report["mra"] == pytest.approx(14 / 15) and report["mra_missing"] == 0
    assert [r["mra"] for r in report["per_dialogue"]] == [1, 1, 0.8]
    # PE 0 (3 probes), relevance 0.8 (3 read, 3 missing), coherence 5
    assert report["pe"] == 0 and report["pe_n"] == 3
    assert report["turn_relevance"] == pytest.approx(0.8) and report["turn_relevance_missing"] == 3
    assert report["coherence"] == 5
    # MRA per dialogue (1, 1, 0.8) vs dGCR (1, 1, 0.5): Pearson 1, Spearman 1
    corr = report["correlations_with_dgcr"]["mra"]
    assert corr["pearson"] == pytest.approx(1.0) and corr["spearman"] == pytest.approx(1.0)
    # PE is constant -> undefined correlation; same keys under by_complexity
    assert report["correlations_with_dgcr"]["pe"]["pearson"] is None
    assert report["by_complexity"]["medium"]["mra"] == pytest.approx(14 / 15)
