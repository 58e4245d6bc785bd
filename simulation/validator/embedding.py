"""The validator's name for the one sentence encoder, :class:`mads_bench.embedding.SentenceEncoder`.

``Embedder`` is kept as a name (the conversation rewards and the rollouts import it from here);
the wrapper itself, its cache and its batching live in :mod:`mads_bench.embedding`.
"""

from __future__ import annotations

from mads_bench.embedding import SentenceEncoder as Embedder

__all__ = ["Embedder"]
