"""The recorded fit / validation split of the development dialogues and `--part`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.atod.dev_split import SPLIT_FILE, load_split, make_split, select_part
from mads_bench.atod_data import load_dialogues
from mads_bench.cli import main
from mads_bench.errors import UsageError

DEV = (Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "atod_dev").resolve()
DEV_FILES = [DEV / "medium_dev.json", DEV / "medium_dev_2.json"]


def test_recorded_split_is_disjoint_and_reproducible():
    split, recorded = load_split(), json.loads(SPLIT_FILE.read_text())
    # 89 dialogues (index 85-125 and 127-174), a third held out, no dialogue in both parts
    indices = [*range(85, 126), *range(127, 175)]
    assert sorted(split["fit"] + split["validation"]) == indices
    assert (len(split["fit"]), len(split["validation"])) == (59, 30)
    # the file is what `make_split` deals with its recorded seed
    again = make_split(indices, seed=recorded["seed"], validation_fraction=1 / 3)
    assert (again["fit"], again["validation"]) == (split["fit"], split["validation"])
    assert make_split(indices, seed=recorded["seed"] + 1, validation_fraction=1 / 3) != again


def test_make_split_refuses_bad_input():
    with pytest.raises(UsageError, match="repeat"):
        make_split([1, 1, 2], seed=0, validation_fraction=0.5)
    with pytest.raises(UsageError, match=r"in \(0, 1\)"):
        make_split([1, 2], seed=0, validation_fraction=1.0)


def test_select_part_keeps_only_that_part(sample_path):
    sample = load_dialogues(sample_path)  # dialogue_index 0-2: in neither part
    with pytest.raises(UsageError, match="none of the 3 dialogues is in the fit part"):
        select_part(sample, "fit")
    with pytest.raises(UsageError, match="unknown part"):
        select_part(sample, "test")
    unindexed = [sample[0].model_copy(update={"dialogue_index": None})]
    with pytest.raises(UsageError, match="has no dialogue_index"):
        select_part(unindexed, "fit")
    if not all(path.is_file() for path in DEV_FILES):
        pytest.skip("shared ATOD dev dialogues not found")
    dev = [d for path in DEV_FILES for d in load_dialogues(path)]
    fit, validation = select_part(dev, "fit"), select_part(dev, "validation")
    assert len(fit) == 59 and len(validation) == 30
    assert not {d.dialogue_id for d in fit} & {d.dialogue_id for d in validation}


def test_part_flag_is_one_error_line(sample_path, tmp_path, capsys):
    out = tmp_path / "pred.jsonl"
    args = ["atod", "track", "--dialogues", str(sample_path), "--out", str(out)]
    assert main([*args, "--part", "validation"]) == 2
    assert "--dialogues --part validation: none of the 3" in capsys.readouterr().err
    assert not out.exists()
    # the same file twice: its dialogue ids repeat
    twice = ["--gold", str(sample_path), str(sample_path)]
    assert main(["atod", "score", "--pred", str(sample_path), *twice]) == 2
    assert "is also in an earlier file" in capsys.readouterr().err
    # `atod fit` reads the fit part only: the sample has none of it
    model = tmp_path / "model.json"
    assert main(["atod", "fit", "--dialogues", str(sample_path), "--out", str(model)]) == 2
    assert "--dialogues --part fit: none of the 3" in capsys.readouterr().err
    assert not model.exists()
    assert main(["atod", "fit", "--dialogues", str(sample_path), "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    # cross-validation reads the fit part only too, and writes nothing when it has none
    held_out = tmp_path / "held_out.jsonl"
    cv = ["atod", "fit", "--dialogues", str(sample_path), "--cv-pred", str(held_out)]
    assert main(cv) == 2
    assert "--dialogues --part fit: none of the 3" in capsys.readouterr().err
    assert not held_out.exists() and not model.exists()
    assert main([*cv[:-1], str(tmp_path)]) == 2
    assert "--cv-pred" in capsys.readouterr().err
