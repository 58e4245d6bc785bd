"""Matching predicted goals to gold goals, in the `strict` and the `release` mode.

Every goal is embedded as ``"{core_content}: {content}"`` with all-MiniLM-L6-v2 (L2-normalised,
so the dot product is the cosine). Then:

- `strict`: candidate pairs have cosine >= `threshold` (default 0.40, the paper's existence
  threshold); an optional judge vetoes candidates it answers "no" to; the remaining pairs are
  assigned one-to-one by maximum total similarity (Hungarian algorithm).
- `release` (reproduces the leniency of the ATOD release's LLM matcher without an LLM): a
  pair matches when cosine >= `threshold`, or when cosine >= `cue_floor` (0.25) and both
  descriptions share a domain or an action cue word (general <-> specific). Matches are
  many-to-many; each predicted goal is paired with its most similar matching gold goal.

Example:
    >>> import numpy as np
    >>> sim = np.array([[0.9, 0.5], [0.45, 0.2]])
    >>> assign_one_to_one(sim, sim >= 0.4)  # 0.5 + 0.45 beats 0.9 alone
    {0: 1, 1: 0}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from evaluators.atod.catalog import action_cues, domain_cues
from evaluators.atod.judge import judge_same_goal
from mads_bench.atod_data import Goal
from mads_bench.embedding import SentenceEncoder
from simulation.backends.judge import JudgeBackend

Mode = Literal["release", "strict"]
EmbedFn = Callable[[list[str]], np.ndarray]

DEFAULT_THRESHOLD = 0.40
CUE_FLOOR = 0.25


def minilm_embedder(model: str = "minilm") -> SentenceEncoder:
    """An embedder returning L2-normalised MiniLM vectors (float32, one row per text), uncached:
    the one sentence encoder (:class:`mads_bench.embedding.SentenceEncoder`) at
    sentence-transformers' default batch size, as the matcher was scored with."""
    return SentenceEncoder(model, batch_size=32)


def goal_text(goal: Goal) -> str:
    """The text a goal is matched by."""
    return f"{goal.core_content}: {goal.content}"


def shares_cue(a: str, b: str) -> bool:
    """Whether two descriptions share a domain or an action cue word."""
    return bool(domain_cues(a) & domain_cues(b)) or bool(action_cues(a) & action_cues(b))


def assign_one_to_one(similarity: np.ndarray, allowed: np.ndarray) -> dict[int, int]:
    """Maximum-similarity one-to-one assignment restricted to allowed pairs.

    Args:
        similarity (`np.ndarray`): `(n_pred, n_gold)` similarities.
        allowed (`np.ndarray`): Boolean mask of the same shape.

    Returns:
        `dict[int, int]`: Predicted index -> gold index.
    """
    from scipy.optimize import linear_sum_assignment

    if similarity.size == 0 or not allowed.any():
        return {}
    # Disallowed pairs cost more than any set of allowed ones, and are dropped afterwards.
    cost = np.where(allowed, -similarity, 1e6)
    rows, cols = linear_sum_assignment(cost)
    return {int(r): int(c) for r, c in zip(rows, cols, strict=True) if allowed[r, c]}


@dataclass
class GoalMatch:
    """The matching of one dialogue's predicted goals to its gold goals.

    Attributes:
        pairs: Predicted index -> gold index (one gold per predicted goal; in `strict` mode
            each gold index appears at most once).
        matched_gold: Gold indices matched by at least one predicted goal.
        similarity: The `(n_pred, n_gold)` cosine matrix.
        allowed: The `(n_pred, n_gold)` mask of pairs that count as the same goal (in
            `strict` mode: exactly the assigned pairs).
    """

    pairs: dict[int, int]
    matched_gold: set[int]
    similarity: np.ndarray = field(repr=False)
    allowed: np.ndarray = field(repr=False)


@dataclass
class GoalMatcher:
    """Matches predicted to gold goals (see the module docstring for the rule).

    Args:
        mode: `"strict"` or `"release"`.
        threshold: Cosine threshold for a candidate pair.
        embedder: Texts -> L2-normalised vectors; MiniLM when None (loaded on first use).
        judge: Optional `JudgeBackend` asked about every candidate pair (`strict` only).
    """

    mode: Mode = "strict"
    threshold: float = DEFAULT_THRESHOLD
    embedder: EmbedFn | None = None
    judge: JudgeBackend | None = None

    def match(self, pred: Sequence[Goal], gold: Sequence[Goal]) -> GoalMatch:
        """Match one dialogue's goals.

        Args:
            pred (`Sequence[Goal]`): Predicted goals.
            gold (`Sequence[Goal]`): Gold goals.

        Returns:
            `GoalMatch`: The pairs and the similarity matrix.
        """
        if self.mode not in ("strict", "release"):
            raise ValueError(f"unknown matching mode {self.mode!r}; use 'strict' or 'release'")
        if not pred or not gold:
            empty = np.zeros((len(pred), len(gold)), dtype=np.float32)
            return GoalMatch({}, set(), empty, empty.astype(bool))
        if self.embedder is None:
            self.embedder = minilm_embedder()
        p_text, g_text = [goal_text(g) for g in pred], [goal_text(g) for g in gold]
        vectors = self.embedder(p_text + g_text)
        sim = vectors[: len(pred)] @ vectors[len(pred) :].T
        allowed = sim >= self.threshold - 1e-6
        if self.mode == "release":
            cue = np.array([[shares_cue(a, b) for b in g_text] for a in p_text], dtype=bool)
            allowed |= cue & (sim >= CUE_FLOOR)
            pairs = {
                i: int(np.argmax(np.where(allowed[i], sim[i], -np.inf)))
                for i in range(len(pred))
                if allowed[i].any()
            }
            matched = {j for j in range(len(gold)) if allowed[:, j].any()}
            return GoalMatch(pairs, matched, sim, allowed)
        if self.judge is not None:
            candidates = list(zip(*np.nonzero(allowed), strict=True))
            verdicts = judge_same_goal(self.judge, [(p_text[i], g_text[j]) for i, j in candidates])
            for (i, j), verdict in zip(candidates, verdicts, strict=True):
                if verdict is False:
                    allowed[i, j] = False
        pairs = assign_one_to_one(sim, allowed)
        assigned = np.zeros_like(allowed)
        for i, j in pairs.items():
            assigned[i, j] = True
        return GoalMatch(pairs, set(pairs.values()), sim, assigned)
