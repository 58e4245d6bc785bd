"""Fixtures: the hand-written SGD excerpt, the shared SGD copy and a generated set."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulation.atod_generation import GenerationConfig, generate
from simulation.atod_generation.pipeline import GenerationResult
from simulation.atod_generation.sequences import SgdCorpus, load_sgd_corpus

TINY = Path(__file__).resolve().parent / "fixtures" / "sgd_tiny"
SGD = (Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "sgd" / "train").resolve()


@pytest.fixture
def tiny_sgd() -> Path:
    return TINY


@pytest.fixture(scope="session")
def sgd_dir() -> Path:
    if not (SGD / "schema.json").is_file():
        pytest.skip(f"shared SGD copy not found at {SGD}")
    return SGD


@pytest.fixture(scope="session")
def sgd_corpus(sgd_dir: Path) -> SgdCorpus:
    """The shared SGD copy, read once per session (a few seconds)."""
    return load_sgd_corpus(sgd_dir)


@pytest.fixture(scope="session")
def generated(sgd_dir: Path, sgd_corpus: SgdCorpus) -> GenerationResult:
    """24 scripted dialogues (seed 3) from the shared SGD copy, generated once per session."""
    return generate(GenerationConfig(sgd_dir, num_dialogues=24, seed=3), corpus=sgd_corpus)
