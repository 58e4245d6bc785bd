"""Train/test split by scenario: a held-out domain goes to test, the rest is stratified.

Rules (MADS §3.4, SPEC §4.3):

- the unit is the scenario: all conversations of a scenario land in the same split;
- scenarios of a held-out domain (default ``home_services``) are test only;
- the other scenarios are grouped by (domain, complexity); ``round(test_size * n)`` of them
  go to test, apportioned over the groups by largest remainder (ties by group name), and
  inside each group a seeded shuffle picks which ones.

The default ``test_size`` of 0.33 mirrors the paper's 106 train / 83 test conversations
(44% test): with one held-out domain of six, 1/6 + 0.33 * 5/6 = 0.44 of the scenarios are
test. Same scenarios + same seed -> same split, on any machine (string-seeded ``random``).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping

DEFAULT_TEST_SIZE = 0.33
DEFAULT_HELD_OUT = ("home_services",)
SPLITS = ("train", "test")


def split_scenarios(
    scenarios: Mapping[str, tuple[str, str]],
    *,
    test_size: float = DEFAULT_TEST_SIZE,
    held_out_domains: Iterable[str] = DEFAULT_HELD_OUT,
    seed: int = 0,
) -> dict[str, str]:
    """Assign every scenario to ``train`` or ``test``.

    Args:
        scenarios (`Mapping[str, tuple[str, str]]`): scenario id -> (domain, complexity).
        test_size (`float`): share of the non-held-out scenarios that go to test, in [0, 1].
        held_out_domains (`Iterable[str]`): domains whose scenarios are test only.
        seed (`int`): shuffle seed.

    Returns:
        `dict[str, str]`: scenario id -> split name.

    Example:
        >>> meta = {f"s{i}": ("banking", "normal") for i in range(6)}
        >>> meta["h"] = ("home_services", "normal")
        >>> split = split_scenarios(meta, test_size=0.5, seed=0)
        >>> split["h"], sorted(split.values()).count("test")
        ('test', 4)
    """
    if not 0.0 <= test_size <= 1.0:
        raise ValueError(f"test_size must be in [0, 1], got {test_size}")
    held_out = set(held_out_domains)
    assignment: dict[str, str] = {}
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for scenario_id, (domain, complexity) in sorted(scenarios.items()):
        if domain in held_out:
            assignment[scenario_id] = "test"
        else:
            groups[(domain, complexity)].append(scenario_id)
    quotas = _apportion({key: len(ids) for key, ids in groups.items()}, test_size)
    for key in sorted(groups):
        ids = list(groups[key])
        random.Random(f"{seed}:{key[0]}:{key[1]}").shuffle(ids)
        for position, scenario_id in enumerate(ids):
            assignment[scenario_id] = "test" if position < quotas[key] else "train"
    return assignment


def _apportion(sizes: dict[tuple[str, str], int], share: float) -> dict[tuple[str, str], int]:
    """Test quota per group: floors of ``share * size``, remainders to the largest fractions."""
    total = round(share * sum(sizes.values()))
    quotas = {key: math.floor(share * size) for key, size in sizes.items()}
    leftover = total - sum(quotas.values())
    by_fraction = sorted(sizes, key=lambda key: (-(share * sizes[key] - quotas[key]), key))
    for key in by_fraction[: max(leftover, 0)]:
        quotas[key] += 1
    return quotas


def scenario_table(rows: Iterable[tuple[str, str, str]]) -> dict[str, tuple[str, str]]:
    """Scenario id -> (domain, complexity) from (scenario_id, domain, complexity) rows.

    Raises:
        `ValueError`: one scenario id seen with two different domains or complexities.
    """
    table: dict[str, tuple[str, str]] = {}
    for scenario_id, domain, complexity in rows:
        known = table.setdefault(scenario_id, (domain, complexity))
        if known != (domain, complexity):
            raise ValueError(
                f"scenario {scenario_id!r} appears as {known} and as {(domain, complexity)}"
            )
    return table
