"""Conversation-level GRPO rewards: what a whole simulated conversation got done.

In ``rollout: conversation`` mode (``recipes/grpo.py``) a completion is a whole conversation
the policy played as the assistant (``mads_bench.training.rollout``). Its decoded text is a
transcript, which no reward here reads: the rollout summarises each conversation once with
:func:`summarise_conversation` and TRL hands the summaries to every reward as the ``outcome``
column (one plain dict per completion). The rewards, each in a fixed range:

- ``task_success`` (1/0): the rubric's success (``simulation.validator.rubric``, the same
  grading as ``eval online``): the final state matches the gold replay, the user was told the
  outcome, the user ended the conversation. A conversation cut by the rollout's token or step
  budget did not end, so it gets 0.
- ``partial_credit`` ([0, 1]): the share of gold writes called with exact arguments (None on
  scenarios without gold writes and on impossible ones).
- ``gold_steps`` ([0, 1]): per-step verifiable reward where the scripted gold policy defines
  the next action. The scripted assistant is run in the shadow of the policy's conversation;
  while the policy has made exactly the shadow's moves, the shadow's state is the one it
  would have had itself, so its next action is the gold one. Each step scores the mean of
  action type, tool name and exact arguments (action type alone for a say), L-2 style:
  scoring stops after the first step that is not the gold move.
- ``sage_turns`` ([-1, 0]): minus the SAGE-Core failures per turn record (fabricated
  arguments, premature completion claims, ...), None when nothing was checkable.
- ``conversation_format`` ([0, 1]): the Pre-Act format reward averaged over the policy's
  steps (a plan is required on the first step of a turn).
- ``turn_cost`` ([-1, 0]): minus assistant steps / the rollout's step cap.

``task_success`` also logs the parts (state, told, ended) and the truncated share per step.

Example:
    >>> outcome = [{"success": True, "partial_credit": None, "steps": 3, "max_steps": 12}]
    >>> task_success_reward(["..."], outcome=outcome), turn_cost_reward(["..."], outcome=outcome)
    ([1.0], [-0.25])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evaluators.step_scoring import arguments_equal
from mads_bench.catalog import Domain, domain_of
from mads_bench.data_model import Scenario, Trajectory
from mads_bench.embedding import SentenceEncoder
from mads_bench.pre_act import Action, parse_step
from rewards.pre_act_format import format_score
from simulation.validator.rubric import grade_conversation

__all__ = [
    "CONVERSATION_REWARDS",
    "conversation_format_reward",
    "gold_step_score",
    "gold_steps_reward",
    "partial_credit_reward",
    "sage_turns_reward",
    "summarise_conversation",
    "task_success_reward",
    "turn_cost_reward",
]


def summarise_conversation(
    trajectory: Trajectory,
    scenario: Scenario,
    *,
    max_steps: int,
    policy_tokens: int = 0,
    embedder: SentenceEncoder | None = None,
    sage: bool = True,
    domain: Domain | None = None,
) -> dict[str, Any]:
    """Everything the conversation rewards read about one finished conversation.

    Args:
        trajectory (`Trajectory`): The conversation (``end_reason="truncated"`` when the
            rollout's budget ran out).
        scenario (`Scenario`): The scenario it was played from.
        max_steps (`int`): The rollout's assistant-step cap (for ``turn_cost``).
        policy_tokens (`int`): Tokens the policy generated in it (logged, not rewarded).
        embedder (`SentenceEncoder`, *optional*): MiniLM for the decline rules of the success check.
        sage (`bool`): Also count SAGE-Core failures per turn (for ``sage_turns``).
        domain (`Domain`, *optional*): The scenario's loaded pack (from the catalog when omitted).

    Returns:
        `dict`: ``success``, ``state``, ``told``, ``ended``, ``truncated``, ``partial_credit``,
        ``gold_steps``, ``sage_failures_per_turn``, ``format``, counts and ``end_reason``.
    """
    counter = None
    if sage:
        from evaluators.sage.mads_turns import sage_failures_per_turn as counter
    domain = domain or domain_of(scenario)
    outcome = grade_conversation(
        trajectory, scenario, domain=domain, embedder=embedder, sage=counter
    )
    steps = [m for m in trajectory.messages if m.role == "assistant"]
    formats = [format_score(m.content, m.step_index) for m in steps]
    return {
        "scenario_id": scenario.id,
        "success": outcome.success,
        "state": outcome.state,
        "told": outcome.told,
        "ended": outcome.ended,
        "truncated": trajectory.end_reason == "truncated",
        "end_reason": trajectory.end_reason,
        "partial_credit": outcome.partial_credit,
        "gold_steps": gold_step_score(trajectory, scenario, domain),
        "sage_failures_per_turn": outcome.sage_failures_per_turn,
        "format": sum(formats) / len(formats) if formats else 0.0,
        "steps": outcome.steps,
        "max_steps": max_steps,
        "turns": outcome.turns,
        "tool_calls": outcome.tool_calls,
        "malformed_steps": outcome.malformed_steps,
        "policy_tokens": policy_tokens,
    }


def gold_step_score(trajectory: Trajectory, scenario: Scenario, domain: Domain) -> float | None:
    """Mean gold-move score over the policy's steps until its first move off the gold policy.

    The scripted assistant (the gold policy) reads the same conversation; see the module
    docstring. None for a conversation without assistant steps.
    """
    from simulation.agents.assistant import ScriptedAssistant

    shadow = ScriptedAssistant(scenario, seed=trajectory.seed, domain=domain)
    scores = []
    for index, message in enumerate(trajectory.messages):
        if message.role != "assistant":
            continue
        gold = parse_step(shadow.respond(trajectory.messages[:index]).content).action
        predicted = parse_step(message.content, strict=False).action
        score, exact = _move_score(predicted, gold)
        scores.append(score)
        if not exact:
            break
    return sum(scores) / len(scores) if scores else None


def _move_score(predicted: Action | None, gold: Action) -> tuple[float, bool]:
    if predicted is None or predicted.type != gold.type:
        return 0.0, False
    if gold.type == "say":
        return 1.0, True
    name = predicted.name == gold.name
    arguments = name and arguments_equal(predicted.arguments, gold.arguments)
    return (1.0 + name + arguments) / 3, arguments


def _outcomes(kwargs: dict[str, Any], count: int) -> list[dict[str, Any]]:
    outcomes = kwargs.get("outcome")
    if not isinstance(outcomes, list) or len(outcomes) != count:
        raise ValueError(
            "conversation rewards read the `outcome` column that a conversation rollout adds "
            "(`rollout: conversation` in the GRPO config); got "
            f"{'none' if outcomes is None else type(outcomes).__name__} for {count} completions"
        )
    return outcomes


def _metric(kwargs: dict[str, Any], name: str, values: list[float]) -> None:
    log = kwargs.get("log_metric")
    if callable(log) and values:
        log(name, sum(values) / len(values))


def task_success_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """1.0 when the conversation succeeded (state, told, ended; not truncated), else 0.0."""
    outcomes = _outcomes(kwargs, len(completions))
    for part in ("state", "told", "ended", "truncated"):
        _metric(kwargs, f"conversation/{part}", [float(o.get(part, False)) for o in outcomes])
    _metric(kwargs, "conversation/steps", [float(o.get("steps", 0)) for o in outcomes])
    return [1.0 if o.get("success") else 0.0 for o in outcomes]


def partial_credit_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """Share of gold writes called with exact arguments (None where there are none)."""
    return [o.get("partial_credit") for o in _outcomes(kwargs, len(completions))]


def gold_steps_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """Per-step agreement with the gold policy until the first move off it, in [0, 1]."""
    return [o.get("gold_steps") for o in _outcomes(kwargs, len(completions))]


def sage_turns_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """Minus the SAGE-Core failures per turn record, in [-1, 0] (None: nothing checkable)."""
    values = [o.get("sage_failures_per_turn") for o in _outcomes(kwargs, len(completions))]
    return [None if v is None else -float(v) for v in values]


def conversation_format_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """The Pre-Act format reward averaged over the conversation's steps, in [0, 1]."""
    return [float(o.get("format", 0.0)) for o in _outcomes(kwargs, len(completions))]


def turn_cost_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """Minus assistant steps over the rollout's step cap, in [-1, 0]."""
    outcomes = _outcomes(kwargs, len(completions))
    return [-min(1.0, o.get("steps", 0) / max(1, o.get("max_steps", 1))) for o in outcomes]


CONVERSATION_REWARDS: dict[str, Callable[..., list[float | None]]] = {
    "task_success": task_success_reward,
    "partial_credit": partial_credit_reward,
    "gold_steps": gold_steps_reward,
    "sage_turns": sage_turns_reward,
    "conversation_format": conversation_format_reward,
    "turn_cost": turn_cost_reward,
}
"""The conversation-mode rewards by registry name."""

for _reward in CONVERSATION_REWARDS.values():
    _reward.rollout = "conversation"  # what `recipes/grpo.py` checks against its mode
