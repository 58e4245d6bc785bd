"""Recipes fail the way the CLI does: one `error:` line naming the flag or path, exit status 2.

`run_recipe_main` is each recipe's `__main__`; the in-process tests drive it with the recipes'
own parsers, and one subprocess runs `recipes/grpo.py` itself, as a user would. It runs the
script with plain `python`: under `accelerate launch` the launcher adds its own
`CalledProcessError` traceback after the recipe's line (`accelerate launch -q` leaves it out).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from trl import GRPOConfig, ModelConfig, SFTConfig, TrlParser

from mads_bench.models import ModelNotFoundError
from mads_bench.training import GRPOScriptArguments, SFTScriptArguments, run_recipe_main
from tests.recipes.helpers import REPO, recipe_env

SFT_CONFIG = str(REPO / "recipes/tiny-lm/sft/config_test.yaml")
GRPO_CONFIG = "recipes/tiny-lm/grpo/config_test.yaml"
NO_DATASET = (
    "error: --dataset_name is required: a folder written by `mads-bench build-dataset` or a "
    "Hub id (the configs leave it to the command line)"
)


def _sft_parser() -> TrlParser:
    return TrlParser((SFTScriptArguments, SFTConfig, ModelConfig))


def _never_called(*args: object) -> None:
    raise AssertionError("main ran although the arguments were incomplete")


def test_missing_dataset_name_is_one_line(monkeypatch, capsys, tmp_path: Path) -> None:
    argv = ["sft.py", "--config", SFT_CONFIG, "--output_dir", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    # checked before anything is loaded: main never runs
    assert run_recipe_main(_never_called, _sft_parser()) == 2
    assert capsys.readouterr().err.splitlines()[-1] == NO_DATASET


def test_missing_config_file_is_one_line(monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "argv", ["sft.py", "--config", "no/such/config.yaml"])
    assert run_recipe_main(_never_called, _sft_parser()) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: no/such/config.yaml: No such file or directory"
    )


def test_expected_failures_in_main_are_one_line_and_bugs_keep_traceback(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    argv = ["sft.py", "--config", SFT_CONFIG, "--dataset_name", "d", "--output_dir", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)

    def model_missing(*args: object) -> None:
        raise ModelNotFoundError("Model 'nonexistent' is neither a known name (tiny-lm, ...)")

    # a MadsBenchError from inside main (a model that is not set up, a damaged folder)
    assert run_recipe_main(model_missing, _sft_parser()) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: Model 'nonexistent' is neither a known name (tiny-lm, ...)"
    )

    def bug(*args: object) -> None:
        raise TypeError("a bug")

    # anything else is a bug: it propagates with its traceback
    with pytest.raises(TypeError, match="a bug"):
        run_recipe_main(bug, _sft_parser())


def test_settings_trl_rejects_are_one_line(monkeypatch, capsys, tmp_path: Path) -> None:
    # GRPOConfig checks its own settings while parsing (a ValueError from __post_init__)
    argv = ["grpo.py", "--config", str(REPO / GRPO_CONFIG), "--dataset_name", "d",
            "--output_dir", str(tmp_path), "--num_generations", "3"]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    parser = TrlParser((GRPOScriptArguments, GRPOConfig, ModelConfig))
    assert run_recipe_main(_never_called, parser) == 2
    line = capsys.readouterr().err.splitlines()[-1]
    assert line.startswith("error: ") and "num_generations (3)" in line


def test_grpo_script_without_dataset_name_exits_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "recipes/grpo.py", "--config", GRPO_CONFIG],
        cwd=REPO,
        env=recipe_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    # exit 2, the one line last, no traceback
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.splitlines()[-1] == NO_DATASET
    assert "Traceback" not in proc.stderr


def _grpo_error_line(monkeypatch, capsys, tmp_path: Path, *flags: str) -> str:
    """`recipes/grpo.py` run in-process on a dataset that does not exist: the exit status must
    be 2 (refused before the dataset is read), and the last line of stderr is returned."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("grpo_recipe", REPO / "recipes/grpo.py")
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    argv = ["grpo.py", "--config", str(REPO / GRPO_CONFIG), "--dataset_name", "no/such/data",
            "--output_dir", str(tmp_path), *flags]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    parser = TrlParser((GRPOScriptArguments, GRPOConfig, ModelConfig))
    assert run_recipe_main(recipe.main, parser) == 2
    return capsys.readouterr().err.splitlines()[-1]


def test_curriculum_reward_outside_reward_funcs_is_one_line(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    line = _grpo_error_line(monkeypatch, capsys, tmp_path, "--curriculum_reward", "tool_nmae")
    assert line.startswith("error: curriculum_reward 'tool_nmae' is not one of reward_funcs")


def test_constrained_tool_names_without_the_fast_copy_is_one_line(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    flags = ("--constrain_tool_names", "true", "--rollout_weights", "trained")
    line = _grpo_error_line(monkeypatch, capsys, tmp_path, *flags)
    assert line.startswith("error: constrain_tool_names works in step mode with rollouts from")
