"""`train run` checks both stages before SFT starts, and a failed launch is one error line.

The launch itself is replaced (`pipeline._launch`): what is tested is what runs before and
after it. `test_recipes_cpu.py` launches the real recipes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mads_bench.cli import main
from mads_bench.errors import UsageError
from mads_bench.models import ModelNotFoundError
from mads_bench.training import pipeline
from mads_bench.training.preflight import check_stage
from tests.recipes.helpers import REPO

SFT_CONFIG = REPO / "recipes/tiny-lm/sft/config_test.yaml"
GRPO_CONFIG = REPO / "recipes/tiny-lm/grpo/config_test.yaml"


@pytest.fixture
def launches(monkeypatch) -> list[list[str]]:
    """Commands that would have been launched (none runs)."""
    seen: list[list[str]] = []

    def fake(command, env, log_path, echo):  # noqa: ARG001
        seen.append(command)
        raise AssertionError("a launch started although a stage was refused")

    monkeypatch.setattr(pipeline, "_launch", fake)
    return seen


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _train(tiny_dataset: Path, tmp_path: Path, *flags: str) -> list[str]:
    return ["train", "run", "--dataset", str(tiny_dataset), "--out", str(tmp_path / "out"),
            "--sft-config", str(SFT_CONFIG), "--grpo-config", str(GRPO_CONFIG), *flags]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty; expected a YAML mapping of settings"),
        ("- a\n- b\n", "holds a list, expected a YAML mapping of settings"),
        ("a: [1\n", "not valid YAML"),
        ("model_name_or_path: tiny-lm\nlearnin_rate: 0.1\n", "unknown setting 'learnin_rate' "
         "(did you mean 'learning_rate'?)"),
    ],
)  # fmt: skip
def test_a_bad_grpo_config_is_found_before_sft_starts(
    text: str, message: str, tiny_dataset: Path, tmp_path: Path, launches, capsys
) -> None:
    bad = _write(tmp_path / "grpo.yaml", text)
    argv = _train(tiny_dataset, tmp_path)
    argv[argv.index("--grpo-config") + 1] = str(bad)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: GRPO config {bad}: ") and message in err
    assert "\n" not in err and launches == []


def test_a_missing_config_or_dataset_config_is_one_line(
    tiny_dataset: Path, tmp_path: Path, launches, capsys
) -> None:
    argv = _train(tiny_dataset, tmp_path)
    argv[argv.index("--sft-config") + 1] = "no/such.yaml"
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: SFT config {Path('no/such.yaml').absolute()}: no such file"
    )
    only_sft = tmp_path / "only_sft"
    (only_sft / "sft").mkdir(parents=True)
    for name in ("dataset_dict.json",):
        (only_sft / "sft" / name).write_text((tiny_dataset / "sft" / name).read_text())
    with pytest.raises(UsageError, match="no 'grpo' config, which the GRPO stage trains on"):
        check_stage("grpo", GRPO_CONFIG, only_sft)
    assert launches == []


def test_an_unknown_override_and_a_missing_model_are_refused(
    tiny_dataset: Path, tmp_path: Path
) -> None:
    with pytest.raises(UsageError, match="command-line overrides: unknown setting 'max_step'"):
        check_stage("sft", SFT_CONFIG, tiny_dataset, ["--max_step", "3"])
    no_model = _write(tmp_path / "sft.yaml", "model_name_or_path: no-such-model-here\n")
    with pytest.raises(ModelNotFoundError):
        check_stage("sft", no_model, tiny_dataset)
    # a negated boolean and `--name=value` are settings too
    assert check_stage("sft", SFT_CONFIG, tiny_dataset, ["--no_bf16", "--max_steps=3"])


def test_an_empty_training_split_is_refused(tmp_path: Path) -> None:
    from datasets import Dataset, DatasetDict

    DatasetDict(
        train=Dataset.from_dict({"a": []}), test=Dataset.from_dict({"a": [1]})
    ).save_to_disk(str(tmp_path / "d" / "sft"))
    with pytest.raises(UsageError, match="the 'train' split is empty"):
        check_stage("sft", SFT_CONFIG, tmp_path / "d")


def test_relative_flags_are_read_from_the_working_folder(
    tiny_dataset: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "mine.yaml", SFT_CONFIG.read_text(encoding="utf-8"))
    seen: list[list[str]] = []

    def fail(command, env, log_path, echo):  # noqa: ARG001
        seen.append(command)
        return 3

    monkeypatch.setattr(pipeline, "_launch", fail)
    argv = _train(tiny_dataset, tmp_path)
    argv[argv.index("--sft-config") + 1] = "mine.yaml"
    main(argv)
    assert seen[0][seen[0].index("--config") + 1] == str(tmp_path / "mine.yaml")


def test_a_failed_launch_is_one_error_line_and_the_log_tail(
    tiny_dataset: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    def fail(command, env, log_path, echo):  # noqa: ARG001
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text(
            "step 1/2\rstep 2/2\n"
            "error: --dataset_name x: the sft split has no 'prompt' column\n"
            "Traceback (most recent call last):\n"
            '  File "/venv/accelerate/commands/launch.py", line 9, in main\n'
            "subprocess.CalledProcessError: Command '[python, sft.py]' returned 2.\n",
            encoding="utf-8",
        )
        return 2

    monkeypatch.setattr(pipeline, "_launch", fail)
    assert main(_train(tiny_dataset, tmp_path)) == 1
    err = capsys.readouterr().err
    log = tmp_path / "out" / "sft.log"
    lines = err.splitlines()
    assert lines[0].startswith("[train] sft: ")  # progress, then the error
    assert lines[1:] == [
        f"error: train run: SFT stage failed (exit 2); last lines of {log}:",
        "step 2/2",
        "error: --dataset_name x: the sft split has no 'prompt' column",
    ]
    assert "CalledProcessError" not in err
