"""Fixtures for the validator tests: the MiniLM embedder, clean trajectories."""

from __future__ import annotations

from typing import Any

import pytest

from mads_bench.data_model import Scenario, Trajectory
from mads_bench.embedding import SentenceEncoder
from simulation.environment import simulate
from tests.simulation.validator.corrupt import FROZEN, TRANSFER


@pytest.fixture(scope="session")
def embedder(minilm_path: Any) -> SentenceEncoder:
    """One MiniLM embedder for the whole session."""
    from mads_bench.models import load_sentence_encoder

    return SentenceEncoder(load_sentence_encoder(str(minilm_path)))


@pytest.fixture(scope="session")
def transfer(scenarios: dict[str, Scenario]) -> Trajectory:
    """A clean scripted savings-to-checking transfer (normal scenario)."""
    return simulate(scenarios[TRANSFER], seed=0)


@pytest.fixture(scope="session")
def frozen(scenarios: dict[str, Scenario]) -> Trajectory:
    """A clean scripted decline of a payment from a frozen account (impossible scenario)."""
    return simulate(scenarios[FROZEN], seed=0)
