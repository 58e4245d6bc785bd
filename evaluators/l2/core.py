"""L-2 scoring core: stop-on-first-error success over whole conversations (SPEC §7.2).

Steps are grouped by ``conversation_id`` and kept in the order given (the caller sorts by
turn and step). A step is correct when the predicted action type equals gold's and, for tool
steps, the tool name matches gold's case-insensitively within ``max_edit_distance`` edits
(default 1; arguments are not checked, as in the paper). Scoring stops at the first incorrect
step: ``attempted`` is that step's index + 1 (or every step when none is wrong), ``correct``
is the number of correct steps before it, and the conversation score is
``correct / attempted``; so a first error at index ``k`` scores ``k / (k + 1)`` and an error
on the first step scores 0. The reported figure is the mean conversation score (each
conversation weighs the same, whatever its length), overall, by domain and by complexity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from evaluators.report import Prediction, as_action, group_by, markdown_table, mean
from evaluators.step_scoring import GoldAction, tool_names_match
from mads_bench.pre_act import Action

L2_COLUMNS = ("n_conversations", "n_steps", "success_rate", "fully_correct_rate")


@dataclass(frozen=True)
class L2Step:
    """One assistant step of a conversation: the prediction, its gold action, metadata."""

    conversation_id: str
    prediction: Prediction
    gold: GoldAction
    domain: str | None = None
    complexity: str | None = None


@dataclass(frozen=True)
class ConversationScore:
    """Stop-on-first-error result of one conversation."""

    conversation_id: str
    n_steps: int
    attempted: int
    correct: int
    first_error: int | None
    domain: str | None
    complexity: str | None

    @property
    def score(self) -> float:
        """``correct / attempted``."""
        return self.correct / self.attempted


def step_correct(action: Action | None, gold: GoldAction, max_edit_distance: int = 1) -> bool:
    """L-2's step check: same action type and, for tools, a matching tool name.

    Example:
        >>> gold = GoldAction.from_columns("tool", "get_order", "{}")
        >>> step_correct(Action.tool("GET_ORDERS", {"x": 1}), gold), step_correct(None, gold)
        (True, False)
    """
    if action is None or action.type != gold.type:
        return False
    return gold.type == "say" or tool_names_match(action.name, gold.tool_name, max_edit_distance)


def _score_conversation(
    conversation_id: str, steps: list[L2Step], max_edit_distance: int
) -> ConversationScore:
    for name in ("domain", "complexity"):
        values = {getattr(s, name) for s in steps} - {None}
        if len(values) > 1:
            raise ValueError(f"conversation {conversation_id!r} has several {name}s: {values}")
    first_error = next(
        (
            i
            for i, s in enumerate(steps)
            if not step_correct(as_action(s.prediction), s.gold, max_edit_distance)
        ),
        None,
    )
    attempted = len(steps) if first_error is None else first_error + 1
    return ConversationScore(
        conversation_id=conversation_id,
        n_steps=len(steps),
        attempted=attempted,
        correct=len(steps) if first_error is None else first_error,
        first_error=first_error,
        domain=next((s.domain for s in steps if s.domain is not None), None),
        complexity=next((s.complexity for s in steps if s.complexity is not None), None),
    )


def _summary(conversations: list[ConversationScore]) -> dict[str, Any]:
    return {
        "n_conversations": len(conversations),
        "n_steps": sum(c.n_steps for c in conversations),
        "success_rate": mean([c.score for c in conversations]),
        "fully_correct_rate": mean([float(c.first_error is None) for c in conversations]),
    }


@dataclass
class L2Report:
    """L-2 figures: per conversation, overall, by domain and by complexity."""

    conversations: list[ConversationScore]
    overall: dict[str, Any]
    by_domain: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_complexity: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (conversations with their scores)."""
        return {
            "overall": self.overall,
            "by_domain": self.by_domain,
            "by_complexity": self.by_complexity,
            "conversations": [{**asdict(c), "score": c.score} for c in self.conversations],
        }

    def to_markdown(self) -> str:
        """Markdown table: overall, by domain, by complexity."""
        rows = {"overall": self.overall}
        rows.update({f"domain: {k}": v for k, v in self.by_domain.items()})
        rows.update({f"complexity: {k}": v for k, v in self.by_complexity.items()})
        return "## L-2 (trajectory level)\n\n" + markdown_table(rows, L2_COLUMNS, "group")


def score_l2(steps: Sequence[L2Step], *, max_edit_distance: int = 1) -> L2Report:
    """Score conversations with the stop-on-first-error rule (see the module docstring).

    Args:
        steps (`Sequence[L2Step]`): Every step of every conversation, in conversation order.
        max_edit_distance (`int`): Edits tolerated between tool names after case folding.

    Returns:
        `L2Report`: ``overall["success_rate"]`` is the mean conversation score (None when there
        are no steps).

    Example:
        >>> say, tool = GoldAction("say", say="ok"), GoldAction("tool", "get_order", {})
        >>> ok_say, ok_tool = Action.say("fine"), Action.tool("get_order")
        >>> report = score_l2([
        ...     L2Step("a", ok_tool, tool), L2Step("a", ok_say, say),  # all correct: 1.0
        ...     L2Step("b", ok_tool, tool), L2Step("b", ok_tool, say),  # error at 1: 1/2
        ...     L2Step("b", ok_say, say)])
        >>> [c.score for c in report.conversations], report.overall["success_rate"]
        ([1.0, 0.5], 0.75)
    """
    conversations = [
        _score_conversation(cid, group, max_edit_distance)
        for cid, group in group_by(steps, lambda s: s.conversation_id).items()
    ]
    return L2Report(
        conversations=conversations,
        overall=_summary(conversations),
        by_domain={k: _summary(v) for k, v in group_by(conversations, lambda c: c.domain).items()},
        by_complexity={
            k: _summary(v) for k, v in group_by(conversations, lambda c: c.complexity).items()
        },
    )
