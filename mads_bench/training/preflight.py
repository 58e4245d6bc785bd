"""Checks of a training stage before it is launched: its YAML, its dataset config, its model.

A recipe launch takes tens of seconds to start and SFT minutes to hours to finish, so
`run_sft_then_grpo` checks both stages before SFT starts: a typo in the GRPO config must not
wait for SFT to end. `check_stage` reads a recipe's YAML as `TrlParser` does (a mapping whose
keys are fields of the recipe's three dataclasses, plus `env`), applies the command-line
overrides that decide what the stage reads, and checks that it can be read: the dataset config
and its training split (not empty), and the model (`mads_bench.models.resolve_model`, which
never contacts the Hub). Settings are checked by name only: building TRL's config classes
here would run their device checks on a machine that may not be the one that trains. A Hub
dataset id is left to the recipe, which loads it.

Example:
    >>> check_stage("sft", Path("no/such.yaml"), "outputs/demo/dataset")
    Traceback (most recent call last):
    ...
    mads_bench.errors.UsageError: SFT config no/such.yaml: no such file
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from mads_bench.errors import UsageError

__all__ = ["check_dataset_config", "check_stage", "read_yaml_mapping", "recipe_settings"]

# TrlParser pops `env` (environment variables for the run) before it parses the rest.
_PARSER_KEYS = frozenset({"env"})


@cache
def recipe_settings(recipe: str) -> frozenset[str]:
    """The setting names a recipe's YAML may use (`sft` or `grpo`), as its `TrlParser` has them.

    Example:
        >>> {"merge_step_chains", "completion_only_loss", "lora_r"} <= recipe_settings("sft")
        True
    """
    from mads_bench.model_builders import without_bitsandbytes_kernel_warning

    with without_bitsandbytes_kernel_warning():  # nothing 4-bit runs here: the warning is noise
        from trl import GRPOConfig, ModelConfig, SFTConfig

        from mads_bench.training.config import GRPOScriptArguments, SFTScriptArguments

    classes = {
        "sft": (SFTScriptArguments, SFTConfig, ModelConfig),
        "grpo": (GRPOScriptArguments, GRPOConfig, ModelConfig),
    }[recipe]
    # HfArgumentParser makes one flag per field that __init__ takes
    names = {f.name for cls in classes for f in dataclasses.fields(cls) if f.init}
    return frozenset(names | _PARSER_KEYS)


def read_yaml_mapping(path: Path, what: str) -> dict[str, Any]:
    """Read a YAML file that must hold a mapping; `what` names it in errors ("SFT config").

    Raises:
        `UsageError`: The file is missing, not a file, not YAML, empty or not a mapping.
    """
    import yaml

    if not path.exists():
        raise UsageError(f"{what} {path}: no such file")
    if not path.is_file():
        raise UsageError(f"{what} {path}: not a file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise UsageError(f"{what} {path}: not a text file ({error.reason})") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or type(error).__name__
        raise UsageError(f"{what} {path}: not valid YAML ({problem}{where})") from None
    if data is None:
        raise UsageError(f"{what} {path}: empty; expected a YAML mapping of settings")
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise UsageError(f"{what} {path}: holds a {kind}, expected a YAML mapping of settings")
    return data


def _unknown(names: Sequence[str], known: frozenset[str], where: str) -> None:
    for name in names:
        base = name[3:] if name.startswith("no_") and name[3:] in known else name
        if base not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(f"{where}: unknown setting {name!r}{hint}")


def _overrides(extra_args: Sequence[str]) -> dict[str, str]:
    """`--name value` / `--name=value` pairs of a recipe's command line (last one wins)."""
    values: dict[str, str] = {}
    for index, token in enumerate(extra_args):
        if not token.startswith("--"):
            continue
        name, equals, value = token[2:].partition("=")
        if equals:
            values[name] = value
        elif index + 1 < len(extra_args) and not extra_args[index + 1].startswith("--"):
            values[name] = extra_args[index + 1]
        else:
            values[name] = "true"  # a bare boolean flag
    return values


def _is_hub_id(text: str) -> bool:
    # `user/name`; anything else that does not exist is a folder that is missing
    return text.count("/") == 1 and not text.startswith((".", "/", "~"))


def check_dataset_config(dataset: str | Path, config: str, split: str, stage: str) -> None:
    """Check that `dataset` (a `build-dataset` folder) holds `config` with a non-empty `split`.

    Args:
        dataset (`str | Path`): The folder, or a Hub id `user/name` (not checked here).
        config (`str`): `sft` or `grpo` (any of `mads_bench.datasets.CONFIG_NAMES`).
        split (`str`): The training split (`train`).
        stage (`str`): Names the stage in errors (`SFT`, `GRPO`).

    Raises:
        `UsageError`: Naming the folder and what it lacks.
    """
    from mads_bench.datasets import CONFIG_NAMES

    if config not in CONFIG_NAMES:
        raise UsageError(
            f"{stage} dataset_config {config!r}: not a dataset config ({', '.join(CONFIG_NAMES)})"
        )
    folder = Path(dataset)
    if not folder.exists():
        if _is_hub_id(str(dataset)):
            return
        raise UsageError(
            f"dataset {dataset}: no such folder (expected a folder written by "
            "`mads-bench build-dataset`, or a Hub id user/name)"
        )
    if not folder.is_dir():
        raise UsageError(f"dataset {dataset}: not a folder written by `mads-bench build-dataset`")
    config_dir = folder / config
    if not (config_dir / "dataset_dict.json").is_file():
        present = sorted(p.parent.name for p in folder.glob("*/dataset_dict.json"))
        raise UsageError(
            f"dataset {dataset}: no {config!r} config, which the {stage} stage trains on (it "
            f"has {', '.join(present) or 'none'}; `mads-bench build-dataset` writes sft and grpo)"
        )
    import json

    from datasets import load_from_disk

    try:
        listed = json.loads((config_dir / "dataset_dict.json").read_text(encoding="utf-8"))
        splits = [str(name) for name in listed["splits"]]
        state = json.loads((config_dir / split / "state.json").read_text(encoding="utf-8"))
    except FileNotFoundError:  # dataset_dict.json is there (checked above): the split is not
        raise UsageError(
            f"dataset {config_dir}: no {split!r} split (it has {', '.join(splits) or 'none'})"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as error:  # damaged or half-written
        raise UsageError(f"dataset {config_dir}: cannot be read ({error})") from None
    # `datasets` saves a split without rows as no shards, which it then cannot load
    if not state.get("_data_files"):
        raise UsageError(f"dataset {config_dir}: the {split!r} split is empty")
    try:
        rows = len(load_from_disk(str(config_dir / split)))
    except (OSError, ValueError) as error:
        raise UsageError(f"dataset {config_dir / split}: cannot be read ({error})") from None
    if rows == 0:
        raise UsageError(f"dataset {config_dir}: the {split!r} split is empty")


def check_stage(
    recipe: str, config: Path, dataset: str | Path, extra_args: Sequence[str] = ()
) -> dict[str, Any]:
    """Check one recipe launch before it starts; return its YAML settings.

    Args:
        recipe (`str`): `sft` or `grpo`.
        config (`Path`): Its YAML config (the path the launch reads).
        dataset (`str | Path`): `--dataset_name` of the launch.
        extra_args (`Sequence[str]`): The launch's command-line overrides (`--max_steps 5`).

    Returns:
        `dict`: The YAML mapping as read.

    Raises:
        `UsageError`: A missing or malformed config, an unknown setting in it or in
            `extra_args`, a dataset without the config or rows the stage trains on.
        `ModelNotFoundError`: The model is neither set up nor a local folder.
    """
    from mads_bench.models import resolve_model

    stage = recipe.upper()
    settings = read_yaml_mapping(config, f"{stage} config")
    overrides = _overrides(extra_args)
    effective = {**settings, **overrides}
    check_dataset_config(
        dataset,
        str(effective.get("dataset_config") or recipe),
        str(effective.get("dataset_train_split") or "train"),
        stage,
    )
    known = recipe_settings(recipe)  # after the quick checks: it imports TRL (seconds)
    _unknown(list(settings), known, f"{stage} config {config}")
    _unknown(list(overrides), known, f"{stage} command-line overrides")
    model = effective.get("model_name_or_path")
    if not model:
        raise UsageError(f"{stage} config {config}: no model_name_or_path")
    resolve_model(str(model))
    return settings
