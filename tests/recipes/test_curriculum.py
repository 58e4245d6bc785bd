"""The curriculum keeps the prompts on which the starting policy's sampled rewards differ."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from datasets import Dataset

from mads_bench.training.curriculum import policy_reward_curriculum, weighted_rewards


class _Tokenizer:
    def batch_decode(self, rows, skip_special_tokens=True):
        return [" ".join(map(str, row)) for row in rows]


def _answer(completions, gold, **_):
    """1.0 when a completion's first token is the row's gold token, 0.5 for its second."""
    return [1.0 if c.split()[0] == g else 0.5 if c.split()[1] == g else 0.0
            for c, g in zip(completions, gold, strict=True)]  # fmt: skip


def _trainer():
    return SimpleNamespace(
        processing_class=_Tokenizer(), reward_funcs=[_answer], reward_weights=torch.tensor([2.0])
    )


def _replay(sampled, calls=None):
    """A rollout that answers the i-th repeat of prompt p with ``sampled[p][i]``."""

    def rollout(prompts, trainer):
        if calls is not None:
            calls.append(len(prompts))
        seen: dict[str, int] = {}
        rows = []
        for p in prompts:
            rows.append(sampled[p][seen.get(p, 0)])
            seen[p] = seen.get(p, 0) + 1
        return {"completion_ids": rows}

    return rollout


def test_rows_whose_samples_disagree_are_kept_most_spread_first() -> None:
    # row a: always right; b: always wrong; c: right, then half right; d: right once in three
    sampled = {"a": [[1, 0], [1, 0], [1, 0]], "b": [[9, 8]] * 3, "c": [[3, 0], [0, 3], [3, 0]],
               "d": [[4, 0], [7, 7], [7, 7]]}  # fmt: skip
    dataset = Dataset.from_dict({"prompt": list("abcd"), "gold": ["1", "2", "3", "4"]})
    calls: list[int] = []
    rollout = _replay(sampled, calls)
    kept, report = policy_reward_curriculum(
        _trainer(), rollout, dataset, candidates=4, samples=3, keep=1
    )
    assert kept["prompt"] == ["d"]  # spread 2.0 beats c's 1.0
    assert (report.candidates, report.kept, report.zero_spread_share) == (4, 1, 0.5)
    assert sum(calls) == 12
    every, _ = policy_reward_curriculum(_trainer(), rollout, dataset, candidates=4, samples=3)
    assert every["prompt"] == ["c", "d"]


def test_rows_can_be_ranked_by_one_reward() -> None:
    # the total (2 x _answer) spreads on both rows; the ranking reward only on row b
    def second_token_is_seven(completions, **_):
        return [None if c.split()[0] == "0" else float(c.split()[1] == "7") for c in completions]

    sampled = {"a": [[1, 0], [0, 1]], "b": [[2, 7], [9, 8]]}
    dataset = Dataset.from_dict({"prompt": ["a", "b"], "gold": ["1", "2"]})
    rollout = _replay(sampled)

    by_total, report = policy_reward_curriculum(
        _trainer(), rollout, dataset, candidates=2, samples=2
    )
    assert by_total["prompt"] == ["a", "b"] and report.ranked_by == "total"
    kept, report = policy_reward_curriculum(
        _trainer(), rollout, dataset, candidates=2, samples=2, ranking_reward=second_token_is_seven
    )
    # row a: a None (counted 0) and a 0.0 -> no spread; row b: 1.0 and 0.0
    assert kept["prompt"] == ["b"]
    assert (report.kept, report.zero_spread_share, report.ranked_by) == (
        1, 0.5, "second_token_is_seven",
    )  # fmt: skip
    assert report.mean_reward_kept == 1.0  # the weighted total of b's samples: 2.0 and 0.0


def test_no_spread_anywhere_is_an_error() -> None:
    dataset = Dataset.from_dict({"prompt": ["a"], "gold": ["1"]})

    def same(prompts, trainer):
        return {"completion_ids": [[1, 0]] * len(prompts)}

    with pytest.raises(ValueError, match="none of 1 probed"):
        policy_reward_curriculum(_trainer(), same, dataset, candidates=1, samples=2)
    with pytest.raises(ValueError, match=">= 2"):
        policy_reward_curriculum(_trainer(), same, dataset, candidates=1, samples=1)


def test_weighted_rewards_count_none_as_zero() -> None:
    def half(completions, **_):
        return [0.5, None]

    assert weighted_rewards([half, half], [1.0, 3.0], ["x", "y"]) == [2.0, 0.0]
