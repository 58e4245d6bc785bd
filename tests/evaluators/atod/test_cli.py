"""`mads-bench atod score` and `atod track` end to end on the shared sample."""

from __future__ import annotations

import json

import pytest

from mads_bench.cli import main


def test_score_gold_against_itself_json(sample_path, capsys):
    assert (
        main(
            [
                "atod",
                "score",
                "--pred",
                str(sample_path),
                "--gold",
                str(sample_path),
                "--json",
                "--mode",
                "strict",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    # perfect detection and status; gold dGCR/NTC; the same keys under by_complexity
    for key, value in [
        ("goal_detection_f1", 1.0),
        ("conditional_status_accuracy", 1.0),
        ("dgcr", 1.0),
        ("ntc", 8.0),
    ]:
        assert report[key] == value and report["by_complexity"]["medium"][key] == value
    # matched pairs agree on every final status and on every transition turn
    confusion = report["status_confusion"]
    assert all(set(row) == {gold} for gold, row in confusion.items())
    assert report["first_mentioned_turn_mae"] == 0.0 and report["completion_turn_mae"] == 0.0


def test_score_defaults_to_strict_with_release_side_by_side(sample_path, capsys):
    args = ["atod", "score", "--pred", str(sample_path), "--gold", str(sample_path)]
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["mode"] == "strict" and report["release"]["mode"] == "release"
    assert "per_dialogue" not in report and "per_dialogue" not in report["release"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.index("strict vs release") < out.index("(strict mode") < out.index("(release mode")
    assert "### Final statuses of matched goals (rows gold, columns predicted)" in out


def test_confusion_and_turn_errors_of_a_late_tracker(sample_path):
    """A prediction that completes every goal two turns late and never sees one abandoned."""
    from evaluators.atod.report import score_dialogues
    from mads_bench.atod_data import load_dialogues

    gold = load_dialogues(sample_path)
    late = []
    for d in gold:
        goals = []
        for g in d.goal_list:
            update = {"status": "open" if g.status == "abandoned" else g.status}
            if g.completion_turn is not None:
                update["completion_turn"] = g.completion_turn + 2
            goals.append(g.model_copy(update=update))
        late.append(d.model_copy(update={"goal_list": goals}))
    report = score_dialogues(late, gold, mode="strict")
    assert report["completion_turn_mae"] == 2.0 and report["first_mentioned_turn_mae"] == 0.0
    # the sample's 2 abandoned goals come out open; its 10 completed ones stay completed
    assert report["status_confusion"] == {"abandoned": {"open": 2}, "completed": {"completed": 10}}


@pytest.mark.slow  # tracks three dialogues end to end (~10-40 s on the shared CPU)
def test_track_then_score(sample_path, tmp_path, capsys):
    out = tmp_path / "pred.jsonl"
    assert main(["atod", "track", "--dialogues", str(sample_path), "--out", str(out)]) == 0
    # one prediction line per dialogue, readable by score
    assert len(out.read_text().splitlines()) == 3
    assert main(["atod", "score", "--pred", str(out), "--gold", str(sample_path)]) == 0
    assert "## ATOD scores (strict mode" in capsys.readouterr().out


def test_malformed_file_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"dialogue_id": "x"}]')
    assert main(["atod", "score", "--pred", str(bad), "--gold", str(bad)]) == 2
    # the error names the file and the dialogue
    assert f"{bad}: [0](x)" in capsys.readouterr().err
