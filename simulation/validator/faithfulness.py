"""Faithfulness check (MADS §3.1): tool arguments grounded, ``say`` consistent with tool results.

Tool arguments — every leaf value of every tool call must occur (normalised: numbers,
dates, times, phones, case) in what the user said or the tools returned BEFORE the call.
Flags are exempt (nobody writes ``true``), as are values of a schema ``enum`` (a closed
choice the schema already checks). Free text of three or more content words (a memo, an
issue description) may be paraphrased: it is grounded when at least ``FREE_TEXT_GROUNDED``
of its content words occur; below ``FREE_TEXT_UNGROUNDED`` it fails; in between the judge
decides, and without one the rule threshold ``FREE_TEXT_OFFLINE`` does.

Say steps — every checkable fact in a ``say`` must occur in the user messages, tool results,
system prompt or (impossible scenarios) the scenario's ``fallback_behavior``, which stands
for the policy the assistant is briefed on: identifiers (``ACC-0401``), dates, clock times,
numbers (integers up to ``SMALL_NUMBER`` are skipped: counts and ordinals), and statuses
claimed with "is/has been/status ..." (``cancelled``, ``confirmed``, ...). A completion claim
("has been booked", "I've cancelled", "here is what I did") needs a successful write call
before it; a failure claim ("could not", "found nothing") right after a successful write
call of the same turn contradicts it.

Example:
    >>> from simulation.validator.common import Context
    >>> from simulation.environment import simulate
    >>> from mads_bench.catalog import load_domain
    >>> domain = load_domain("mock")
    >>> scenario = domain.scenarios[1]
    >>> check_faithfulness(Context(simulate(scenario), scenario, domain)).reasons
    []
"""

from __future__ import annotations

import re
from typing import Any

from mads_bench.data_model import json_leaves
from mads_bench.text import normalise, split_sentences
from simulation.agents.text import declines
from simulation.validator.common import CheckResult, Context, JudgeQuestion, Step
from simulation.validator.values import (
    CLOCK,
    DAY_MONTH,
    IDENTIFIER,
    ISO_DATE,
    MONTH_DAY,
    Evidence,
    content_words,
    dates_in,
    numbers_in,
    times_in,
    value_found,
    word_overlap,
)

FREE_TEXT_GROUNDED = 0.8
FREE_TEXT_OFFLINE = 0.6
FREE_TEXT_UNGROUNDED = 0.4
SMALL_NUMBER = 10
SEARCH_WINDOW_MINUTES = 90
STATUSES = (
    "cancelled canceled confirmed scheduled completed pending approved denied rejected refunded "
    "shipped delivered locked unlocked blocked frozen active closed processing delayed accepted "
    "declined booked paid reserved open resolved failed expired suspended"
).split()
_STATUS_CLAIM = re.compile(
    r"\b(?:is|are|was|were|has been|have been|now|status(?: is)?)\s+(?:now\s+|already\s+)?"
    rf"({'|'.join(STATUSES)})\b",
    re.IGNORECASE,
)
_WRITE_VERBS = (
    "cancell?ed|booked|scheduled|sent|transferred|paid|opened|filed|submitted|placed|created|"
    "updated|changed|moved|rescheduled|added|locked|unlocked|accepted|declined|reserved|"
    "refunded|processed|issued|requested|removed|confirmed|completed|executed|finished|set up"
)
_COMPLETION_CLAIM = re.compile(
    rf"\b(?:has been|have been|was|were|is now|are now|successfully|i've|i have|i)\s+"
    rf"(?:now\s+|just\s+|successfully\s+)?(?:{_WRITE_VERBS})\b|\bhere is what i did\b|"
    r"\byou(?:'re| are) all set\b",
    re.IGNORECASE,
)


def completion_claim(text: str, reported: frozenset[str] = frozenset()) -> re.Match[str] | None:
    """The first completion claim of a say that is not a description: outside declining
    sentences ("HR-5003 was booked at a non-refundable rate and cannot be cancelled") and not a
    state an earlier tool result reports (``reported``: its lower-cased string values; "the
    flight has been cancelled" after a status lookup that returned ``cancelled``)."""
    for sentence in split_sentences(text, newlines=False):
        claim = _COMPLETION_CLAIM.search(sentence)
        if claim is None or declines(sentence):
            continue
        if claim.group(0).split()[-1].lower() not in reported:
            return claim
    return None


def _reported_values(context: Context, position: int) -> frozenset[str]:
    """Lower-cased string values of the tool results before ``position``."""
    return frozenset(
        str(leaf).lower()
        for message in context.messages[:position]
        if message.tool_result is not None and message.tool_result.ok
        for _, leaf in json_leaves(message.tool_result.content)
        if isinstance(leaf, str)
    )


_FAILURE_CLAIM = re.compile(
    r"\b(?:could not|couldn't|cannot|can't|was unable|unable to|found nothing|failed|"
    r"no results)\b",
    re.IGNORECASE,
)
_ORDINAL_OR_UNIT = re.compile(r"^\d+(st|nd|rd|th|am|pm|h|hrs?|min|s|x|k|gb|tb|mb|kg|lbs?|d)$", re.I)


def _check_arguments(
    context: Context, step: Step, result: CheckResult, seen: set[tuple[str, str]]
) -> None:
    action = step.parsed.action
    tool = context.tools.get(action.name)
    enums = tool.enum_values() if tool else set()
    evidence = context.evidence_before(step.position)
    counts = _list_counts(context, step.position)
    for path, value in json_leaves(action.arguments, action.name):
        if isinstance(value, str) and (value in enums or not value.strip()):
            continue  # an enum member, or an empty field (an address without a second line)
        if value_found(value, evidence):
            continue
        if (path, repr(value)) in seen:
            continue  # a repeated call with the same ungrounded value is reported once
        seen.add((path, repr(value)))
        if _implied_number(value, counts) or _search_window(path, value, evidence):
            continue
        shown = f"{path}={value!r}"
        if isinstance(value, str) and len(content_words(value)) >= 3:
            overlap = word_overlap(value, evidence)
            if overlap >= FREE_TEXT_GROUNDED:
                continue
            if overlap >= FREE_TEXT_UNGROUNDED:
                _ask_about_free_text(context, step, shown, overlap, result)
                continue
        result.fail(
            f"{step.where}: ungrounded_argument: {shown} does not occur in the user messages "
            "or earlier tool results"
        )


def _list_counts(context: Context, position: int) -> set[int]:
    """Counts a tool result shows: list lengths, and one more (the requester joins)."""
    counts = set()
    for message in context.messages[:position]:
        if message.tool_result is not None:
            for items in _lists(message.tool_result.content):
                counts |= {len(items), len(items) + 1}
    return counts


def _implied_number(value: Any, counts: set[int]) -> bool:
    """1 is implied by singular phrasing ("book me a flight"); counts come from results."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return value == 1 or (float(value).is_integer() and int(value) in counts)


def _search_window(path: str, value: Any, evidence: Evidence) -> bool:
    """An ``earliest_*``/``latest_*`` time within ``SEARCH_WINDOW_MINUTES`` of a stated time."""
    name = path.rsplit(".", 1)[-1]
    if not name.startswith(("earliest", "latest")) or not isinstance(value, str):
        return False
    if not re.fullmatch(r"\d{1,2}:\d{2}", value):
        return False

    def minutes(hhmm: str) -> int:
        hours, mins = hhmm.split(":")
        return int(hours) * 60 + int(mins)

    return any(abs(minutes(value) - minutes(t)) <= SEARCH_WINDOW_MINUTES for t in evidence.times)


def _ask_about_free_text(
    context: Context, step: Step, shown: str, overlap: float, result: CheckResult
) -> None:
    said = "\n".join(m.content for m in context.messages[: step.position] if m.role == "user")
    prompt = (
        "You check a customer-service assistant for hallucinated tool arguments.\n"
        f"What the user said so far:\n{said}\n\nThe assistant called a tool with {shown}.\n"
        "Is this argument a faithful rendering of what the user said (a paraphrase is fine, "
        "invented details are not)? Answer YES or NO first, then one sentence."
    )
    reason = (
        f"{step.where}: ungrounded_argument: {shown} paraphrases the user only partly "
        f"({overlap:.0%} of its words occur)"
    )
    result.pending.append(JudgeQuestion(prompt, "no", reason, overlap < FREE_TEXT_OFFLINE, "rules"))


def _say_evidence(context: Context, step: Step) -> Evidence:
    evidence = context.evidence_before(step.position, include_system=True)
    extra = [context.scenario.fallback_behavior or ""] if context.scenario.impossible else []
    extra += [str(fact) for fact in context.scenario.must_say]  # the author's facts to tell
    for message in context.messages[: step.position]:
        if message.tool_result is not None:  # "2 found": list lengths are facts of a result
            extra += [str(len(v)) for v in _lists(message.tool_result.content)]
    return evidence.extended(Evidence.of(extra, today=context.today))


def _lists(content: Any) -> list[list[Any]]:
    if isinstance(content, list):
        return [content, *[x for v in content for x in _lists(v)]]
    if isinstance(content, dict):
        return [x for v in content.values() for x in _lists(v)]
    return []


def say_facts(text: str, today: Any = None) -> dict[str, set[str]]:
    """The checkable facts of a say: identifiers, dates, times, numbers, claimed statuses.

    Example:
        >>> facts = say_facts("Order ORD-7 of $1,250.50 is now shipped, due 3 May at 2pm.")
        >>> sorted(facts["ids"]), sorted(facts["numbers"]), sorted(facts["statuses"])
        (['ORD-7'], ['1250.5'], ['shipped'])
    """
    ids = {t for t in IDENTIFIER.findall(text) if not _ORDINAL_OR_UNIT.match(t)}
    rest = text
    for pattern in (ISO_DATE, MONTH_DAY, DAY_MONTH):
        rest = pattern.sub(" ", rest)
    times = times_in(text)
    rest = CLOCK.sub(lambda m: " " if (m.group(2) or m.group(3)) else m.group(0), rest)
    for token in ids:
        rest = rest.replace(token, " ")
    numbers = {
        n
        for n in numbers_in(re.sub(r"\b[a-z]+\b", " ", rest, flags=re.I))
        if "." in n or float(n) > SMALL_NUMBER
    }
    statuses = {m.casefold() for m in _STATUS_CLAIM.findall(text)}
    return {
        "ids": ids,
        "dates": dates_in(text, today),
        "times": times,
        "numbers": numbers,
        "statuses": statuses,
    }


def unsupported_facts(context: Context, step: Step) -> list[str]:
    """The facts of a say step (:func:`say_facts`) that no user message, tool result or the
    system prompt gave before it: ``["identifier ORD-8", "number 139.5"]``."""
    text = step.parsed.action.text or "" if step.parsed.action is not None else ""
    evidence = _say_evidence(context, step)
    facts = say_facts(text, context.today)
    missing = [
        f"identifier {i}"
        for i in sorted(facts["ids"])
        if f" {normalise(i, punctuation='words')} " not in evidence.text
    ]
    missing += [f"date {d}" for d in sorted(facts["dates"] - evidence.dates)]
    missing += [f"time {t}" for t in sorted(facts["times"] - evidence.times)]
    missing += [f"number {n}" for n in sorted(facts["numbers"] - evidence.numbers)]
    missing += [f"status '{s}'" for s in sorted(facts["statuses"]) if f" {s} " not in evidence.text]
    return missing


def _check_say(context: Context, step: Step, result: CheckResult) -> None:
    text = step.parsed.action.text or ""
    for fact in unsupported_facts(context, step):
        result.fail(
            f"{step.where}: unsupported_say: {fact} is not in any tool result or user message"
        )
    failure = _FAILURE_CLAIM.search(text)
    last = _last_result_in_turn(context, step)
    tool = context.tools.get(last.name) if last is not None else None
    if failure and last is not None and last.ok and tool is not None and tool.kind == "write":
        result.fail(
            f"{step.where}: unsupported_failure_claim: the say claims '{failure.group(0)}' "
            f"right after {last.name} succeeded"
        )
    claim = premature_claim(context, step)
    if claim:
        result.fail(
            f"{step.where}: unsupported_completion: the say claims '{claim}' but no "
            "write tool call succeeded before it"
        )


def premature_claim(context: Context, step: Step) -> str | None:
    """The completion claim of a say step made before any write succeeded ("has been
    completed" before the booking), or None."""
    text = step.parsed.action.text or "" if step.parsed.action is not None else ""
    claim = completion_claim(text, _reported_values(context, step.position))
    if claim and not _write_succeeded_before(context, step.position):
        return claim.group(0)
    return None


def _last_result_in_turn(context: Context, step: Step) -> Any:
    for message in reversed(context.messages[: step.position]):
        if message.role == "user":
            return None
        if message.tool_result is not None:
            return message.tool_result
    return None


def _write_succeeded_before(context: Context, position: int) -> bool:
    for message in context.messages[:position]:
        outcome = message.tool_result
        if outcome is not None and outcome.ok:
            tool = context.tools.get(outcome.name)
            if tool is not None and tool.kind == "write":
                return True
    return False


def check_faithfulness(context: Context) -> CheckResult:
    """Run the faithfulness rules on one trajectory.

    Args:
        context (`Context`): the trajectory with its scenario.

    Returns:
        `CheckResult`: reasons name the turn/step and the value; partly-paraphrased free text
        is left as a pending judge question.
    """
    result, seen = CheckResult(), set()
    for step in context.steps:
        action = step.parsed.action
        if action is None:
            continue
        if action.type == "tool":
            _check_arguments(context, step, result, seen)
        else:
            _check_say(context, step, result)
    return result
