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


@pytest.mark.slow  # tracks three dialogues end to end (~10-40 s on the shared CPU)
def test_track_then_score(sample_path, tmp_path, capsys):
    out = tmp_path / "pred.jsonl"
    assert main(["atod", "track", "--dialogues", str(sample_path), "--out", str(out)]) == 0
    # one prediction line per dialogue, readable by score
    assert len(out.read_text().splitlines()) == 3
    assert main(["atod", "score", "--pred", str(out), "--gold", str(sample_path)]) == 0
    assert "## ATOD scores (release mode" in capsys.readouterr().out


def test_malformed_file_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"dialogue_id": "x"}]')
    assert main(["atod", "score", "--pred", str(bad), "--gold", str(bad)]) == 2
    # the error names the file and the dialogue
    assert f"{bad}: [0](x)" in capsys.readouterr().err
