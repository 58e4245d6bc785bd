"""The rubric: the one typed outcome of a finished conversation.

:func:`grade_conversation` reads a trajectory once and returns a :class:`ConversationOutcome`:
the three parts of task success, partial credit, the counts of steps, turns, tool calls and
malformed steps, and (when a counter is given) the SAGE failures per turn. Every reader takes
it from here: the validator's task-success stage (the ``parts`` of its verdict), ``eval
online`` (``evaluators.online``) and the conversation rewards (``rewards.conversation``).

The parts are the task-success check's (:mod:`.task_success`) read as typed parts
(``CheckResult.part_passed``), never found by searching its reason strings:

1. **state** — the backend state at the end matches the scenario's gold workflow replayed on a
   fresh copy of the seed state (the validator's task-success rules, one implementation:
   :mod:`simulation.validator.state`). The replay runs with the conversation's seed, so the
   execution adversities the assistant met (a refused write, a timeout) are met again, and
   transient failures are retried as a competent assistant would. Records are compared by
   primary key after value normalisation, so ids the backend generates and timestamps it
   writes line up whenever the same calls were made; a goal revision is part of the gold
   workflow (re-rendered with the revised values); on an impossible scenario no write may
   change the state.
2. **told** — the user was told the outcome: for a blocked goal (impossible scenario or a
   business-rule refusal) the validator's decline rules (an explanation and an alternative,
   no success claim); otherwise the last ``say`` comes after the last successful write and
   every outcome fact was said (:mod:`simulation.validator.outcome_facts`: the scenario's
   ``must_say``, else what the gold workflow replayed on this seed gives: a write's
   confirmation, the values an information request asked for, that nothing was found).
   Never true merely because no tool ran.
3. **ended** — the user ended the conversation (``[DONE]``), not the turn cap, a loop or an
   error, or a rollout's token or step budget (``truncated``).

Example:
    >>> from mads_bench.catalog import load_domain
    >>> from simulation.environment import simulate
    >>> from simulation.validator.aggregate import NO_EMBEDDINGS
    >>> domain = load_domain("mock")
    >>> scenario = domain.scenarios[0]
    >>> outcome = grade_conversation(simulate(scenario), scenario, domain=domain,
    ...                              embedder=NO_EMBEDDINGS)
    >>> outcome.success, outcome.partial_credit, outcome.malformed_steps
    (True, 1.0, 0)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from mads_bench.catalog import Domain
from mads_bench.data_model import Scenario, Trajectory
from mads_bench.embedding import SentenceEncoder
from mads_bench.pre_act import canonical_json
from simulation.validator.common import CheckResult, Context, resolve
from simulation.validator.task_success import TASK_PARTS, TaskSuccessChecker

SageCounter = Callable[[Trajectory, Scenario, Domain], "float | None"]
"""SAGE-Core failures per turn record of a conversation (``evaluators.sage.mads_turns``), handed
the scenario's loaded pack."""


@dataclass
class ConversationOutcome:
    """What one finished conversation achieved (see the module docstring)."""

    scenario_id: str
    trial: int
    domain: str
    complexity: str
    behaviors: list[str]
    state: bool
    told: bool
    ended: bool
    partial_credit: float | None = None
    malformed_steps: int = 0
    steps: int = 0
    turns: int = 0
    tool_calls: int = 0
    sage_failures_per_turn: float | None = None
    reasons: list[str] = field(default_factory=list)

    @property
    def success(self) -> bool:
        """All three parts hold."""
        return self.state and self.told and self.ended

    @property
    def parts(self) -> dict[str, bool]:
        """Part -> held, in :data:`~.task_success.TASK_PARTS` order (the verdict's ``parts``)."""
        return {part: getattr(self, part) for part in TASK_PARTS}


def grade_conversation(
    trajectory: Trajectory,
    scenario: Scenario,
    *,
    domain: Domain,
    embedder: SentenceEncoder | None = None,
    sage: SageCounter | None = None,
    task: CheckResult | None = None,
) -> ConversationOutcome:
    """Grade one finished conversation.

    Args:
        trajectory (`Trajectory`): the conversation, with its ``final_state``.
        scenario (`Scenario`): the scenario it was played from.
        domain (`Domain`): the scenario's loaded pack.
        embedder (`SentenceEncoder`, *optional*): MiniLM for the decline explanation (default:
            load); unused when ``task`` is given.
        sage (`SageCounter`, *optional*): counts SAGE-Core failures per turn record; without
            it ``sage_failures_per_turn`` is None.
        task (`CheckResult`, *optional*): the task-success check already made and resolved
            (the validator's, with its judge's answers); without it the check runs here on
            rules and embeddings only.

    Returns:
        `ConversationOutcome`: the three parts, partial credit and the counts.
    """
    context = Context(trajectory, scenario, domain)
    if task is None:
        task = resolve(TaskSuccessChecker(embedder).check(context), None)
    assistant = [m for m in trajectory.messages if m.role == "assistant"]
    return ConversationOutcome(
        scenario_id=scenario.id,
        trial=_trial(trajectory.id),
        domain=scenario.domain,
        complexity=scenario.complexity,
        behaviors=sorted({b.kind for b in scenario.behaviors}),
        state=task.part_passed("state"),
        told=task.part_passed("told"),
        ended=task.part_passed("ended"),
        partial_credit=_partial_credit(trajectory, scenario, context),
        malformed_steps=sum(bool(m.parse_problems) for m in assistant),
        steps=len(assistant),
        turns=len({m.turn_index for m in trajectory.messages if m.role == "user"}),
        tool_calls=sum(m.tool_call is not None for m in assistant),
        sage_failures_per_turn=sage(trajectory, scenario, domain) if sage is not None else None,
        reasons=list(task.reasons),
    )


def _trial(trajectory_id: str) -> int:
    match = re.search(r"/r(\d+)/", trajectory_id)
    return int(match.group(1)) if match else 0


def _partial_credit(trajectory: Trajectory, scenario: Scenario, context: Context) -> float | None:
    """Gold writes called with exact arguments / gold writes (None without gold writes).

    A gold write a business rule refuses is still the right call, so a call counts whatever
    its result.
    """
    writes = [
        (g.name, canonical_json(g.arguments))
        for g in scenario.gold_workflow
        if (tool := context.tools.get(g.name)) is not None and tool.kind == "write"
    ]
    if not writes or scenario.impossible:
        return None
    called = {
        (m.tool_call.name, canonical_json(m.tool_call.arguments))
        for m in trajectory.messages
        if m.tool_call is not None
    }
    return sum(write in called for write in writes) / len(writes)
