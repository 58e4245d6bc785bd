"""Stratified random walks: stratum sizes, goal counts, connectivity, determinism."""

from __future__ import annotations

import random

import pytest

from simulation.atod_generation.graph import CooccurrenceGraph
from simulation.atod_generation.sequences import GoalKey, GoalSequence
from simulation.atod_generation.walks import Stratum, allocate, random_walk, sample_walks

# a ring of 12 goals in 12 domains plus chords: connected, every node degree >= 2
NODES = [GoalKey(f"D{i}_1", f"Intent{i}") for i in range(12)]
SEQUENCES = [GoalSequence(f"r{i}", (NODES[i], NODES[(i + 1) % 12])) for i in range(12)]
SEQUENCES += [GoalSequence(f"c{i}", (NODES[i], NODES[(i + 5) % 12])) for i in range(0, 12, 3)]
STRATA = (Stratum("medium", 2, 4, 0.6), Stratum("complex", 7, 9, 0.4))


@pytest.fixture
def graph() -> CooccurrenceGraph:
    return CooccurrenceGraph.build(SEQUENCES)


def _connected(goals, graph) -> bool:
    # every goal after the first is adjacent to some earlier goal
    return all(any(graph.weight(g, h) for h in goals[:i]) for i, g in enumerate(goals) if i)


def test_allocate_is_exact():
    # largest remainder: 0.6 * 7 = 4.2 and 0.4 * 7 = 2.8 -> 4 and 3
    assert allocate(7, STRATA) == [4, 3]
    assert sum(allocate(101, STRATA)) == 101


def test_walks_respect_strata(graph):
    walks = sample_walks(graph, 20, seed=1, strata=STRATA)
    by = {s.name: [w for w in walks if w.complexity == s.name] for s in STRATA}
    # exactly 60 % / 40 % of the 20 walks
    assert (len(by["medium"]), len(by["complex"])) == (12, 8)
    # goal counts within each stratum's range, no repeated goal, connected induced subgraph
    assert all(2 <= len(w.goals) <= 4 for w in by["medium"])
    assert all(7 <= len(w.goals) <= 9 for w in by["complex"])
    assert all(len(set(w.goals)) == len(w.goals) for w in walks)
    assert all(_connected(w.goals, graph) for w in walks)
    # duplicate filtering: no two walks share a goal set
    assert len({frozenset(w.goals) for w in walks}) == 20


def test_same_seed_same_walks(graph):
    # same seed -> same walks; another seed -> different walks
    assert sample_walks(graph, 10, seed=4, strata=STRATA) == sample_walks(
        graph, 10, seed=4, strata=STRATA
    )
    assert sample_walks(graph, 10, seed=4, strata=STRATA) != sample_walks(
        graph, 10, seed=5, strata=STRATA
    )


def test_walk_follows_edges_from_a_leaf():
    # a path a-b-c: from a, the only way on is b, then c
    a, b, c = (GoalKey(f"S{i}_1", "X") for i in range(3))
    path = CooccurrenceGraph.build([GoalSequence("1", (a, b)), GoalSequence("2", (b, c))])
    for seed in range(5):
        walk = random_walk(path, 3, random.Random(seed))
        assert _connected(walk, path) and sorted(walk) == [a, b, c]


def test_too_small_graph_is_a_clear_error(graph):
    # 12 goals cannot give a walk of 20 distinct goals
    with pytest.raises(ValueError, match="stratum 'huge'"):
        sample_walks(graph, 1, strata=(Stratum("huge", 20, 20, 1.0),), max_attempts=3)
