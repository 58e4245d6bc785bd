"""Tests of trajectory JSONL storage and of `mads-bench simulate` interruption and resume."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mads_bench.catalog import load_domain
from mads_bench.cli import main
from mads_bench.manifest import manifest_path
from simulation.environment import simulate
from simulation.trajectory_io import (
    TrajectoryFileError,
    TrajectoryWriter,
    read_trajectories,
    repair_torn_tail,
)

REPO = Path(__file__).resolve().parents[2]


def test_repair_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": 1}\n{"b": 2}\n{"c": 3')
    # the line without a newline is cut (7 bytes), the complete ones stay
    assert repair_torn_tail(path) == 7
    assert path.read_text() == '{"a": 1}\n{"b": 2}\n'
    # an intact file is left alone
    assert repair_torn_tail(path) == 0
    path.write_text('{"a": 1}\n{"b": \n')
    # a newline-terminated but unparsable last line is cut as well
    assert repair_torn_tail(path) == 7 and path.read_text() == '{"a": 1}\n'


def test_writer_refuses_overwrite_and_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    trajectory = simulate(load_domain("mock").scenarios[0])
    with TrajectoryWriter(path) as writer:
        writer.write(trajectory)
        # the same key twice is an error, never a duplicate line
        with pytest.raises(ValueError, match="already stored"):
            writer.write(trajectory)
    # an existing file needs resume
    with pytest.raises(FileExistsError, match="--resume"):
        TrajectoryWriter(path)
    assert [t.id for t in read_trajectories(path)] == ["mock-cancel-normal/r0/s0"]


def test_corrupt_middle_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = simulate(load_domain("mock").scenarios[0]).model_dump_json()
    path.write_text(f"{good}\nnot json\n{good}\n")
    # line 2 is bad and not the torn tail: a clear error
    with pytest.raises(TrajectoryFileError, match=r"t.jsonl:2"):
        list(read_trajectories(path))


def test_cli_resume_neither_duplicates_nor_drops(tmp_path: Path) -> None:
    full, partial = tmp_path / "full.jsonl", tmp_path / "partial.jsonl"
    args = ["simulate", "--domain", "mock", "-k", "3", "--seed", "2", "--no-progress"]
    assert main([*args, "--out", str(full)]) == 0
    lines = full.read_text().splitlines(keepends=True)
    # an interrupted run: four records and a torn fifth
    partial.write_text("".join(lines[:4]) + lines[4][:50])
    shutil.copy(manifest_path(full), manifest_path(partial))  # the settings that wrote it
    assert main([*args, "--out", str(partial)]) == 2  # refuses without --resume
    assert main([*args, "--out", str(partial), "--resume"]) == 0
    # same set of records, each once, byte-identical to the uninterrupted run
    assert sorted(partial.read_text().splitlines()) == sorted(line.strip() for line in lines)
    assert len(lines) == 9


def test_killed_process_resumes(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    command = [
        sys.executable,
        "-m",
        "mads_bench",
        "simulate",
        "--domain",
        "mock",
        "-k",
        "40",
        "--no-progress",
        "--out",
        str(out),
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + 60
    while time.time() < deadline and (not out.exists() or out.read_text().count("\n") < 5):
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    written = out.read_text().count("\n")
    # killed part-way; resuming completes the run with 120 distinct records
    assert 5 <= written < 120
    subprocess.run(
        [*command, "--resume"],
        cwd=REPO,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ids = [t.id for t in read_trajectories(out)]
    assert len(ids) == 120 and len(set(ids)) == 120
