"""`benchmarks.run grpo_gain`: the seeds it is told to train, and the gain pooled over them."""

from __future__ import annotations

import doctest

import pytest

from benchmarks import bench_grpo_gain
from benchmarks.bench_grpo_gain import _seeds, _split, reward_gain


def test_seeds_are_the_configs_or_distinct_integers() -> None:
    assert _seeds(None) == [None]
    assert _seeds("3") == [3]
    assert _seeds("0, 1,2") == [0, 1, 2]
    for bad in ("", "x", "1,1", "-1", "0,,1"):
        with pytest.raises(SystemExit, match="MADS_BENCH_GRPO_SEED"):
            _seeds(bad)


def test_the_report_split_follows_the_selection_split_without_overlap() -> None:
    assert _split("selection", None) == (0, 16)
    assert _split("report", None) == (16, 32)  # starts where the selection split ends
    assert _split("report", "8") == (16, 8)
    with pytest.raises(SystemExit, match="MADS_BENCH_EVAL_SPLIT"):
        _split("test", None)
    for bad in ("0", "x", "-3"):
        with pytest.raises(SystemExit, match="MADS_BENCH_EVAL_CONVERSATIONS"):
            _split("report", bad)


def test_the_pooled_gain_averages_each_steps_reward_over_the_seeds_policies() -> None:
    # two conversations of two steps; SFT scores 0 everywhere (None counts 0)
    keys = [("a", 0, 0), ("a", 0, 1), ("b", 0, 0), ("b", 1, 0)]
    before = dict.fromkeys(keys, None)
    better = dict.fromkeys(keys, 1.0)
    worse = dict.fromkeys(keys, 0.0) | {("b", 1, 0): -1.0}
    assert reward_gain(before, better)["delta"] == 1.0
    pooled = reward_gain(before, better, worse)
    # per conversation: a (1 + 0)/2 = 0.5 on both steps, b (0.5 + 0)/2 = 0.25
    assert pooled["delta"] == pytest.approx(0.375)
    assert pooled["units"] == 2 and pooled["items"] == 4
    # a seed whose policy does no better than SFT pulls the pooled gain to zero
    assert reward_gain(before, dict.fromkeys(keys, 0.0))["delta"] == 0.0
    with pytest.raises(ValueError, match="no policy"):
        reward_gain(before)


def test_the_modules_examples_pass() -> None:
    assert doctest.testmod(bench_grpo_gain, report=False).failed == 0
