"""Per-status figures and bootstrap intervals: in the report, its markdown and `atod score`."""

from __future__ import annotations

import json

from evaluators.atod.bootstrap import bootstrap_intervals, per_status
from evaluators.atod.report import render_markdown, score_dialogues
from mads_bench.atod_data import load_dialogues, write_dialogues
from mads_bench.cli import main


def _row(f1: float, pairs: list[tuple[str, str]]) -> dict:
    correct = sum(g == p for g, p in pairs)
    return {
        "goal_detection_f1": f1,
        "status_correct": correct,
        "status_total": len(pairs),
        "status_pairs": [list(p) for p in pairs],
    }


def test_per_status_counts_are_the_confusion_margins():
    rows = [
        _row(1.0, [("completed", "completed"), ("abandoned", "completed")]),
        _row(0.5, [("abandoned", "abandoned"), ("failed", "completed")]),
    ]
    figures = per_status(rows)
    assert figures["completed"] == {
        "gold": 1,
        "predicted": 3,
        "correct": 1,
        "precision": 1 / 3,
        "recall": 1.0,
        "f1": 0.5,
    }
    assert figures["abandoned"]["recall"] == 0.5 and figures["failed"]["recall"] == 0.0
    assert figures["failed"]["precision"] is None  # nothing predicted failed


def test_intervals_are_seeded_and_hold_the_estimate():
    rows = [
        _row(f1, [("completed", "completed" if f1 > 0.5 else "pending")])
        for f1 in (0.2, 0.4, 0.6, 0.8, 1.0, 0.9, 0.7)
    ]
    first = bootstrap_intervals(rows, resamples=300, seed=1)
    assert first == bootstrap_intervals(rows, resamples=300, seed=1)
    assert first != bootstrap_intervals(rows, resamples=300, seed=2)
    low, high = first["goal_detection_f1"]
    assert low < sum(r["goal_detection_f1"] for r in rows) / len(rows) < high
    low, high = first["conditional_status_accuracy"]
    assert 0 <= low < 5 / 7 < high <= 1
    # every row agrees: a zero-width interval, not a crash
    same = [_row(1.0, [("completed", "completed")])] * 4
    assert bootstrap_intervals(same, resamples=50)["completed_recall"] == [1.0, 1.0]


def test_report_and_score_command_carry_them(sample_path, tmp_path, capsys):
    gold = load_dialogues(sample_path)
    report = score_dialogues(gold, gold, mode="strict", bootstrap=100)
    assert report["confidence_intervals"]["conditional_status_accuracy"] == [1.0, 1.0]
    assert report["per_status"]["completed"]["recall"] == 1.0
    markdown = render_markdown(report)
    assert "Per final status" in markdown and "100.00 [100.00, 100.00]" in markdown
    assert score_dialogues(gold, gold, mode="strict")["confidence_intervals"] == {}
    # a prediction that leaves every goal open: status recall 0 in every bootstrap sample
    undecided = [
        d.model_copy(
            update={"goal_list": [g.model_copy(update={"status": "open"}) for g in d.goal_list]}
        )
        for d in gold
    ]
    pred = tmp_path / "open.jsonl"
    write_dialogues(undecided, pred)
    args = ["atod", "score", "--pred", str(pred), "--gold", str(sample_path), "--json"]
    assert main([*args, "--bootstrap", "50", "--seed", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["conditional_status_accuracy"] == 0.0
    assert out["confidence_intervals"]["conditional_status_accuracy"] == [0.0, 0.0]
    assert out["per_status"]["completed"]["recall"] == 0.0
    assert out["release"]["bootstrap"] == {"resamples": 50, "seed": 3, "level": 0.95}
