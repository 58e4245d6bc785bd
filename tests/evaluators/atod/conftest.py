"""Shared fixtures: the shared ATOD sample (skipped when absent) and a tiny fake embedder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

SAMPLE = (
    Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "atod_sample"
).resolve() / "medium_sample.json"


@pytest.fixture
def sample_path() -> Path:
    if not SAMPLE.is_file():
        pytest.skip(f"shared ATOD sample not found at {SAMPLE}")
    return SAMPLE


class KeywordEmbedder:
    """Deterministic stand-in for MiniLM: one axis per keyword, L2-normalised.

    Texts sharing no keyword get cosine 0; identical keyword sets get cosine 1.
    """

    KEYWORDS = ("hotel", "flight", "bus", "weather", "bank", "concert", "song", "dinner")

    def __call__(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            vec = np.array([float(k in text.lower()) for k in self.KEYWORDS] + [1e-3])
            rows.append(vec / np.linalg.norm(vec))
        return np.array(rows, dtype=np.float32).reshape(len(texts), len(self.KEYWORDS) + 1)


@pytest.fixture
def keyword_embedder() -> KeywordEmbedder:
    return KeywordEmbedder()
