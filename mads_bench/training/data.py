"""Training data for the recipes: load a `sft`/`grpo` config, subset it, describe its revision.

Datasets are read only through `mads_bench.datasets.load_mads_dataset` (a `build-dataset`
folder or a Hub id, SPEC §4.3). This module adds what training needs on top: the paper's
GRPO subset of N whole conversations (MADS §4.1: 50), and a small record of which data a run
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

__all__ = ["dataset_record", "load_training_splits", "select_conversations"]


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
