"""Task-success check (MADS §3.1): was the user's goal reached, or an impossible one declined well?

The expected outcome comes from the scenario's gold workflow, replayed through a fresh
:class:`~simulation.tool_backend.ToolBackend` with the trajectory's seed (so the same
execution adversities fire) while retrying transient failures (``timeout``,
``backend_error``), as a competent assistant would. Rules compare the trajectory's
``final_state`` with that expected state, record by record (:mod:`~.state`):

- an expected change that is missing, or an unexpected change (a forbidden or extra
  write), fails;
- a changed field whose value differs from the expected one fails when either value is a
  hard-constraint value, or when the expected value is no soft preference (a status the
  user never asked to change); otherwise it is a relaxed soft preference: it passes when
  the user agreed to the write, and the judge decides when one is given.

Every fact of the scenario's ``must_say`` (τ²-bench's ``communicate_info``) must appear in one
of the assistant's replies, numbers compared by value (``1,200`` = ``1200.0``).

When the goal cannot be reached — the scenario is ``impossible`` (no write may change the
state, whatever the backend allows), a gold write was refused by a business rule, or a rule
refused a gold lookup (the replay stops there: nothing after it can happen) — the
last ``say`` must explain and offer alternatives without claiming success: decline and
alternative cues decide by rule; otherwise its MiniLM cosine to the scenario's
``fallback_behavior`` (or the refusal messages) decides (``EXPLAIN_MIN`` +- ``BAND``, the
judge inside the band). A conversation that ended in a loop or an error fails. With a
judge, a conversation the rules pass is finally judged against the ``success_criteria``.
"""

from __future__ import annotations

from mads_bench.embedding import SentenceEncoder
from mads_bench.text import normalise
from simulation.agents.text import declines_with_alternatives, is_affirmative
from simulation.validator.common import CheckResult, Context, JudgeQuestion, transcript
from simulation.validator.faithfulness import (
    _COMPLETION_CLAIM,
    premature_claim,
    unsupported_facts,
)
from simulation.validator.outcome_facts import outcome_facts, untold
from simulation.validator.state import GoldReplay, StateComparison, compare_states, replay_gold

TASK_PARTS = ("state", "told", "ended")
"""The parts of task success; every failure of the check names one."""
EXPLAIN_MIN = 0.55
BAND = 0.1


def _last_say(context: Context) -> tuple[str, str] | None:
    for step in reversed(context.steps):
        if step.parsed.action is not None and step.parsed.action.type == "say":
            return step.where, step.parsed.action.text or ""
    return None


def user_agreed_before_write(context: Context) -> bool:
    """Whether an assistant question got a yes from the user before the first successful write."""
    asked = False
    for message in context.messages:
        if message.role == "assistant" and message.tool_call is None and "?" in message.content:
            asked = True
        elif message.role == "user" and asked and is_affirmative(message.content):
            return True
        elif message.tool_result is not None and message.tool_result.ok:
            tool = context.tools.get(message.tool_result.name)
            if tool is not None and tool.kind == "write":
                return False
    return False


class TaskSuccessChecker:
    """Task-success rules with an embedding fallback for the decline explanation.

    Args:
        embedder: shared :class:`~simulation.validator.embedding.SentenceEncoder`.
    """

    def __init__(self, embedder: SentenceEncoder | None = None) -> None:
        self.embedder = embedder or SentenceEncoder()

    def check(
        self, context: Context, *, judged: bool = False, replay: GoldReplay | None = None
    ) -> CheckResult:
        """Check one trajectory; ``judged`` adds the success-criteria question for a judge;
        ``replay`` is the gold replay when the caller already made it.

        Every failure names its part (:data:`TASK_PARTS`): ``state``, ``told`` or ``ended``,
        which the rubric reads (:mod:`.rubric`)."""
        result = CheckResult()
        trajectory, scenario = context.trajectory, context.scenario
        if trajectory.end_reason != "done":
            result.fail(
                f"conversation: not_ended: the run ended with {trajectory.end_reason!r}, not "
                "the user's [DONE]",
                part="ended",
            )
        replay = replay or replay_gold(context)
        blocked = scenario.impossible or replay.blocked
        if trajectory.final_state is None:
            result.fail(
                "conversation: no_final_state: the trajectory has no final backend state",
                part="state",
            )
        else:
            comparison = compare_states(context, replay, forbid_all=scenario.impossible)
            self._judge_state(context, comparison, result)
        if blocked:
            self._check_decline(context, replay.refusals, result)
        self._check_told(context, replay, blocked, result)
        if judged and result.passed:
            result.pending.append(self._criteria_question(context, replay.refusals))
        return result

    def _judge_state(
        self, context: Context, comparison: StateComparison, result: CheckResult
    ) -> None:
        for problem in comparison.problems:
            result.fail(f"final state: {problem}", part="state")
        if not comparison.soft:
            return
        agreed = user_agreed_before_write(context)
        details = "; ".join(comparison.soft)
        reason = (
            f"final state: differs from the gold outcome outside the hard constraints: {details}"
        )
        if not agreed:
            reason += " (and the user never agreed to the write)"
        prompt = (
            f"A customer wanted: {context.scenario.objective}\nHard constraints (must hold): "
            f"{context.scenario.hard_constraints}\nSoft preferences (may be relaxed): "
            f"{context.scenario.soft_preferences}\nThe final records differ from the reference "
            f"outcome: {details}.\nConversation:\n{transcript(context.messages)}\n\nIs this "
            "difference acceptable (only soft preferences relaxed, with the customer's "
            "agreement)? Answer YES or NO first, then one sentence."
        )
        result.pending.append(JudgeQuestion(prompt, "no", reason, not agreed, "rules", "state"))

    @staticmethod
    def _check_told(
        context: Context, replay: GoldReplay, blocked: bool, result: CheckResult
    ) -> None:
        """The outcome facts were said (:mod:`~.outcome_facts`): written ones in any reply,
        derived ones after the last successful write; the last reply follows that write; and
        the replies that report the outcome make up no id, number, date or time."""
        steps = [
            step
            for step in context.steps
            if step.parsed.action is not None and step.parsed.action.type == "say"
        ]
        says = [(step.position, step.parsed.action.text or "") for step in steps]
        writes = [
            i
            for i, m in enumerate(context.messages)
            if m.tool_result is not None
            and m.tool_result.ok
            and (tool := context.tools.get(m.tool_result.name)) is not None
            and tool.kind == "write"
        ]
        if not blocked and not says:
            result.fail(
                "conversation: not_told: the assistant never spoke to the user", part="told"
            )
            return
        if writes and says and says[-1][0] < writes[-1]:
            result.fail(
                "conversation: not_told: no reply follows the last successful write "
                f"({context.messages[writes[-1]].tool_result.name})",
                part="told",
            )
        users = " ".join(m.content for m in context.messages if m.role == "user")
        facts = outcome_facts(context.scenario, replay, normalise(users, numbers="canonical"))
        after = writes[-1] if writes and not context.scenario.must_say else -1
        told = " ".join(text for position, text in says if position > after)
        for step in steps:  # a claim before the write, or a made-up figure, tells a falsehood
            if not blocked and (claim := premature_claim(context, step)) is not None:
                result.fail(
                    f"{step.where}: not_told: the reply claims '{claim}' before any write "
                    "succeeded",
                    part="told",
                )
            if step.position > after:
                for fact in unsupported_facts(context, step):
                    result.fail(
                        f"{step.where}: not_told: the reply says {fact}, which no tool result "
                        "or user message gave",
                        part="told",
                    )
        for fact in untold(facts, told):
            shown = " or ".join(repr(form) for form in fact.forms) or fact.cue.replace("_", " ")
            result.fail(
                f"conversation: not_told: the assistant never told the user {fact.label} ({shown})",
                part="told",
            )

    def _check_decline(self, context: Context, refusals: list[str], result: CheckResult) -> None:
        last = _last_say(context)
        if last is None:
            result.fail(
                "conversation: no_explanation: the assistant never spoke to the user", part="told"
            )
            return
        where, text = last
        explains = declines_with_alternatives(text, limits=True)
        claim = _COMPLETION_CLAIM.search(text)
        # "Sorry, flight AU233 has been cancelled by the airline; I can search other flights"
        # reports a fact while declining: only a claim without decline and alternative pretends
        if claim and not explains:
            result.fail(
                f"{where}: pretends_success: the goal cannot be reached but the last say claims "
                f"'{claim.group(0)}'",
                part="told",
            )
            return
        if explains:
            return
        reference = context.scenario.fallback_behavior or " ".join(refusals)
        similarity = self.embedder.cosine(text, reference)
        result.consulted("embedding")
        reason = (
            f"{where}: no_explanation: the goal cannot be reached and the last say does not "
            f"clearly explain it and offer alternatives (cosine {similarity:.2f} to the expected "
            "explanation)"
        )
        if similarity < EXPLAIN_MIN - BAND:
            result.fail(reason, by="embedding", part="told")
        elif similarity < EXPLAIN_MIN + BAND:
            prompt = (
                f"A customer wanted: {context.scenario.objective}\nThis cannot be done: "
                f"{reference}\nThe assistant's last message was:\n{text}\n\nDoes it explain why "
                "the request cannot be completed AND offer an alternative? Answer YES or NO "
                "first, then one sentence."
            )
            result.pending.append(
                JudgeQuestion(prompt, "no", reason, similarity < EXPLAIN_MIN, "embedding", "told")
            )

    @staticmethod
    def _criteria_question(context: Context, refusals: list[str]) -> JudgeQuestion:
        scenario = context.scenario
        criteria = "\n".join(f"- {c}" for c in scenario.success_criteria)
        blocked = (
            f"\nThis task cannot be completed as asked: {scenario.fallback_behavior}"
            if scenario.impossible
            else (f"\nA business rule refused part of it: {' '.join(refusals)}" if refusals else "")
        )
        prompt = (
            "You judge whether a customer-service assistant succeeded.\n"
            f"Objective: {scenario.objective}\nHard constraints (must hold): "
            f"{scenario.hard_constraints}\nSoft preferences (may be relaxed): "
            f"{scenario.soft_preferences}{blocked}\nSuccess criteria:\n{criteria}\n\n"
            f"Conversation:\n{transcript(context.messages)}\n\nAre ALL success criteria met? "
            "Answer YES or NO first, then one sentence."
        )
        reason = "conversation: criteria_not_met: the judge found unmet success criteria"
        return JudgeQuestion(prompt, "no", reason, False, "rules", "state")
