"""L-2, trajectory-level evaluation (MADS §3.5.2, SPEC §7.2): scoring core and `evaluate` module."""

from evaluators.l2.core import ConversationScore, L2Report, L2Step, score_l2, step_correct

__all__ = ["ConversationScore", "L2Report", "L2Step", "score_l2", "step_correct"]
