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
def minilm_static_path(minilm_path) -> Path:
    """Folder of `minilm-static`, MiniLM's word pieces distilled (SAGE's default S2 encoder)."""
    return setup_models(["minilm-static"], progress=False)["minilm-static"]


@pytest.fixture(scope="session")
def tiny_lm_path() -> Path:
    """Folder of the random-init `tiny-lm` causal LM with the SmolLM2 tokenizer."""
    return setup_models(["tiny-lm"], progress=False)["tiny-lm"]


@pytest.fixture(scope="session")
def scenarios():
    """Every hand-written scenario (mock included) by id."""
    from mads_bench.catalog import load_all_scenarios

    return {s.id: s for s in load_all_scenarios(include_mock=True)}


@pytest.fixture(autouse=True)
def _no_leftover_domain_packs(monkeypatch):
    """A test that registers an external pack (``--domain-dir``) sets MADS_BENCH_DOMAIN_DIRS in
    this process; restore it afterwards, so later tests see only the shipped packs."""
    from mads_bench.catalog import DOMAIN_DIRS_ENV

    monkeypatch.setenv(DOMAIN_DIRS_ENV, os.environ.get(DOMAIN_DIRS_ENV, ""))
