"""Scoring: P/R/F1, bootstrap CIs, paired bootstrap, selective F1 and the report."""

from __future__ import annotations

import pytest

from evaluators.sage import TurnLabel, Verdict
from evaluators.sage.verdict_scoring import (
    bootstrap_f1_ci,
    format_report,
    paired_f1_bootstrap,
    prf,
    report,
    selective_f1,
)

GOLD = [True, True, False, False]
PRED = [True, False, True, False]


def test_prf():
    # tp=1, fp=1, fn=1 → 0.5 / 0.5 / 0.5
    assert prf(GOLD, PRED) == (0.5, 0.5, 0.5)
    # nothing predicted: all zero, no division error
    assert prf(GOLD, [False] * 4) == (0.0, 0.0, 0.0)


def test_bootstrap_is_seeded_and_brackets_the_point():
    gold, pred = GOLD * 10, PRED * 10
    low, high = bootstrap_f1_ci(gold, pred, resamples=2000, seed=0)
    # same seed, same interval; the point estimate 0.5 lies inside
    assert (low, high) == bootstrap_f1_ci(gold, pred, resamples=2000, seed=0)
    assert low < 0.5 < high


def test_paired_bootstrap():
    # an evaluator against itself: ΔF1 is 0 on every resample, p = 1
    same = paired_f1_bootstrap(GOLD * 5, PRED * 5, PRED * 5, resamples=500)
    assert same == {"delta_f1": 0.0, "ci_low": 0.0, "ci_high": 0.0, "p_value": 1.0}
    # a perfect evaluator against PRED: ΔF1 = 1 − 0.5, clearly significant
    better = paired_f1_bootstrap(GOLD * 5, GOLD * 5, PRED * 5, resamples=500)
    assert better["delta_f1"] == 0.5 and better["ci_low"] > 0 and better["p_value"] == 0.0


def test_selective_f1():
    # keep the 2 most confident turns (margins 0.9 and 0.8): gold [T, F], pred [T, T] → 2/3
    assert selective_f1(GOLD, PRED, [0.9, 0.1, 0.8, 0.7], 0.5) == pytest.approx(2 / 3)
    assert selective_f1(GOLD, PRED, [0.9, 0.1, 0.8, 0.7], 1.0) == 0.5


def verdict(i, label, classes=(), margin=1.0, stages=None):
    return Verdict(
        dialogue_id="d",
        turn_id=str(i),
        verdict=label,
        failure_classes=list(classes),
        margin=margin,
        stages=stages or {"S1": 1},
        latency_s=0.01 * (i + 1),
    )


def test_report():
    labels = [
        TurnLabel(dialogue_id="d", turn_id="0", label="failure", failure_class="UV"),
        TurnLabel(dialogue_id="d", turn_id="1", label="failure", failure_class="PC"),
        TurnLabel(dialogue_id="d", turn_id="2", label="acceptable"),
        TurnLabel(dialogue_id="d", turn_id="3", label="acceptable"),
    ]
    verdicts = [
        verdict(0, "failure", ["UV"]),
        verdict(1, "undecided", margin=0.0, stages={"S1": 1, "abstained": 1}),
        verdict(2, "failure", ["WNF"]),
        verdict(3, "acceptable"),
    ]
    rep = report(labels, verdicts, resamples=200)
    # undecided counts as acceptable: tp=1 (turn 0), fp=1 (turn 2), fn=1 (turn 1)
    assert (rep["precision"], rep["recall"], rep["f1"]) == (0.5, 0.5, 0.5)
    # UV: the one UV turn predicted UV; PC: missed
    assert rep["per_class"]["UV"]["recall"] == 1.0 and rep["per_class"]["PC"]["recall"] == 0.0
    # WNF predicted once with no WNF gold turn: precision 0
    assert rep["per_class"]["WNF"]["precision"] == 0.0
    assert rep["undecided_rate"] == 0.25
    # 5 criteria in all: 4 at S1, 1 abstained
    assert rep["stage_share"] == {"S1": 0.8, "abstained": 0.2}
    # latencies 10, 20, 30, 40 ms → median 25 ms
    assert rep["latency_p50_s"] == pytest.approx(0.025)
    assert "F1 0.500" in format_report(rep)
    # a labelled turn without a verdict is an error naming it
    with pytest.raises(ValueError, match="no verdict"):
        report(labels, verdicts[:3])
