"""SAGE: state-grounded, abstention-aware turn evaluation (``../shared/papers/sage.md``).

Public API: build a ``WorkflowSpec`` (SGD ``schema.json`` or MADS tool specs), read
``TurnRecord`` JSONL, run ``SageEvaluator`` (SAGE-Core by default, ``SageConfig.llm(judge)``
for SAGE-LLM) and score verdicts with ``evaluators.sage.verdict_scoring``.
"""

from evaluators.sage.cascade import SageConfig, SageEvaluator, aggregate
from evaluators.sage.compiler import compile_turn
from evaluators.sage.grounding import (
    DEFAULT_ENCODER,
    DEFAULT_GATES,
    GATES,
    Gate,
    NLIGroundingVerifier,
    OfflineGroundingVerifier,
)
from evaluators.sage.judge import FocusedJudge
from evaluators.sage.records import (
    Criterion,
    CriterionResult,
    DialogueAct,
    HistoryItem,
    SageFileError,
    TurnLabel,
    TurnRecord,
    Verdict,
    read_jsonl,
    read_keyed,
    read_turns,
    write_jsonl,
)
from evaluators.sage.workflow import IntentSpec, ServiceSpec, SlotSpec, WorkflowSpec, mads_domain

__all__ = [
    "DEFAULT_ENCODER",
    "DEFAULT_GATES",
    "GATES",
    "Criterion",
    "CriterionResult",
    "DialogueAct",
    "FocusedJudge",
    "Gate",
    "HistoryItem",
    "IntentSpec",
    "NLIGroundingVerifier",
    "OfflineGroundingVerifier",
    "SageConfig",
    "SageEvaluator",
    "SageFileError",
    "ServiceSpec",
    "SlotSpec",
    "TurnLabel",
    "TurnRecord",
    "Verdict",
    "WorkflowSpec",
    "aggregate",
    "compile_turn",
    "mads_domain",
    "read_jsonl",
    "read_keyed",
    "read_turns",
    "write_jsonl",
]
