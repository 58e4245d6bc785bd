"""Online evaluation: the candidate assistant in live conversations, scored by what got done.

`core` aggregates the rubric's graded conversations (`simulation.validator.rubric`: task
success in three parts, partial credit) into success rates, pass^k and CIs;
`mads-bench eval online` runs the conversations (`simulation.simulate_run`) and scores them.
"""

from evaluators.online.core import (
    compare_reports,
    pass_hat_k,
    render_markdown,
    score_online,
)

__all__ = [
    "compare_reports",
    "pass_hat_k",
    "render_markdown",
    "score_online",
]
