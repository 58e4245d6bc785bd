"""L-1, turn-level evaluation (MADS §3.5.1, SPEC §7.1): scoring core and `evaluate` module."""

from evaluators.l1.core import L1_METRICS, L1Report, L1Step, score_l1

__all__ = ["L1_METRICS", "L1Report", "L1Step", "score_l1"]
