"""Batched sentence-embedding cosine similarity with a cache of reference embeddings.

Used by the GRPO semantic reward (``minilm`` by default, fast) and by L-1's semantic
similarity (``mpnet``, the paper's all-mpnet-base-v2). The encoder is loaded lazily through
`mads_bench.models.load_sentence_encoder`, which keeps one instance per process. One call of
`SentenceSimilarity.pairs` makes at most one ``encode`` call: the predicted texts plus the
references not yet cached. Reference texts repeat across a GRPO group (8 completions share
one gold answer) and across epochs, so they are cached (least recently used, bounded).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

import numpy as np

__all__ = ["SentenceSimilarity"]


class SentenceSimilarity:
    """Cosine similarity of text pairs, clamped to [0, 1].

    Args:
        model (`str`): A name for `mads_bench.models.load_sentence_encoder` (``"minilm"``,
            ``"mpnet"``), a local path, or a cached Hub id.
        batch_size (`int`): Encoder batch size.
        cache_size (`int`): How many reference embeddings to keep.
        encoder (`Any`, *optional*): An object with sentence-transformers' ``encode``; when
            given, ``model`` is only a label (used by tests and benchmarks).

    Example:
        >>> sim = SentenceSimilarity("minilm")
        >>> texts = ["Refund issued.", "Hello"]
        >>> [round(v, 2) for v in sim.pairs(texts, texts)]
        [1.0, 1.0]
    """

    def __init__(
        self,
        model: str = "minilm",
        *,
        batch_size: int = 64,
        cache_size: int = 65536,
        encoder: Any = None,
    ) -> None:
        self.model, self.batch_size, self.cache_size = model, batch_size, cache_size
        self._encoder = encoder
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.encode_seconds = 0.0  # time spent inside the encoder, for benchmarks
        self.encode_calls = 0

    @property
    def encoder(self) -> Any:
        """The sentence encoder, loaded on first use (once per process and model)."""
        if self._encoder is None:
            from mads_bench.models import load_sentence_encoder

            self._encoder = load_sentence_encoder(self.model)
        return self._encoder

    def encode(self, texts: list[str]) -> np.ndarray:
        """L2-normalised embeddings of ``texts`` in one encoder call (shape ``(n, d)``)."""
        start = time.perf_counter()
        vectors = self.encoder.encode(
            texts,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        self.encode_seconds += time.perf_counter() - start
        self.encode_calls += 1
        return np.asarray(vectors, dtype=np.float32)

    def pairs(self, predicted: list[str], references: list[str]) -> list[float]:
        """Clamped cosine of each ``(predicted[i], references[i])`` pair.

        Args:
            predicted (`list[str]`): Predicted texts.
            references (`list[str]`): Reference texts, same length.

        Returns:
            `list[float]`: One value in [0, 1] per pair.
        """
        if len(predicted) != len(references):
            raise ValueError(
                f"predicted and references differ in length: {len(predicted)} != {len(references)}"
            )
        if not predicted:
            return []
        missing = list(dict.fromkeys(r for r in references if r not in self._cache))
        vectors = self.encode(list(predicted) + missing)
        for text, vector in zip(missing, vectors[len(predicted) :], strict=True):
            self._cache[text] = vector
        gold = np.stack([self._cached(r) for r in references])
        cosines = np.einsum("ij,ij->i", vectors[: len(predicted)], gold)
        self._evict()
        return [float(min(1.0, max(0.0, c))) for c in cosines]

    def _cached(self, text: str) -> np.ndarray:
        self._cache.move_to_end(text)
        return self._cache[text]

    def _evict(self) -> None:
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
