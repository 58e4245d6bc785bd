"""Task-success check (MADS §3.1): was the user's goal reached, or an impossible one declined well?

The expected outcome comes from the scenario's gold workflow, replayed through a fresh
:class:`~simulation.tool_backend.ToolBackend` with the trajectory's seed (so the same
execution adversities fire) while retrying transient failures (``timeout``,
``backend_error``), as a competent assistant would. Rules compare the trajectory's
``final_state`` with that expected state, record by record (:mod:`~.state`):

- an expected change that is missing, or an unexpected change (a forbidden or extra
  write), fails;
- a changed field whose value differs from the expected one fails when either value is a
  hard-constraint value; otherwise it may be a relaxed soft preference: it passes when
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

import re

from mads_bench.text import normalise
from simulation.agents.text import value_in
from simulation.validator.common import CheckResult, Context, JudgeQuestion, transcript
from simulation.validator.embedding import Embedder
from simulation.validator.faithfulness import _COMPLETION_CLAIM
from simulation.validator.state import GoldReplay, StateComparison, compare_states, replay_gold

EXPLAIN_MIN = 0.55
BAND = 0.1
DECLINE_CUES = re.compile(
    r"\b(?:sorry|unfortunately|can't|cannot|can not|could not|couldn't|unable|not able|"
    r"not possible|no longer|only be|is not allowed|isn't allowed|refused)\b",
    re.IGNORECASE,
)
ALTERNATIVE_CUES = re.compile(
    r"\b(?:instead|alternative|alternatively|i can offer|i could offer|i can|you could|"
    r"i suggest|another|other option|or i can|would you like)\b",
    re.IGNORECASE,
)
_AGREES = re.compile(
    r"\b(?:yes|yep|yeah|sure|ok|okay|go ahead|confirm|please do|do it|sounds good|proceed)\b",
    re.IGNORECASE,
)


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
        elif message.role == "user" and asked and _AGREES.search(message.content):
            return True
        elif message.tool_result is not None and message.tool_result.ok:
            tool = context.tools.get(message.tool_result.name)
            if tool is not None and tool.kind == "write":
                return False
    return False


class TaskSuccessChecker:
    """Task-success rules with an embedding fallback for the decline explanation.

    Args:
        embedder: shared :class:`~simulation.validator.embedding.Embedder`.
    """

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder = embedder or Embedder()

    def check(
        self, context: Context, *, judged: bool = False, replay: GoldReplay | None = None
    ) -> CheckResult:
        """Check one trajectory; ``judged`` adds the success-criteria question for a judge;
        ``replay`` is the gold replay when the caller already made it."""
        result = CheckResult()
        trajectory, scenario = context.trajectory, context.scenario
        if trajectory.end_reason in ("loop", "error", "truncated"):
            result.fail(f"conversation: ended_badly: the run ended with {trajectory.end_reason!r}")
        replay = replay or replay_gold(context)
        blocked = scenario.impossible or bool(replay.refusals)
        if trajectory.final_state is None:
            result.fail("conversation: no_final_state: the trajectory has no final backend state")
        else:
            comparison = compare_states(context, replay, forbid_all=scenario.impossible)
            self._judge_state(context, comparison, result)
        if blocked:
            self._check_decline(context, replay.refusals, result)
        self._check_told(context, result)
        if judged and result.passed:
            result.pending.append(self._criteria_question(context, replay.refusals))
        return result

    def _judge_state(
        self, context: Context, comparison: StateComparison, result: CheckResult
    ) -> None:
        for problem in comparison.problems:
            result.fail(f"final state: {problem}")
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
        result.pending.append(JudgeQuestion(prompt, "no", reason, not agreed, "rules"))

    @staticmethod
    def _check_told(context: Context, result: CheckResult) -> None:
        if not context.scenario.must_say:
            return
        said = " ".join(
            normalise(step.parsed.action.text or "", numbers="canonical")
            for step in context.steps
            if step.parsed.action is not None and step.parsed.action.type == "say"
        )
        for fact in context.scenario.must_say:
            if not value_in(fact, said):
                result.fail(f"conversation: not_told: the assistant never told the user {fact!r}")

    def _check_decline(self, context: Context, refusals: list[str], result: CheckResult) -> None:
        last = _last_say(context)
        if last is None:
            result.fail("conversation: no_explanation: the assistant never spoke to the user")
            return
        where, text = last
        explains = bool(DECLINE_CUES.search(text) and ALTERNATIVE_CUES.search(text))
        claim = _COMPLETION_CLAIM.search(text)
        # "Sorry, flight AU233 has been cancelled by the airline; I can search other flights"
        # reports a fact while declining: only a claim without decline and alternative pretends
        if claim and not explains:
            result.fail(
                f"{where}: pretends_success: the goal cannot be reached but the last say claims "
                f"'{claim.group(0)}'"
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
            result.fail(reason, by="embedding")
        elif similarity < EXPLAIN_MIN + BAND:
            prompt = (
                f"A customer wanted: {context.scenario.objective}\nThis cannot be done: "
                f"{reference}\nThe assistant's last message was:\n{text}\n\nDoes it explain why "
                "the request cannot be completed AND offer an alternative? Answer YES or NO "
                "first, then one sentence."
            )
            result.pending.append(
                JudgeQuestion(prompt, "no", reason, similarity < EXPLAIN_MIN, "embedding")
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
        return JudgeQuestion(prompt, "no", reason, False, "rules")
