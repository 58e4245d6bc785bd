"""Fixtures for the recipe tests (helpers in `tests/recipes/helpers.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.recipes.helpers import build_tiny_dataset


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny dataset folder in the `build-dataset` layout."""
    return build_tiny_dataset(tmp_path_factory.mktemp("mads_dataset"))


@pytest.fixture(scope="session")
def mock_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `build-dataset` folder of scripted mock-domain conversations (its train split names
    hand-written scenarios, as conversation-level GRPO needs)."""
    from mads_bench.catalog import load_domain
    from mads_bench.datasets import build_dataset, save_dataset
    from simulation.environment import simulate

    root = tmp_path_factory.mktemp("mock_dataset")
    trajectories = [simulate(s, seed=0, repetition=r) for s in load_domain("mock").scenarios
                    for r in range(2)]  # fmt: skip
    path = root / "trajectories.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in trajectories), encoding="utf-8")
    built = build_dataset([path], include_unvalidated=True)
    return save_dataset(built, root / "dataset")
