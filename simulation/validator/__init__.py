"""The MADS validator (MADS §3.1, SPEC §5): syntax, faithfulness, role confusion, task success.

One module per check, the aggregate, and the rubric (:mod:`.rubric`: the one graded outcome
of a finished conversation that the verdict's task-success parts, ``eval online`` and the
conversation rewards all read):

| module | check | decided by |
| --- | --- | --- |
| :mod:`.syntax` | Pre-Act structure, one say per turn, tool calls vs schemas | rules |
| :mod:`.faithfulness` | arguments grounded; say facts backed by results | rules (+judge) |
| :mod:`.role_confusion` | the user breaking character | rules, MiniLM (+judge) |
| :mod:`.task_success` | final state vs gold replay; declines | rules, MiniLM (+judge) |

``validate_trajectory(trajectory, scenario, judge=None) -> verdict dict`` and the streaming
``validate_trajectories``; ``mads-bench validate`` is the command line.

Example:
    >>> from mads_bench.catalog import load_domain
    >>> from simulation.environment import simulate
    >>> scenario = load_domain("mock").scenarios[1]
    >>> validate_trajectory(simulate(scenario), scenario, embedder=NO_EMBEDDINGS)["passed"]
    True
"""

from simulation.validator.aggregate import (
    NO_EMBEDDINGS,
    validate_trajectories,
    validate_trajectory,
)
from simulation.validator.common import CHECK_NAMES, CheckResult, JudgeQuestion
from simulation.validator.rubric import ConversationOutcome, grade_conversation

__all__ = [
    "CHECK_NAMES",
    "NO_EMBEDDINGS",
    "CheckResult",
    "ConversationOutcome",
    "JudgeQuestion",
    "grade_conversation",
    "validate_trajectories",
    "validate_trajectory",
]
