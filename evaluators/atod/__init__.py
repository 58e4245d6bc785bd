"""ATOD: goal-lifecycle metrics and the symbolic + vector memory tracker (atod.md §5-§6).

Public API:

- data: `load_dialogues`, `write_dialogues`, `strip_gold`, `Dialogue`, `Goal`, `Turn`,
  `Prediction` (no complexity label needed), `TrackerInput` (id and turns only)
- metrics: `dgcr`, `ntc`, `status_at`, `correlation`, `score_dialogues`, `render_markdown`
- matching: `GoalMatcher` (`strict` / `release`; a judge is a `simulation.backends.JudgeBackend`)
- judge metrics: `add_judge_metrics` (MRA, PE, turn relevance, coherence)
- baselines: `track_with_judge` (prompt-only, RAG)
"""

from evaluators.atod.baselines import track_with_judge
from evaluators.atod.judge_metrics import add_judge_metrics
from evaluators.atod.matching import GoalMatcher
from evaluators.atod.report import render_markdown, score_dialogues
from mads_bench.atod_data import (
    Dialogue,
    Goal,
    Prediction,
    TrackerInput,
    Turn,
    load_dialogues,
    strip_gold,
    write_dialogues,
)
from mads_bench.atod_lifecycle import correlation, dgcr, ntc, status_at

__all__ = [
    "add_judge_metrics",
    "track_with_judge",
    "Dialogue",
    "Goal",
    "GoalMatcher",
    "Prediction",
    "TrackerInput",
    "Turn",
    "correlation",
    "dgcr",
    "load_dialogues",
    "ntc",
    "render_markdown",
    "score_dialogues",
    "status_at",
    "strip_gold",
    "write_dialogues",
]
