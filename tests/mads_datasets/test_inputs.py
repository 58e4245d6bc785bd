"""Tests of reading trajectory inputs: files, folders and clear errors for bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from mads_bench.datasets import DatasetBuildError, build_dataset
from mads_bench.datasets.inputs import select_trajectories, trajectory_files
from tests.mads_datasets.conftest import write_jsonl


def test_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    # the error names the path that does not exist
    with pytest.raises(DatasetBuildError, match=r"nope\.jsonl: no such trajectory file"):
        build_dataset([missing])


def test_malformed_json_line_names_file_and_line(tmp_path: Path, trajectories) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", trajectories[:2])
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "torn", "scenario_\n')
    # line 3 is the torn one
    with pytest.raises(DatasetBuildError, match=r"bad\.jsonl:3: not a trajectory"):
        select_trajectories([path], include_unvalidated=True)


def test_wrong_record_names_the_field(tmp_path: Path, trajectories) -> None:
    path = tmp_path / "odd.jsonl"
    good = trajectories[0].model_dump_json()
    path.write_text(good + "\n\n" + '{"id": "x"}\n', encoding="utf-8")
    # the blank line 2 is skipped; line 3 misses fields and the message names one
    with pytest.raises(DatasetBuildError, match=r"odd\.jsonl:3: not a trajectory: scenario_id"):
        select_trajectories([path], include_unvalidated=True)


def test_folders_give_their_jsonl_files_in_name_order(tmp_path: Path, trajectories) -> None:
    write_jsonl(tmp_path / "b.jsonl", trajectories[2:3])
    write_jsonl(tmp_path / "a.jsonl", trajectories[:2])
    (tmp_path / "notes.txt").write_text("ignored", encoding="utf-8")
    # only *.jsonl, sorted by name
    assert [p.name for p in trajectory_files([tmp_path])] == ["a.jsonl", "b.jsonl"]
    selection = select_trajectories([tmp_path], include_unvalidated=True)
    # a.jsonl's two trajectories come first, then b.jsonl's one
    assert [t.id for t in selection.used] == [t.id for t in trajectories[:3]]
    empty = tmp_path / "empty"
    empty.mkdir()
    # a folder without trajectory files is an error naming it
    with pytest.raises(DatasetBuildError, match="empty: folder holds no"):
        trajectory_files([empty])
