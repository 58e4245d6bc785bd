"""Online evaluation: the candidate assistant in live conversations, scored by what got done.

`core` holds the scoring (task success in three parts, pass^k, partial credit, CIs);
`mads-bench eval online` runs the conversations (`simulation.simulate_run`) and scores them.
"""

from evaluators.online.core import (
    OnlineOutcome,
    compare_reports,
    conversation_outcome,
    pass_hat_k,
    render_markdown,
    score_online,
)

__all__ = [
    "OnlineOutcome",
    "compare_reports",
    "conversation_outcome",
    "pass_hat_k",
    "render_markdown",
    "score_online",
]
