"""Training data for the recipes: load a `sft`/`grpo` config, subset it, describe its revision.

Datasets are read only through `mads_bench.datasets.load_mads_dataset` (a `build-dataset`
folder or a Hub id, SPEC §4.3). This module adds what training needs on top: the paper's
GRPO subset of N whole conversations (MADS §4.1: 50), the scenarios behind a split for
conversation-level GRPO, and a small record of which data a run
saw (source, config, Hub revision or the content fingerprint of a local folder) that goes to
W&B and into the model card.

Example:
    >>> from datasets import Dataset
    >>> rows = Dataset.from_dict({"conversation_id": ["a", "a", "b", "c"], "x": [1, 2, 3, 4]})
    >>> sorted(set(select_conversations(rows, 2, seed=0)["conversation_id"]))
    ['b', 'c']
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mads_bench.errors import UsageError

if TYPE_CHECKING:
    from datasets import Dataset, DatasetDict

    from mads_bench.data_model import Scenario

__all__ = [
    "dataset_record",
    "load_training_splits",
    "select_conversations",
    "training_scenarios",
]


def load_training_splits(
    source: str | None,
    config: str,
    *,
    train_split: str = "train",
    test_split: str = "test",
    max_train_samples: int | None = None,
    revision: str | None = None,
) -> tuple[Dataset, Dataset | None, dict[str, Any]]:
    """Load one dataset config and return `(train, test or None, record)`.

    Args:
        source (`str`): `dataset_name` of the recipe: a `build-dataset` folder or a Hub id.
        config (`str`): `sft` or `grpo`.
        train_split (`str`): Training split name.
        test_split (`str`): Evaluation split name (None when absent).
        max_train_samples (`int`, *optional*): Keep the first N training rows.
        revision (`str`, *optional*): Hub revision to record (the loader reads the default).

    Returns:
        `tuple`: Train split, test split or None, and `dataset_record(...)`.

    Raises:
        `UsageError`: When `source` is missing or the split does not exist.
    """
    from mads_bench.datasets import load_mads_dataset

    if not source:
        raise UsageError(
            "dataset_name is required: a folder written by `mads-bench build-dataset` or a Hub id."
        )
    splits = load_mads_dataset(source, config)
    if train_split not in splits:
        raise UsageError(
            f"dataset {source!r} config {config!r}: no split {train_split!r} (has {sorted(splits)})"
        )
    train = splits[train_split]
    if max_train_samples is not None:
        train = train.select(range(min(max_train_samples, len(train))))
    test = splits[test_split] if test_split in splits else None
    return train, test, dataset_record(source, config, splits, train, revision)


def dataset_record(
    source: str, config: str, splits: DatasetDict, train: Dataset, revision: str | None = None
) -> dict[str, Any]:
    """Describe the data a run trained on (for W&B config and model cards).

    Args:
        source (`str`): Folder or Hub id.
        config (`str`): Dataset config.
        splits (`DatasetDict`): All splits as loaded.
        train (`Dataset`): The training rows actually used (after subsetting).
        revision (`str`, *optional*): Hub revision, when known.

    Returns:
        `dict`: `source`, `config`, `revision` (the Hub revision, else `local:<fingerprint>`
        of the loaded train split), `fingerprint`, `num_rows` per split, `num_train_used`.
    """
    fingerprint = getattr(splits.get("train", train), "_fingerprint", None)
    is_local = Path(source).expanduser().exists()
    return {
        "source": Path(source).name if is_local else source,
        "config": config,
        "revision": revision or (f"local:{fingerprint}" if is_local else "main"),
        "fingerprint": fingerprint,
        "num_rows": {name: len(split) for name, split in splits.items()},
        "num_train_used": len(train),
    }


def select_conversations(dataset: Dataset, num_conversations: int | None, *, seed: int) -> Dataset:
    """Keep every step of a seeded sample of `num_conversations` conversations.

    Args:
        dataset (`Dataset`): Rows with a `conversation_id` column (the `grpo` config).
        num_conversations (`int`, *optional*): How many conversations; None keeps all.
        seed (`int`): Sampling seed (the sample is the same on every process).

    Returns:
        `Dataset`: The rows of the sampled conversations, in their original order.
    """
    if num_conversations is None:
        return dataset
    if "conversation_id" not in dataset.column_names:
        raise UsageError("num_conversations needs a `conversation_id` column (the grpo config)")
    ids = sorted(set(dataset["conversation_id"]))
    if num_conversations >= len(ids):
        return dataset
    keep = set(random.Random(seed).sample(ids, num_conversations))
    return dataset.filter(lambda row: row["conversation_id"] in keep)


def training_scenarios(
    train: Dataset,
    *,
    scenarios_file: str | None = None,
    num_scenarios: int | None = None,
    seed: int = 0,
) -> list[Scenario]:
    """The scenarios behind a training split, for conversation-level GRPO.

    Args:
        train (`Dataset`): Training rows with a `scenario_id` column (any `build-dataset`
            config), so the test split's scenarios stay held out.
        scenarios_file (`str`, *optional*): Scenario file (YAML, JSON, JSONL) for ids that are
            not hand-written (generated scenarios); the hand-written ones need none.
        num_scenarios (`int`, *optional*): Keep a seeded sample of this many.
        seed (`int`): Seed of that sample.

    Returns:
        `list[Scenario]`: In first-seen order of the split.

    Raises:
        `UsageError`: No `scenario_id` column, or an id found neither in the catalog nor in
            `scenarios_file`.
    """
    from mads_bench.catalog import load_all_scenarios, load_scenario_file

    if "scenario_id" not in train.column_names:
        raise UsageError("rollout: conversation needs a `scenario_id` column in the train split")
    known = {s.id: s for s in load_all_scenarios(include_mock=True)}
    if scenarios_file:
        known.update({s.id: s for s in load_scenario_file(Path(scenarios_file))})
    wanted = list(dict.fromkeys(train["scenario_id"]))
    unknown = [s for s in wanted if s not in known]
    if unknown:
        where = scenarios_file or "the hand-written catalog (pass --scenarios_file FILE)"
        raise UsageError(
            f"{len(unknown)} training scenario(s) are not in {where}, e.g. {unknown[0]!r}"
        )
    if num_scenarios is not None and num_scenarios < len(wanted):
        keep = set(random.Random(seed).sample(wanted, num_scenarios))
        wanted = [s for s in wanted if s in keep]
    return [known[s] for s in wanted]
