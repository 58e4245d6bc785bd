"""The weighted goal co-occurrence graph and its statistics (atod.md §4.1, Tables 12-13).

Nodes are goals (SGD service-intent pairs); an undirected edge joins two goals that occur in
the same sequence, weighted by the number of sequences in which they co-occur. Density is
`2E / (N (N - 1))` and the average degree `2E / N`, as in Table 13 (52 nodes, 396 edges,
density 0.2986, average degree 15.23 on the full SGD train split).

Example:
    >>> from simulation.atod_generation.sequences import GoalKey, GoalSequence
    >>> a, b, c = GoalKey("A_1", "X"), GoalKey("B_1", "Y"), GoalKey("C_1", "Z")
    >>> graph = CooccurrenceGraph.build([GoalSequence("d1", (a, b)), GoalSequence("d2", (a, b, c))])
    >>> graph.weight(a, b), graph.statistics().edges
    (2, 3)
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import asdict, dataclass

from simulation.atod_generation.sequences import GoalKey, GoalSequence

# The paper's figures on the full SGD train split (Tables 12-13), printed next to ours.
PAPER_STATISTICS = {
    "sequences": 10739,
    "average_length": 3.90,
    "min_length": 2,
    "max_length": 8,
    "domains": 16,
    "intents": 37,
    "nodes": 52,
    "edges": 396,
    "density": 0.2986,
    "average_degree": 15.23,
    "max_degree": 29,
    "min_degree": 2,
}


@dataclass(frozen=True)
class GraphStatistics:
    """Tables 12 (sequences) and 13 (graph) in one record."""

    sequences: int
    average_length: float
    min_length: int
    max_length: int
    domains: int
    intents: int
    nodes: int
    edges: int
    density: float
    average_degree: float
    max_degree: int
    min_degree: int
    components: int

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        return asdict(self)


class CooccurrenceGraph:
    """Undirected goal graph with co-occurrence counts as edge weights.

    Args:
        sequences (`list[GoalSequence]`): The sequences the graph was built from.
        weights (`dict[GoalKey, dict[GoalKey, int]]`): Symmetric adjacency with counts.
        frequency (`dict[GoalKey, int]`): Number of sequences each goal occurs in.
    """

    def __init__(
        self,
        sequences: list[GoalSequence],
        weights: dict[GoalKey, dict[GoalKey, int]],
        frequency: dict[GoalKey, int],
    ) -> None:
        self.sequences = sequences
        self.adjacency = weights
        self.frequency = frequency

    @classmethod
    def build(cls, sequences: list[GoalSequence]) -> CooccurrenceGraph:
        """Build the graph from goal sequences.

        Args:
            sequences (`list[GoalSequence]`): Goal sequences (repeats inside one count once).

        Returns:
            `CooccurrenceGraph`: The graph.
        """
        weights: dict[GoalKey, dict[GoalKey, int]] = defaultdict(lambda: defaultdict(int))
        frequency: dict[GoalKey, int] = defaultdict(int)
        for sequence in sequences:
            goals = sorted(set(sequence.goals))
            for goal in goals:
                frequency[goal] += 1
                weights[goal]  # every goal is a node, even one that co-occurs with nothing
            for a, b in itertools.combinations(goals, 2):
                weights[a][b] += 1
                weights[b][a] += 1
        frozen = {k: dict(sorted(v.items())) for k, v in sorted(weights.items())}
        return cls(list(sequences), frozen, dict(sorted(frequency.items())))

    @property
    def nodes(self) -> list[GoalKey]:
        """Goals, sorted."""
        return list(self.adjacency)

    def neighbours(self, goal: GoalKey) -> dict[GoalKey, int]:
        """Neighbours of a goal with their co-occurrence counts."""
        return self.adjacency.get(goal, {})

    def weight(self, a: GoalKey, b: GoalKey) -> int:
        """Co-occurrence count of two goals (0 when they never co-occur)."""
        return self.adjacency.get(a, {}).get(b, 0)

    def degree(self, goal: GoalKey) -> int:
        """Number of distinct neighbours."""
        return len(self.neighbours(goal))

    def edges(self) -> list[tuple[GoalKey, GoalKey, int]]:
        """Every edge once, `(a, b, weight)` with `a < b`."""
        return [(a, b, w) for a, nb in self.adjacency.items() for b, w in nb.items() if a < b]

    def components(self) -> list[set[GoalKey]]:
        """Connected components (largest first)."""
        seen: set[GoalKey] = set()
        parts = []
        for start in self.adjacency:
            if start in seen:
                continue
            part, stack = set(), [start]
            while stack:
                node = stack.pop()
                if node not in part:
                    part.add(node)
                    stack.extend(self.neighbours(node))
            seen |= part
            parts.append(part)
        return sorted(parts, key=len, reverse=True)

    def statistics(self) -> GraphStatistics:
        """Table 12 and Table 13 figures for this graph and its sequences."""
        lengths = [len(s.goals) for s in self.sequences] or [0]
        n, e = len(self.adjacency), len(self.edges())
        degrees = [self.degree(g) for g in self.adjacency] or [0]
        return GraphStatistics(
            sequences=len(self.sequences),
            average_length=round(sum(lengths) / max(len(self.sequences), 1), 4),
            min_length=min(lengths),
            max_length=max(lengths),
            domains=len({g.domain for g in self.adjacency}),
            intents=len({g.intent for g in self.adjacency}),
            nodes=n,
            edges=e,
            density=round(2 * e / (n * (n - 1)), 4) if n > 1 else 0.0,
            average_degree=round(2 * e / n, 4) if n else 0.0,
            max_degree=max(degrees),
            min_degree=min(degrees),
            components=len(self.components()),
        )


def render_statistics(stats: GraphStatistics, *, source: str = "") -> str:
    """Markdown table of our statistics next to the paper's (Tables 12-13).

    Args:
        stats (`GraphStatistics`): Our figures.
        source (`str`): What they were computed from (shown in the heading).

    Returns:
        `str`: The table.
    """
    ours = stats.to_dict()
    lines = [
        f"## Goal sequences and co-occurrence graph{f' ({source})' if source else ''}",
        "",
        "| statistic | ours | paper (full SGD train) |",
        "| --- | --- | --- |",
    ]
    for key, value in ours.items():
        paper = PAPER_STATISTICS.get(key, "-")
        lines.append(f"| {key.replace('_', ' ')} | {value} | {paper} |")
    return "\n".join(lines) + "\n"
