"""The evaluators' name for the one sentence encoder, :class:`mads_bench.embedding.SentenceEncoder`.

``SentenceSimilarity(model).pairs(predicted, references)`` gives the clamped cosines used by
the GRPO semantic reward (``minilm``) and by L-1's semantic similarity (``mpnet``, the paper's
all-mpnet-base-v2); the wrapper, its reference cache and its batching live in
:mod:`mads_bench.embedding`.
"""

from __future__ import annotations

from mads_bench.embedding import SentenceEncoder as SentenceSimilarity

__all__ = ["SentenceSimilarity"]
