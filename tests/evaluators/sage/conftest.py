"""Shared fixtures of the SAGE tests: a hand-built restaurant workflow, turns and a fake encoder.

The fake encoder (hashed character trigrams, L2-normalised) stands in for MiniLM where a test
checks the verifier's plumbing rather than its semantics; it is deterministic and instant.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from evaluators.sage import DialogueAct, HistoryItem, TurnRecord, WorkflowSpec

SGD_DEV = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "sgd" / "dev"

SCHEMA = [
    {
        "service_name": "Restaurants_9",
        "description": "Find and reserve restaurants",
        "slots": [
            {
                "name": "restaurant_name",
                "description": "Name of the restaurant",
                "is_categorical": False,
                "possible_values": [],
            },
            {
                "name": "city",
                "description": "City where the restaurant is located",
                "is_categorical": False,
                "possible_values": [],
            },
            {
                "name": "time",
                "description": "Time of the reservation",
                "is_categorical": False,
                "possible_values": [],
            },
            {
                "name": "party_size",
                "description": "Number of people in the party",
                "is_categorical": True,
                "possible_values": ["1", "2", "3", "4"],
            },
            {
                "name": "price_range",
                "description": "Price range of the restaurant",
                "is_categorical": True,
                "possible_values": ["cheap", "moderate", "pricey"],
            },
            {
                "name": "phone_number",
                "description": "Phone number of the restaurant",
                "is_categorical": False,
                "possible_values": [],
            },
        ],
        "intents": [
            {
                "name": "FindRestaurants",
                "is_transactional": False,
                "required_slots": ["city"],
                "optional_slots": {"price_range": "dontcare"},
            },
            {
                "name": "ReserveRestaurant",
                "is_transactional": True,
                "required_slots": ["restaurant_name", "city", "time"],
                "optional_slots": {"party_size": "2"},
            },
        ],
    }
]


@pytest.fixture
def spec() -> WorkflowSpec:
    """The one-service workflow above."""
    return WorkflowSpec.from_sgd_schema(SCHEMA)


def turn(**fields) -> TurnRecord:
    """A ReserveRestaurant turn with sensible defaults, overridden by ``fields``."""
    base = {
        "dialogue_id": "d1",
        "turn_id": "2",
        "service": "Restaurants_9",
        "intent": "ReserveRestaurant",
        "history": [
            HistoryItem(speaker="user", text="Book a table at Sino please."),
            HistoryItem(speaker="agent", text="Which city should I look in?"),
        ],
        "user": "In San Jose, at 7 pm.",
        "agent": "Please confirm: a table at Sino in San Jose at 7 pm.",
        "state_before": {"restaurant_name": "Sino"},
        "state_after": {"restaurant_name": "Sino", "city": "San Jose", "time": "7 pm"},
        "user_acts": [
            DialogueAct(act="INFORM", slot="city", values=["San Jose"]),
            DialogueAct(act="INFORM", slot="time", values=["7 pm"]),
        ],
        "agent_acts": [DialogueAct(act="CONFIRM", slot="city", values=["San Jose"])],
    }
    base.update(fields)
    return TurnRecord(**base)


class HashEncoder:
    """Deterministic stand-in for a sentence encoder; counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts, **_kwargs) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), 256))
        for row, text in enumerate(texts):
            padded = f"  {text.lower()}  "
            for i in range(len(padded) - 2):
                digest = hashlib.md5(padded[i : i + 3].encode()).digest()
                out[row, digest[0]] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


@pytest.fixture(scope="session")
def sgd_dev() -> Path:
    """The SGD dev folder; the test is skipped when the shared data is absent."""
    if not (SGD_DEV / "schema.json").is_file():
        pytest.skip(f"SGD dev data not found at {SGD_DEV}")
    return SGD_DEV
