"""The one sentence-encoder wrapper: lazy loading, batching, a cache and cosine similarities.

Every consumer of sentence embeddings goes through :class:`SentenceEncoder`: the validator's
embedding checks (role confusion, the decline explanation), SAGE's offline grounding verifier,
the GRPO semantic reward and L-1's semantic similarity (:meth:`SentenceEncoder.pairs`), and
the ATOD goal matcher (calling the object). The encoder is loaded on first use through
:func:`mads_bench.models.load_sentence_encoder` (``minilm`` by default, one instance per
process and model), or given (a test's fake, anything with sentence-transformers' ``encode``).

Three ways to embed, each kept exactly as its consumer has always computed it:

* :meth:`~SentenceEncoder.encode` — cached unit vectors; only texts not seen before reach the
  encoder, in one batch. Scripted users repeat many sentences, so the validator encodes each
  once; SAGE's grounding verifier (in sorted batches of 32) and the ATOD tracker's encoders
  are used the same way.
* :meth:`~SentenceEncoder.pairs` — clamped cosines of ``(predicted, reference)`` pairs in one
  encoder call: the predictions plus the references not cached yet (references repeat across
  a GRPO group and across epochs; predictions rarely do).
* calling the object — one plain encoder call, no cache (the ATOD matcher's embedder).

The cache holds at most ``cache_size`` texts: when a call would overflow it, it is emptied
but for the texts that call needs (recurring texts are encoded again, once).
sentence-transformers normalises the vectors itself (``normalize_embeddings=True``); a row
further than 1e-4 from unit length (an encoder that ignores the flag, such as a test's fake)
is divided by its norm, so a dot product is always a cosine. Rows already of unit length are
left bit for bit as the encoder gave them.

Example:
    >>> class Fake:
    ...     def encode(self, texts, **kwargs):
    ...         return np.array([[2.0, 0.0] if "a" in t else [0.0, 1.0] for t in texts])
    >>> encoder = SentenceEncoder(Fake())
    >>> encoder.cosine("a cat", "dog"), encoder.cosine("a cat", "a bat")
    (0.0, 1.0)
    >>> encoder.pairs(["dog"], ["bird"])
    [1.0]
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

__all__ = ["SentenceEncoder"]


class SentenceEncoder:
    """A lazily loaded, batched, cached sentence encoder.

    Args:
        model (`str | Any`): A name for :func:`mads_bench.models.load_sentence_encoder`
            (``"minilm"``, ``"mpnet"``), a local path or a cached Hub id; or the encoder
            itself (anything with sentence-transformers' ``encode``).
        batch_size (`int`): Encoder batch size.
        cache_size (`int`): How many embeddings to keep (emptied when full).
        encoder (`Any`, *optional*): The encoder, when ``model`` is only a label (tests and
            benchmarks).
    """

    def __init__(
        self,
        model: str | Any = "minilm",
        *,
        batch_size: int = 64,
        cache_size: int = 65536,
        encoder: Any = None,
    ) -> None:
        if not isinstance(model, str):
            model, encoder = type(model).__name__, model
        self.model, self.batch_size, self.cache_size = model, batch_size, cache_size
        self._encoder = encoder
        self._cache: dict[str, np.ndarray] = {}
        self.encode_seconds = 0.0  # time spent inside the encoder, for benchmarks
        self.encode_calls = 0

    @property
    def encoder(self) -> Any:
        """The sentence encoder, loaded on first use (once per process and model)."""
        if self._encoder is None:
            from mads_bench.models import load_sentence_encoder

            self._encoder = load_sentence_encoder(self.model)
        return self._encoder

    def _dimension(self) -> int:
        encoder = self.encoder
        for name in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
            if hasattr(encoder, name):
                return int(getattr(encoder, name)())
        return 0

    def _encoded(self, texts: list[str]) -> np.ndarray:
        """One encoder call: unit-length embeddings, float32."""
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
        vectors = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        off = np.abs(norms - 1) > 1e-4
        if off.any():
            vectors = np.where(off, vectors / np.where(norms == 0, 1.0, norms), vectors)
        return vectors

    def __call__(self, texts: list[str]) -> np.ndarray:
        """Embeddings of ``texts`` in one encoder call, uncached (shape ``(n, d)``)."""
        if not texts:
            return np.zeros((0, self._dimension()), dtype=np.float32)
        return self._encoded(texts)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (one row each), encoding only unseen texts, in one batch."""
        if not texts:
            return self([])
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            self._store(todo, self._encoded(todo), texts)
        return np.stack([self._cache[t] for t in texts])

    def cosine(self, a: str, b: str) -> float:
        """Cosine similarity of two texts."""
        first, second = self.encode([a, b])
        return float(first @ second)

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
        vectors = self._encoded(list(predicted) + missing)
        if missing:
            self._store(missing, vectors[len(predicted) :], references)
        gold = np.stack([self._cache[r] for r in references])
        cosines = np.einsum("ij,ij->i", vectors[: len(predicted)], gold)
        return [float(min(1.0, max(0.0, c))) for c in cosines]

    def _store(self, new: list[str], vectors: np.ndarray, needed: list[str]) -> None:
        """Cache ``new``; a full cache is emptied first, keeping the ``needed`` texts."""
        if len(self._cache) + len(new) > self.cache_size:
            self._cache = {t: self._cache[t] for t in dict.fromkeys(needed) if t in self._cache}
        self._cache.update(zip(new, vectors, strict=True))
