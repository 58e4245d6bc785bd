"""MADS-Bench datasets: trajectories -> ``trajectories`` / ``sft`` / ``grpo`` DatasetDicts.

Public API:

- :func:`build_dataset` -- read trajectory JSONL (validator-passed by default), split by
  scenario (held-out domain in test), build the three configs and the dataset card;
- :func:`save_dataset` -- write ``DIR/<config>/`` (``save_to_disk``) and ``DIR/README.md``;
- :func:`load_mads_dataset` -- one config from such a folder or from the Hub;
- :func:`push_dataset` -- publish a folder to a Hub dataset repo.

This package is named ``datasets`` inside ``mads_bench`` only; it never shadows the Hugging
Face ``datasets`` library (absolute imports).

Example:
    >>> from mads_bench.datasets import build_dataset, save_dataset  # doctest: +SKIP
    >>> built = build_dataset(["t.jsonl"], include_unvalidated=True)  # doctest: +SKIP
    >>> save_dataset(built, "out/mads")  # doctest: +SKIP
"""

from mads_bench.datasets.build import (
    CONFIG_NAMES,
    FEATURES,
    BuildReport,
    BuiltDataset,
    build_dataset,
    save_dataset,
)
from mads_bench.datasets.hub import HubError, load_mads_dataset, push_dataset
from mads_bench.datasets.inputs import DatasetBuildError
from mads_bench.datasets.splits import DEFAULT_HELD_OUT, DEFAULT_TEST_SIZE, split_scenarios

__all__ = [
    "CONFIG_NAMES",
    "DEFAULT_HELD_OUT",
    "DEFAULT_TEST_SIZE",
    "FEATURES",
    "BuildReport",
    "BuiltDataset",
    "DatasetBuildError",
    "HubError",
    "build_dataset",
    "load_mads_dataset",
    "push_dataset",
    "save_dataset",
    "split_scenarios",
]
