"""Fixtures for the reward tests: batch builders and a fast deterministic stand-in encoder."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pytest


class HashEncoder:
    """Deterministic fake sentence encoder: one seeded random unit vector per distinct text,
    so equal texts have cosine 1 and different texts a random (possibly negative) cosine."""

    def __init__(self, dim: int = 16) -> None:
        self.dim, self.calls = dim, 0

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        self.calls += 1
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "replace")).digest()[:8])
            vector = np.random.default_rng(seed).standard_normal(self.dim)
            rows.append(vector / np.linalg.norm(vector))
        return np.stack(rows) if rows else np.zeros((0, self.dim))


def step(kind: str, body: Any, plan: bool = False) -> str:
    """A well-formed Pre-Act step: ``body`` is the say text or ``(name, arguments)``."""
    head = "<think>t</think>" + ("<plan>1. do it</plan>" if plan else "")
    if kind == "say":
        return f'{head}<action type="say">{body}</action>'
    name, arguments = body
    return (
        f'{head}<action type="tool">{json.dumps({"name": name, "arguments": arguments})}</action>'
    )


def gold_columns(rows: list[tuple]) -> dict[str, list]:
    """Gold kwargs from ``("tool", name, arguments_dict)`` / ``("say", text)`` / ``None`` rows."""
    columns: dict[str, list] = {
        k: [] for k in ("gold_action_type", "gold_tool_name", "gold_tool_arguments", "gold_say")
    }
    for row in rows:
        if row is None:
            values = [None, None, None, None]
        elif row[0] == "tool":
            values = ["tool", row[1], json.dumps(row[2]), None]
        else:
            values = ["say", None, None, row[1]]
        for key, value in zip(columns, values, strict=True):
            columns[key].append(value)
    return columns


@pytest.fixture
def hash_encoder() -> HashEncoder:
    """A fresh fake encoder."""
    return HashEncoder()
