"""Tests of ``mads-bench build-dataset`` and ``mads-bench push`` (offline)."""

from __future__ import annotations

from pathlib import Path

from mads_bench.cli import main
from tests.cli_helpers import error_line, run
from tests.mads_datasets.conftest import write_jsonl


def test_build_dataset_writes_the_layout_and_reports_counts(
    trajectory_file: Path, built, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "mads"
    args = ["build-dataset", "--trajectories", str(trajectory_file), "--out", str(out)]
    # without verdicts and without --include-unvalidated nothing is usable: exit 2, says why
    assert main(args) == 2
    assert "--include-unvalidated" in capsys.readouterr().err
    assert main([*args, "--include-unvalidated"]) == 0
    printed = capsys.readouterr().out
    rows = built.report.rows
    # the counts table matches the library build with the same defaults
    assert f"| sft | {rows['sft']['train']} | {rows['sft']['test']} |" in printed
    assert "0 rejected by the validator" in printed and "unhappy or impossible" in printed
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "grpo", "sft", "trajectories"]
    # a second run refuses to overwrite unless asked
    assert main([*args, "--include-unvalidated"]) == 2
    assert "overwrite" in capsys.readouterr().err
    assert main([*args, "--include-unvalidated", "--overwrite"]) == 0


def test_build_dataset_options_change_the_split(trajectory_file: Path, tmp_path: Path, capsys):
    out = tmp_path / "all-train"
    args = ["build-dataset", "--trajectories", str(trajectory_file), "--out", str(out)]
    args += ["--include-unvalidated", "--test-size", "0", "--held-out-domain", "none"]
    assert main(args) == 0
    # no held-out domain and no test share: every conversation is in train
    assert "| trajectories | 90 | 0 |" in capsys.readouterr().out


def test_build_dataset_compact_context(trajectory_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "compact"
    args = ["build-dataset", "--trajectories", str(trajectory_file), "--out", str(out)]
    assert main([*args, "--include-unvalidated", "--context", "compact"]) == 0
    # the card records the context the step prompts were built with
    assert "`compact` context" in (out / "README.md").read_text()


def test_bad_input_exits_2_with_the_file_named(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "missing.jsonl"
    code = main(["build-dataset", "--trajectories", str(missing), "--out", str(tmp_path / "o")])
    assert code == 2 and "missing.jsonl: no such trajectory file" in capsys.readouterr().err
    # an out-of-range test size is refused
    code = main(["build-dataset", "--trajectories", str(missing), "--out", "o", "--test-size", "2"])
    assert code == 2


def test_push_offline_exits_2(tmp_path: Path, capsys) -> None:
    # not a dataset folder: named in the error
    assert main(["push", "--dataset", str(tmp_path), "--repo-id", "me/x"]) == 2
    assert "not a build-dataset folder" in capsys.readouterr().err


def test_trajectories_without_a_pre_act_step_are_an_error(trajectories, tmp_path, capsys) -> None:
    plain = []
    for trajectory in trajectories[:2]:
        messages = [
            m.model_copy(update={"content": "Sure, I can help."}) if m.role == "assistant" else m
            for m in trajectory.messages
        ]
        plain.append(trajectory.model_copy(update={"messages": messages}))
    source = write_jsonl(tmp_path / "plain.jsonl", plain)
    out = tmp_path / "mads"
    argv = ["build-dataset", "--trajectories", source, "--out", out, "--include-unvalidated"]
    status, _, err = run(argv, capsys)
    # no step would reach sft or grpo: exit 2 naming the file, and nothing written
    assert status == 2
    assert error_line(err).startswith(f"error: {source}: no Pre-Act assistant step in the 2 used")
    assert not out.exists()
