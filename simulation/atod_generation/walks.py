"""Stratified random walks over the co-occurrence graph (atod.md §4.1, Appendix A.3-A.4).

Strata are complexity classes with a goal-count range and a share of the sample (defaults:
65 % medium with 2-6 goals, 35 % complex with 7-10 goals; Table 14 gives medium 2-8 and
complex 7+, we keep the ranges apart so the stratum alone fixes the goal count). The number
of walks per stratum is fixed up front (largest-remainder rounding of the shares), so the mix
is exact; each walk draws its target length uniformly from its stratum's range.

A walk starts at a goal drawn uniformly (so rare goals get sampled too) and steps to an
unvisited neighbour with probability proportional to the co-occurrence count; when the
current goal has no unvisited neighbour it continues from the frontier of the whole visited
set, so the walk always induces a connected subgraph. Walks with a goal set already sampled
are redrawn (duplicate filtering). A walk therefore stays inside one connected component and
visits at most `walk_reach(graph)` goals; a stratum that needs more is refused up front.

Example:
    >>> import random
    >>> from simulation.atod_generation.graph import CooccurrenceGraph  # doctest: +SKIP
    >>> walks = sample_walks(graph, 10, seed=0)  # doctest: +SKIP
    >>> walks[0].complexity, len(walks[0].goals)  # doctest: +SKIP
    ('medium', 4)
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from simulation.atod_generation.errors import GenerationError
from simulation.atod_generation.graph import CooccurrenceGraph
from simulation.atod_generation.sequences import GoalKey


@dataclass(frozen=True)
class Stratum:
    """One complexity stratum: goal-count range and share of the sample."""

    name: str
    min_goals: int
    max_goals: int
    share: float


DEFAULT_STRATA = (Stratum("medium", 2, 6, 0.65), Stratum("complex", 7, 10, 0.35))


@dataclass(frozen=True)
class Walk:
    """A sampled goal set, in visiting order, with the stratum it was drawn for."""

    goals: tuple[GoalKey, ...]
    complexity: str


def allocate(n: int, strata: tuple[Stratum, ...]) -> list[int]:
    """Walks per stratum: the shares of `n`, rounded by largest remainder (sum is `n`).

    Example:
        >>> allocate(10, DEFAULT_STRATA)  # 6.5 and 3.5: the tie goes to the first stratum
        [7, 3]
        >>> allocate(100, DEFAULT_STRATA)
        [65, 35]
    """
    total = sum(s.share for s in strata)
    exact = [n * s.share / total for s in strata]
    counts = [int(x) for x in exact]
    order = sorted(range(len(strata)), key=lambda i: (counts[i] - exact[i], i))
    for i in order[: n - sum(counts)]:
        counts[i] += 1
    return counts


def walk_reach(graph: CooccurrenceGraph) -> int:
    """The most goals one walk can visit: distinct domain-intents of the largest component.

    Example:
        >>> from simulation.atod_generation.sequences import GoalSequence
        >>> a, b, c = GoalKey("A_1", "X"), GoalKey("A_2", "X"), GoalKey("B_1", "Y")
        >>> walk_reach(CooccurrenceGraph.build([GoalSequence("d", (a, b, c))]))
        2
    """
    parts = graph.components()
    return max((len({(g.domain, g.intent) for g in part}) for part in parts), default=0)


def random_walk(graph: CooccurrenceGraph, length: int, rng: random.Random) -> list[GoalKey]:
    """One weighted random walk visiting `length` goals of distinct domain-intents.

    Args:
        graph (`CooccurrenceGraph`): The graph.
        length (`int`): Number of distinct goals to visit.
        rng (`random.Random`): Source of randomness.

    Returns:
        `list[GoalKey]`: The goals in visiting order; consecutive goals need not be adjacent,
        but every goal is adjacent to an earlier one.
    """
    current = rng.choice(graph.nodes)
    visited = [current]
    while len(visited) < length:
        # One goal per domain-intent: two versions of a service would be the same request.
        taken = {(g.domain, g.intent) for g in visited}
        options = {
            g: w for g, w in graph.neighbours(current).items() if (g.domain, g.intent) not in taken
        }
        if not options:  # continue from the frontier of everything visited so far
            for goal in visited:
                for nb, w in graph.neighbours(goal).items():
                    if (nb.domain, nb.intent) not in taken:
                        options[nb] = options.get(nb, 0) + w
        if not options:
            break
        goals = sorted(options)
        current = rng.choices(goals, weights=[options[g] for g in goals])[0]
        visited.append(current)
    return visited


def sample_walks(
    graph: CooccurrenceGraph,
    n: int,
    *,
    seed: int = 0,
    strata: tuple[Stratum, ...] = DEFAULT_STRATA,
    max_attempts: int = 50,
) -> list[Walk]:
    """Sample `n` walks, stratified by complexity (see the module docstring).

    Args:
        graph (`CooccurrenceGraph`): The graph to walk on.
        n (`int`): Number of walks.
        seed (`int`): Seed; the same seed gives the same walks.
        strata (`tuple[Stratum, ...]`): Complexity strata.
        max_attempts (`int`): Redraws per walk before giving up on the length or uniqueness.

    Returns:
        `list[Walk]`: Walks in a seeded shuffled order of strata.

    Raises:
        `GenerationError` (a `ValueError`): When the graph is too small for a stratum's
            minimum goal count, or yields too few distinct goal sets.
    """
    counts = allocate(n, strata)
    reach = walk_reach(graph)
    for stratum, count in zip(strata, counts, strict=True):
        if count and reach < stratum.min_goals:
            raise GenerationError(
                f"stratum {stratum.name!r} needs walks of {stratum.min_goals} or more goals of "
                f"distinct intents, but the largest connected part of the co-occurrence graph "
                f"has {reach}"
            )
    rng = random.Random(f"walks:{seed}")
    labels = [s for s, k in zip(strata, counts, strict=True) for _ in range(k)]
    rng.shuffle(labels)
    seen: set[frozenset[GoalKey]] = set()
    walks: list[Walk] = []
    for stratum in labels:
        for _ in range(max_attempts):
            length = rng.randint(stratum.min_goals, stratum.max_goals)
            goals = random_walk(graph, length, rng)
            if len(goals) >= stratum.min_goals and frozenset(goals) not in seen:
                break
        else:
            found = sum(walk.complexity == stratum.name for walk in walks)
            raise GenerationError(
                f"could not sample a new walk of {stratum.min_goals}-{stratum.max_goals} goals "
                f"for stratum {stratum.name!r} in {max_attempts} attempts "
                f"({found} distinct so far; graph too small?)"
            )
        seen.add(frozenset(goals))
        walks.append(Walk(tuple(goals), stratum.name))
    return walks
