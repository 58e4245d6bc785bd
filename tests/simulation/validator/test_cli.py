"""``mads-bench validate``: accepted/rejected files, summary, resume and idempotent reruns."""

import json

from mads_bench.cli import main
from mads_bench.pre_act import Action
from simulation.trajectory_io import TrajectoryWriter, read_trajectories
from tests.simulation.validator.corrupt import with_step


def _inputs(tmp_path, transfer):
    bad = with_step(transfer, 8, action=Action.say("All done: your savings now hold 18,250.00."))
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path) as writer:
        writer.write(transfer)
        writer.write(bad.model_copy(update={"id": "corrupted"}))
    return path


def _args(tmp_path, inputs, *extra):
    return [
        "validate",
        "--trajectories",
        str(inputs),
        "--out-accepted",
        str(tmp_path / "a.jsonl"),
        "--out-rejected",
        str(tmp_path / "r.jsonl"),
        "--no-progress",
        "--judge",
        "fake:YES",
        "--report",
        str(tmp_path / "report.json"),
        *extra,
    ]


def test_validate_writes_both_files_and_summary(tmp_path, transfer, capsys):
    inputs = _inputs(tmp_path, transfer)
    # the fake judge answers YES to every question: only the rule failure rejects
    assert main(_args(tmp_path, inputs)) == 0
    accepted = list(read_trajectories(tmp_path / "a.jsonl"))
    rejected = list(read_trajectories(tmp_path / "r.jsonl"))
    assert [t.id for t in accepted] == [transfer.id] and [t.id for t in rejected] == ["corrupted"]
    # the rejected trajectory keeps its reasons
    assert rejected[0].verdict["checks"]["faithfulness"]["reasons"] == [
        "turn 1 step 1: unsupported_say: number 18250 is not in any tool result or user message"
    ]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["accepted"] == 1 and report["failures_per_check"]["faithfulness"] == 1
    assert report["judge"] == "fake:YES"
    assert "| faithfulness | 1 |" in capsys.readouterr().out


def test_resume_skips_and_rerun_is_idempotent(tmp_path, transfer, capsys):
    inputs = _inputs(tmp_path, transfer)
    main(_args(tmp_path, inputs))
    first = (tmp_path / "a.jsonl").read_text(), (tmp_path / "r.jsonl").read_text()
    # --resume: both ids are already decided, nothing is validated again
    assert main(_args(tmp_path, inputs, "--resume")) == 0
    assert (
        "0 validated (2 already in the outputs, 0 duplicate ids skipped)" in capsys.readouterr().out
    )
    # a plain rerun replaces the outputs with identical files
    main(_args(tmp_path, inputs))
    assert ((tmp_path / "a.jsonl").read_text(), (tmp_path / "r.jsonl").read_text()) == first


def test_missing_input_is_a_clear_error(tmp_path, capsys):
    # exit status 2 and the path in the message
    assert main(_args(tmp_path, tmp_path / "nope.jsonl")) == 2
    assert "nope.jsonl: no such trajectory file or folder" in capsys.readouterr().err


def test_unknown_scenarios_are_kept_and_explained(tmp_path, transfer, capsys):
    # a conversation of a scenario that was not loaded (e.g. a generated one validated
    # without --scenarios) is rejected with its reason, and the summary says what to pass
    stray = transfer.model_copy(update={"id": "stray", "scenario_id": "banking-gen7-0000-x"})
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path) as writer:
        writer.write(transfer)
        writer.write(stray)
    assert main(_args(tmp_path, path)) == 0
    rejected = list(read_trajectories(tmp_path / "r.jsonl"))
    assert [t.id for t in rejected] == ["stray"]
    assert "unknown_scenario" in rejected[0].verdict["checks"]["syntax"]["reasons"][0]
    out = capsys.readouterr().out
    assert "1 conversations name a scenario that was not loaded" in out and "--scenarios" in out
    assert json.loads((tmp_path / "report.json").read_text())["unknown_scenarios"] == 1
