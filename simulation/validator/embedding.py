"""A cached, batched sentence embedder shared by the embedding-based checks.

Loads ``minilm`` (all-MiniLM-L6-v2) through :func:`mads_bench.models.load_sentence_encoder`
on first use, encodes only texts it has not seen (unit-normalised, so a dot product is a
cosine) and keeps them for the rest of the run: scripted users repeat many sentences.

Example:
    >>> class Fake:
    ...     def encode(self, texts, **kwargs):
    ...         import numpy as np
    ...         return np.array([[1.0, 0.0] if "a" in t else [0.0, 1.0] for t in texts])
    >>> embedder = Embedder(Fake())
    >>> float(embedder.cosine("a cat", "dog"))
    0.0
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Embedder:
    """Cached batched encoder.

    Args:
        encoder: a sentence-transformers model (anything with ``encode``); ``None`` loads
            ``minilm`` lazily.
        batch_size: encoder batch size.
    """

    def __init__(self, encoder: Any = None, batch_size: int = 64) -> None:
        self._encoder = encoder
        self.batch_size = batch_size
        self._cache: dict[str, np.ndarray] = {}

    @property
    def encoder(self) -> Any:
        """The sentence encoder (loaded on first use)."""
        if self._encoder is None:
            from mads_bench.models import load_sentence_encoder

            self._encoder = load_sentence_encoder("minilm")
        return self._encoder

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (one row each), encoding only unseen texts, in one batch."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            vectors = np.asarray(
                self.encoder.encode(
                    todo,
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                ),
                dtype=np.float32,
            )
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.where(norms == 0, 1.0, norms)
            self._cache.update(zip(todo, vectors, strict=True))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def cosine(self, a: str, b: str) -> float:
        """Cosine similarity of two texts."""
        first, second = self.encode([a, b])
        return float(first @ second)
