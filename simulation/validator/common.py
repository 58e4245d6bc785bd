"""Shared pieces of the validator checks: results, judge questions, the conversation context.

Every check returns a :class:`CheckResult`: ``passed``, specific ``reasons`` (naming the
turn and step), ``decided_by`` (``rules``, ``embedding`` or ``judge``) and, while a judge
may still be consulted, ``pending`` :class:`JudgeQuestion` s. A question carries the
offline decision made without a judge, so a run without one is complete, and a judge
answer replaces exactly that decision (:func:`resolve`).

:class:`Context` is the parsed view of one trajectory the checks share: its scenario,
domain tools, Pre-Act steps grouped by turn, and the evidence available before any message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Literal

from mads_bench.catalog import Domain
from mads_bench.data_model import Message, Scenario, ToolSpec, Trajectory
from mads_bench.pre_act import ParsedStep, PreActParseError, PreActStep, parse_step
from simulation.backends.judge import parse_judge_answer
from simulation.validator.values import Evidence

DecidedBy = Literal["rules", "embedding", "judge"]
CHECK_NAMES = ("syntax", "faithfulness", "role_confusion", "task_success")
DONE_TOKEN = "[DONE]"


@dataclass
class JudgeQuestion:
    """A yes/no question for the judge about something rules could not settle.

    Attributes:
        prompt: the full judge prompt (asks for ``YES`` or ``NO`` first).
        fail_on: the answer (``"yes"``/``"no"``) that means the check fails.
        reason: the failure reason recorded if the judge (or the fallback) says it fails.
        offline_fails: the offline (rules/embedding) decision used without a judge.
        offline_by: what made the offline decision.
        part: the part of the check a failure belongs to (task success: ``state``, ``told``).
    """

    prompt: str
    fail_on: Literal["yes", "no"]
    reason: str
    offline_fails: bool
    offline_by: DecidedBy = "embedding"
    part: str | None = None


@dataclass
class CheckResult:
    """Outcome of one check on one trajectory (see the module docstring)."""

    reasons: list[str] = field(default_factory=list)
    pending: list[JudgeQuestion] = field(default_factory=list)
    failed_by: list[DecidedBy] = field(default_factory=list)
    consulted_by: set[DecidedBy] = field(default_factory=set)
    failed_parts: list[str | None] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no reason was recorded."""
        return not self.reasons

    @property
    def decided_by(self) -> DecidedBy:
        """What decided: for a failure, rules if any rule fired, else the first method that
        failed it; for a pass, the strongest method consulted (judge > embedding > rules)."""
        if self.reasons:
            return "rules" if "rules" in self.failed_by else self.failed_by[0]
        for method in ("judge", "embedding"):
            if method in self.consulted_by:
                return method
        return "rules"

    def fail(self, reason: str, by: DecidedBy = "rules", part: str | None = None) -> None:
        """Record a failure reason decided by ``by`` (non-rule reasons are tagged), of the
        check's ``part`` when it has parts."""
        self.reasons.append(reason if by == "rules" else f"[{by}] {reason}")
        self.failed_by.append(by)
        self.failed_parts.append(part)

    def part_passed(self, part: str) -> bool:
        """True when no failure of ``part`` was recorded."""
        return part not in self.failed_parts

    def reasons_of(self, part: str) -> list[str]:
        """The failure reasons of ``part``."""
        return [r for r, p in zip(self.reasons, self.failed_parts, strict=True) if p == part]

    def consulted(self, by: DecidedBy) -> None:
        """Note that a method took part in a decision that did not fail."""
        self.consulted_by.add(by)

    def to_dict(self) -> dict[str, object]:
        """The verdict entry ``{"passed", "reasons", "decided_by"}``."""
        return {
            "passed": self.passed,
            "reasons": list(self.reasons),
            "decided_by": self.decided_by,
        }


JUDGE_ANSWER_WORDS = {
    "yes": True,
    "true": True,
    "pass": True,
    "no": False,
    "false": False,
    "fail": False,
}
"""What the judge's first yes/no-like word means (True: ``"yes"``); read anywhere in its reply."""


def resolve(result: CheckResult, answers: list[str] | None) -> CheckResult:
    """Settle a result's pending questions with judge replies (or their offline decisions)."""
    pending, result.pending = result.pending, []
    for index, question in enumerate(pending):
        reply = answers[index] if answers is not None else None  # no judge: no answer
        answer = parse_judge_answer(reply, words=JUDGE_ANSWER_WORDS)
        if answer is None:
            if question.offline_fails:
                result.fail(question.reason, by=question.offline_by, part=question.part)
            else:
                result.consulted(question.offline_by)
        elif answer == (question.fail_on == "yes"):
            result.fail(question.reason, by="judge", part=question.part)
        else:
            result.consulted("judge")
    return result


@dataclass
class Step:
    """One assistant message with its parse: ``step`` when strict parsing succeeded."""

    position: int
    message: Message
    parsed: ParsedStep
    step: PreActStep | None
    error: PreActParseError | None

    @property
    def where(self) -> str:
        """``turn <t> step <s>`` for reasons."""
        return f"turn {self.message.turn_index} step {self.message.step_index}"


@dataclass
class Context:
    """Everything the checks read about one trajectory."""

    trajectory: Trajectory
    scenario: Scenario
    domain: Domain  # the scenario's loaded pack, handed down by whoever validates
    style: str = "pre_act"

    @cached_property
    def tools(self) -> dict[str, ToolSpec]:
        """Tools available in the scenario, by name."""
        return {t.name: t for t in self.domain.tools_for(self.scenario)}

    @property
    def today(self) -> date:
        """The domain's fixed current date."""
        return self.domain.manifest.today

    @property
    def messages(self) -> list[Message]:
        """The trajectory's messages."""
        return self.trajectory.messages

    @cached_property
    def steps(self) -> list[Step]:
        """Every assistant message, parsed (strict when possible, lenient always)."""
        out = []
        for position, message in enumerate(self.messages):
            if message.role != "assistant":
                continue
            try:
                step, error = parse_step(message.content, style=self.style), None
            except PreActParseError as err:
                step, error = None, err
            lenient = parse_step(message.content, strict=False, style=self.style)
            out.append(Step(position, message, lenient, step, error))
        return out

    @cached_property
    def _evidence(self) -> list[Evidence]:
        """Evidence of each message on its own (built once, unions are cheap)."""
        return [Evidence.of([m.content], today=self.today) for m in self.messages]

    def evidence_before(self, position: int, *, include_system: bool = False) -> Evidence:
        """What the user said and the tools returned before message ``position``."""
        evidence = Evidence.of([f"today {self.today.isoformat()}"], today=self.today)
        for message, own in zip(self.messages[:position], self._evidence, strict=False):
            if message.role in ("user", "tool") or (include_system and message.role == "system"):
                evidence = evidence.extended(own)
        return evidence

    def user_messages(self) -> list[tuple[int, Message]]:
        """``(position, message)`` of every user message."""
        return [(i, m) for i, m in enumerate(self.messages) if m.role == "user"]


def transcript(messages: list[Message], *, with_tools: bool = True, limit: int = 400) -> str:
    """A compact transcript for judge prompts (assistant steps shown as their action)."""
    lines = []
    for message in messages:
        if message.role == "system":
            continue
        text = message.content
        if message.role == "assistant":
            parsed = parse_step(text, strict=False)
            if parsed.action is None:
                text = "(malformed step)"
            elif parsed.action.type == "say":
                text = parsed.action.text or ""
            else:
                if not with_tools:
                    continue
                text = f"calls {parsed.action.name}({parsed.action.arguments})"
        elif message.role == "tool" and not with_tools:
            continue
        text = text if len(text) <= limit else text[:limit] + " ..."
        lines.append(f"[{message.role} turn {message.turn_index}] {text}")
    return "\n".join(lines)
