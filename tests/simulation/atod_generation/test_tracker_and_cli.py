"""The ATOD tracker and scorer on generated dialogues, and `mads-bench atod generate`."""

from __future__ import annotations

import json

import pytest

from evaluators.atod.predictions import prediction_dialogue
from evaluators.atod.report import score_dialogues
from mads_bench.atod_data import load_dialogues, parse_dialogues, strip_gold
from mads_bench.cli import main


@pytest.fixture(scope="module")
def tracker(minilm_path):
    from evaluators.atod.tracker import MemoryTracker

    return MemoryTracker()


def test_tracker_runs_on_generated_dialogues(generated, tracker):
    medium = [r for r in generated.records if r["complexity_class"] == "medium"]
    gold = parse_dialogues(medium[:2])
    pred = [prediction_dialogue(d, tracker.track(strip_gold(d))) for d in gold]
    # the tracker reads only (speaker, utterance) and writes one state per turn
    assert [len(p.turns) for p in pred] == [len(d.turns) for d in gold]
    for mode in ("release", "strict"):
        report = score_dialogues(pred, gold, mode=mode)
        # figures exist and are proportions
        assert 0.0 <= report["goal_detection_f1"] <= 1.0
        assert report["conditional_status_accuracy"] is None or (
            0.0 <= report["conditional_status_accuracy"] <= 1.0
        )
    # gold scored against itself is perfect in strict mode: the labels are self-consistent
    perfect = score_dialogues(gold, gold, mode="strict")
    assert perfect["goal_detection_f1"] == 1.0 and perfect["conditional_status_accuracy"] == 1.0


def test_cli_generate_small(tiny_sgd, tmp_path, capsys):
    out = tmp_path / "atod"
    args = ["atod", "generate", "--sgd", str(tiny_sgd), "--out", str(out), "--num", "4"]
    code = main([*args, "--complex-share", "0"])
    printed = capsys.readouterr()
    # exit 0; the fixture's statistics next to the paper's; the summary on stderr
    assert code == 0
    assert "| nodes | 6 | 52 |" in printed.out and "| edges | 7 | 396 |" in printed.out
    assert "wrote 4 dialogues" in printed.err
    dialogues = load_dialogues(out / "dialogues.json")
    # four medium dialogues over the fixture's goals, loaded by the ATOD loader
    assert [d.complexity_class for d in dialogues] == ["medium"] * 4
    report = json.loads((out / "generation.json").read_text())
    assert report["generated"] == 4 and report["statistics"]["sequences"] == 4


def test_cli_generate_bad_folder(tmp_path, capsys):
    code = main(["atod", "generate", "--sgd", str(tmp_path), "--out", str(tmp_path / "o")])
    # a folder without SGD files is a clear error, exit 2
    assert code == 2 and "schema.json" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_generate_hundred(sgd_dir, tmp_path, capsys):
    out = tmp_path / "atod"
    args = ["atod", "generate", "--sgd", str(sgd_dir), "--out", str(out), "--num", "120"]
    assert main([*args, "--seed", "7"]) == 0
    # the statistics of the shared (partial) SGD copy next to Tables 12-13
    printed = capsys.readouterr().out
    assert "| nodes | 52 | 52 |" in printed and "| edges | 216 | 396 |" in printed
    gold = load_dialogues(out / "dialogues.json")
    # 120 verified dialogues, 35 % complex (42), none rejected
    assert len(gold) == 120
    assert sum(d.complexity_class == "complex" for d in gold) == 42
    assert json.loads((out / "generation.json").read_text())["rejected"] == []
    # atod score reads the generated file; scored against itself it is perfect (strict)
    pred = str(out / "dialogues.json")
    assert (
        main(["atod", "score", "--pred", pred, "--gold", pred, "--mode", "strict", "--json"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["goal_detection_f1"] == 1.0 and report["conditional_status_accuracy"] == 1.0
    assert report["dgcr"] == report["gold_dgcr"] and report["dgcr"] is not None
