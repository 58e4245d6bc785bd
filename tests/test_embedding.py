"""Tests of `mads_bench.embedding`: the one sentence-encoder wrapper and its three uses."""

from __future__ import annotations

import numpy as np

from mads_bench.embedding import SentenceEncoder


class CountingEncoder:
    """Vectors ``[len(text), 1]`` (not unit length), recording every call."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts, **kwargs):
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts])

    def get_embedding_dimension(self) -> int:
        return 2


def test_encode_embeds_each_text_once_as_unit_vectors():
    fake = CountingEncoder()
    encoder = SentenceEncoder(fake)
    first = encoder.encode(["a", "bb", "a"])
    second = encoder.encode(["bb", "ccc"])
    # one call per batch of unseen texts, rows in the order asked
    assert fake.calls == [["a", "bb"], ["ccc"]]
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0)
    assert (first[1] == second[0]).all() and (first[0] == first[2]).all()
    # [3, 1] / sqrt(10): a fake that ignores normalize_embeddings is normalised here
    assert np.allclose(second[1], [3 / np.sqrt(10), 1 / np.sqrt(10)])
    # no text: an empty (0, d) matrix and no encoder call
    assert encoder.encode([]).shape == (0, 2) and len(fake.calls) == 2


def test_unit_vectors_from_the_encoder_are_kept_bit_for_bit():
    # sentence-transformers normalises in float32; dividing again by a norm of 1 +- 1 ulp
    # would change the last bits, which the semantic reward must not see
    row = np.array([[0.6, 0.8000001]], dtype=np.float32)

    class Unit:
        def encode(self, texts, **kwargs):
            return np.repeat(row, len(texts), axis=0)

    assert (SentenceEncoder(Unit())(["x"]) == row).all()


def test_pairs_cache_only_references():
    fake = CountingEncoder()
    encoder = SentenceEncoder("fake", encoder=fake, cache_size=1)
    scores = encoder.pairs(["a", "bb"], ["gold", "gold"])
    # predictions and the one new reference in a single call; clamped cosines
    assert fake.calls == [["a", "bb", "gold"]]
    assert all(0.0 <= s <= 1.0 for s in scores)
    encoder.pairs(["a"], ["gold"])
    assert fake.calls[-1] == ["a"] and list(encoder._cache) == ["gold"]
    # a new reference overflows the cache (cache_size=1): emptied, the new one kept
    encoder.pairs(["a"], ["other"])
    assert list(encoder._cache) == ["other"]


def test_a_full_cache_keeps_what_the_call_needs():
    fake = CountingEncoder()
    encoder = SentenceEncoder(fake, cache_size=2)
    encoder.encode(["a", "bb"])
    # "ccc" overflows the cache; "a", cached and needed by this call, stays
    rows = encoder.encode(["a", "ccc"])
    assert fake.calls[-1] == ["ccc"] and sorted(encoder._cache) == ["a", "ccc"]
    assert rows.shape == (2, 2)


def test_calling_it_is_one_uncached_call():
    fake = CountingEncoder()
    encoder = SentenceEncoder(fake)
    encoder(["a"]), encoder(["a"])
    assert fake.calls == [["a"], ["a"]] and encoder.encode_calls == 2
    assert encoder([]).shape == (0, 2)
