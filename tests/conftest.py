"""Shared pytest fixtures: the offline models (set up once per session in the real cache) and
the hand-written scenarios."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing in the tests may reach the Hub

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from mads_bench.models import setup_models  # noqa: E402


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    """Folder of the `minilm` sentence encoder (built on first use, then reused)."""
    return setup_models(["minilm"], progress=False)["minilm"]


@pytest.fixture(scope="session")
def tiny_lm_path() -> Path:
    """Folder of the random-init `tiny-lm` causal LM with the SmolLM2 tokenizer."""
    return setup_models(["tiny-lm"], progress=False)["tiny-lm"]


@pytest.fixture(scope="session")
def scenarios():
    """Every hand-written scenario (mock included) by id."""
    from mads_bench.catalog import load_all_scenarios

    return {s.id: s for s in load_all_scenarios(include_mock=True)}
