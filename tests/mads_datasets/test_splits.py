"""Tests of the scenario split: held-out domain, stratified quotas, determinism."""

from __future__ import annotations

from collections import Counter

import pytest

from mads_bench.datasets.splits import scenario_table, split_scenarios


def _meta(groups: dict[tuple[str, str], int]) -> dict[str, tuple[str, str]]:
    return {
        f"{domain}-{complexity}-{i}": (domain, complexity)
        for (domain, complexity), n in groups.items()
        for i in range(n)
    }


def _test_count(split: dict[str, str], meta: dict, domain: str, complexity: str) -> int:
    return sum(split[s] == "test" for s, key in meta.items() if key == (domain, complexity))


def test_held_out_domain_is_test_only_and_quotas_are_floors() -> None:
    meta = _meta({("bank", "normal"): 3, ("bank", "unhappy"): 4, ("cal", "normal"): 2})
    meta.update(_meta({("home_services", "normal"): 2}))
    split = split_scenarios(meta, test_size=0.5, seed=0)
    # both home_services scenarios are test
    assert [split[s] for s in meta if s.startswith("home_services")] == ["test", "test"]
    # 9 others, round(4.5) = 4 test: floors 1 (of 3), 2 (of 4), 1 (of 2), nothing left over
    assert _test_count(split, meta, "bank", "normal") == 1
    assert _test_count(split, meta, "bank", "unhappy") == 2
    assert _test_count(split, meta, "cal", "normal") == 1
    # 4 + 2 test, 5 train
    assert Counter(split.values()) == {"test": 6, "train": 5}


def test_largest_remainder_gets_the_leftover() -> None:
    meta = _meta({("a", "normal"): 3, ("a", "unhappy"): 2, ("b", "normal"): 1})
    split = split_scenarios(meta, test_size=0.25, held_out_domains=(), seed=3)
    # total round(1.5) = 2; floors 0/0/0; fractions .75, .50, .25 -> the first two get one each
    assert _test_count(split, meta, "a", "normal") == 1
    assert _test_count(split, meta, "a", "unhappy") == 1
    assert _test_count(split, meta, "b", "normal") == 0


def test_same_seed_same_split_other_seed_may_differ() -> None:
    meta = _meta({("bank", "unhappy"): 20})
    first = split_scenarios(meta, test_size=0.3, held_out_domains=(), seed=7)
    # same inputs and seed -> the same assignment
    assert split_scenarios(dict(reversed(list(meta.items()))), test_size=0.3, seed=7) == first
    # 6 of 20 in test whatever the seed, but which ones depends on the seed
    others = [split_scenarios(meta, test_size=0.3, seed=s) for s in range(1, 6)]
    assert all(Counter(o.values())["test"] == 6 for o in others)
    assert any(o != first for o in others)


def test_edge_sizes_and_bad_input() -> None:
    meta = _meta({("bank", "normal"): 4, ("home_services", "normal"): 1})
    # test_size 0: only the held-out domain is test
    assert Counter(split_scenarios(meta, test_size=0.0).values()) == {"train": 4, "test": 1}
    # test_size 1: everything is test
    assert set(split_scenarios(meta, test_size=1.0).values()) == {"test"}
    # out-of-range share is refused
    with pytest.raises(ValueError, match="test_size"):
        split_scenarios(meta, test_size=1.5)
    # one scenario id with two complexities is an error naming it
    with pytest.raises(ValueError, match="s1"):
        scenario_table([("s1", "bank", "normal"), ("s1", "bank", "unhappy")])
