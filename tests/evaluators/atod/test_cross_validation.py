"""Cross-validation of the tracker's thresholds: folds, held-out reports, `atod cv`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaluators.atod.cross_validation import cross_validate, fold_of
from mads_bench.atod_data import load_dialogues
from mads_bench.cli import main


def test_folds_are_seeded_and_balanced():
    dialogues = list(range(11))
    folds = fold_of(dialogues, 5, seed=0)
    assert sorted(np.bincount(folds)) == [2, 2, 2, 2, 3]
    assert folds == fold_of(dialogues, 5, seed=0) and folds != fold_of(dialogues, 5, seed=1)


def test_cross_validation_scores_held_out_folds(sample_path):
    gold = load_dialogues(sample_path)
    grid = {
        "threshold": (0.4,),
        "intent_threshold": (0.35, 0.9),
        "unnamed_intent_threshold": (0.5,),
    }
    result = cross_validate(gold, folds=3, grid=grid)
    # an intent threshold of 0.9 finds no goal: every fold picks 0.35 on its other folds
    assert [f["settings"]["intent_threshold"] for f in result["folds"]] == [0.35] * 3
    assert sorted(d for f in result["folds"] for d in f["dialogues"]) == sorted(
        d.dialogue_id for d in gold
    )
    assert result["strict"]["mode"] == "strict" and result["release"]["mode"] == "release"
    assert result["strict"]["goal_detection_f1"] > 0.8
    assert [p.dialogue_id for p in result["predictions"]] == [d.dialogue_id for d in gold]
    with pytest.raises(ValueError, match="a dialogue per fold"):
        cross_validate(gold, folds=5, grid=grid)


def test_cv_command(sample_path, tmp_path, capsys):
    out = tmp_path / "held_out.jsonl"
    args = ["atod", "cv", "--dialogues", str(sample_path), "--folds", "3", "--out", str(out)]
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["folds"]) == 3 and report["encoders"] == ["minilm-static", "minilm"]
    assert len(out.read_text().splitlines()) == 3
    # too many folds, and an unknown encoder pair, are one line each
    assert main(["atod", "cv", "--dialogues", str(sample_path), "--folds", "5"]) == 2
    assert "--folds 5" in capsys.readouterr().err
    assert main(["atod", "cv", "--dialogues", str(sample_path), "--folds", "1"]) == 2
    assert "at least 2 folds" in capsys.readouterr().err
    assert main([*args, "--encoder", "bogus"]) == 2
    assert "--encoder/--intent-encoder" in capsys.readouterr().err
