"""The LLM-judge hook of ATOD: our prompts and parsers for a `JudgeBackend`.

A judge is any `simulation.backends.JudgeBackend` (`complete(prompts: list[str]) ->
list[str]`, one answer per prompt, same order), e.g. a backend of `get_backend`; nothing
here needs one, since every caller has an offline default. Parsers never raise: an
unreadable answer is `None`, and callers then keep their offline decision. Of a yes/no
answer only the first word counts (`parse_judge_answer(..., first_word=True)`).

Example:
    >>> class AlwaysYes:
    ...     def complete(self, prompts):
    ...         return ["yes"] * len(prompts)
    >>> judge_same_goal(AlwaysYes(), [("book a hotel", "reserve a hotel room")])
    [True]
"""

from __future__ import annotations

import json
import re

from simulation.backends.judge import JudgeBackend, parse_judge_answer

STATUS_LABELS = ("open", "pending", "completed", "failed", "abandoned")
RELATIONS = ("link", "dependency", "none")


SAME_GOAL_PROMPT = """Decide whether two descriptions name the same user goal in a \
task-oriented dialogue (same task in the same domain; wording may differ).
Goal A: {a}
Goal B: {b}
Answer with one word: yes or no."""

STATUS_PROMPT = """Track one goal of a task-oriented dialogue through the latest exchange.
Goal: {goal}
Status before this turn: {status}
Latest turn ({speaker}): {utterance}
Statuses: open (asked for, nothing done yet), pending (the system is working on it or \
waits for details), completed (achieved or accepted), failed (cannot be done), abandoned \
(the user dropped it). Keep the status unless the turn clearly changes it.
Answer with JSON only: {{"status": "<one status>"}}"""

RELATION_PROMPT = """A new goal appeared in a task-oriented dialogue. For each earlier goal, \
say how the new goal relates to it: "dependency" (the new goal needs it done first), \
"link" (related but independent) or "none".
New goal: {new}
Earlier goals:
{earlier}
Answer with JSON only, one key per earlier goal id: {{"<id>": "link|dependency|none"}}"""


def _first_json_object(text: str) -> dict | None:
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def parse_status(text: str) -> str | None:
    """The status from `{"status": ...}` (or a bare status word), else None."""
    obj = _first_json_object(text or "")
    value = obj.get("status") if obj else (text or "").strip()
    value = str(value).strip().lower()
    return value if value in STATUS_LABELS else None


def parse_relations(text: str, ids: list[str]) -> dict[str, str]:
    """`{id: relation}` for the ids answered with a known relation (others are left out)."""
    obj = _first_json_object(text or "") or {}
    out = {}
    for goal_id in ids:
        value = str(obj.get(goal_id, "")).strip().lower()
        if value in RELATIONS:
            out[goal_id] = value
    return out


def judge_same_goal(judge: JudgeBackend, pairs: list[tuple[str, str]]) -> list[bool | None]:
    """Ask the judge, in one batch, whether each pair of descriptions is the same goal.

    Args:
        judge (`JudgeBackend`): The backend.
        pairs (`list[tuple[str, str]]`): `(description_a, description_b)` pairs.

    Returns:
        `list[bool | None]`: One verdict per pair; None where the answer was unreadable.
    """
    if not pairs:
        return []
    answers = judge.complete([SAME_GOAL_PROMPT.format(a=a, b=b) for a, b in pairs])
    return [parse_judge_answer(answer, first_word=True) for answer in answers]
