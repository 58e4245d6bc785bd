"""Fixtures for the recipe tests (helpers in `tests/recipes/helpers.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.recipes.helpers import build_tiny_dataset


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny dataset folder in the `build-dataset` layout."""
    return build_tiny_dataset(tmp_path_factory.mktemp("mads_dataset"))
