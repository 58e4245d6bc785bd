"""The dual goal store of the memory tracker (atod.md §5.1): symbolic table + FAISS index.

`GoalStore` keeps one `TrackedGoal` per goal (id, status, per-turn status history,
description, slots, dependency and link ids) and a FAISS `IndexFlatIP` over the goals'
L2-normalised embeddings, so the inner product is the cosine. Row `i` of the index is
goal `i` of the table; a goal's vector is set once, from the text that introduced it.

Example:
    >>> import numpy as np
    >>> store = GoalStore(dim=2)
    >>> goal = store.insert("book a hotel", "Hotels", "ReserveHotel", "Reserve a hotel",
    ...                     np.array([1.0, 0.0], dtype=np.float32), turn=1)
    >>> store.search(np.array([0.8, 0.6], dtype=np.float32), k=5, threshold=0.4)
    [(0, 0.8)]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

TERMINAL = ("completed", "failed", "abandoned")


@dataclass
class TrackedGoal:
    """One goal in the symbolic store.

    Attributes:
        id: `goal_<n>`, in order of insertion.
        domain / intent: The recognised SGD domain and intent.
        content: The user's words that introduced the goal.
        core_content: The intent's canonical description.
        status: Current status.
        history: `(turn, status)` transitions, first one `(0, "not_mentioned")`.
        slot_values: Slot cues collected from the clauses attributed to the goal.
        dependencies / links: Ids of prerequisite / related goals.
        first_turn / completion_turn / last_turn: Turn bookkeeping.
    """

    id: str
    domain: str
    intent: str
    content: str
    core_content: str
    status: str = "open"
    history: list[tuple[int, str]] = field(default_factory=list)
    slot_values: dict[str, str] = field(default_factory=dict)
    dependencies: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    first_turn: int = 0
    completion_turn: int | None = None
    last_turn: int = 0

    def set_status(self, status: str, turn: int) -> bool:
        """Move to `status` at `turn`; returns whether anything changed."""
        self.last_turn = turn
        if status == self.status:
            return False
        self.status = status
        if self.history and self.history[-1][0] == turn:
            self.history[-1] = (turn, status)  # two changes in one turn: keep the last
        else:
            self.history.append((turn, status))
        self.completion_turn = turn if status == "completed" else None
        return True


class GoalStore:
    """Symbolic goal table plus a FAISS inner-product index over normalised embeddings.

    Args:
        dim (`int`): Embedding size (384 for all-MiniLM-L6-v2).
    """

    def __init__(self, dim: int) -> None:
        import faiss

        self.dim = dim
        self.index = faiss.IndexFlatIP(dim)
        self.goals: list[TrackedGoal] = []

    def __len__(self) -> int:
        return len(self.goals)

    def insert(
        self,
        content: str,
        domain: str,
        intent: str,
        core_content: str,
        vector: np.ndarray,
        turn: int,
        status: str = "open",
    ) -> TrackedGoal:
        """Add a goal to both stores and return it."""
        goal = TrackedGoal(
            id=f"goal_{len(self.goals) + 1}",
            domain=domain,
            intent=intent,
            content=content,
            core_content=core_content,
            status=status,
            history=[(0, "not_mentioned"), (turn, status)],
            first_turn=turn,
            last_turn=turn,
        )
        self.goals.append(goal)
        self.index.add(_normalised(vector)[None, :])
        return goal

    def search(self, vector: np.ndarray, k: int, threshold: float) -> list[tuple[int, float]]:
        """Top-`k` goals by cosine, keeping those at or above `threshold`.

        Returns:
            `list[tuple[int, float]]`: `(goal index, cosine)`, best first.
        """
        if not self.goals:
            return []
        scores, ids = self.index.search(_normalised(vector)[None, :], min(k, len(self.goals)))
        return [
            (int(i), round(float(s), 6))
            for s, i in zip(scores[0], ids[0], strict=True)
            if i >= 0 and s >= threshold - 1e-6
        ]

    def active(self) -> list[TrackedGoal]:
        """Goals that are open or pending (the ones the audit looks at)."""
        return [g for g in self.goals if g.status not in TERMINAL]


def _normalised(vector: np.ndarray) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector
