"""S3: the optional focused single-criterion LLM judge (sage.md, S3).

The judge sees only the criterion text and its minimal evidence span, never the transcript,
and answers ``true`` / ``false`` / ``abstain``. The LLM itself is any object with a batched
``complete(prompts) -> completions`` method (``JudgeBackend``); the simulation backend
registry (``scripted``, ``transformers:<path>``, ``openai:<model>@<url>``) will provide those.

Example:
    >>> class Always:
    ...     def complete(self, prompts): return ["true" for _ in prompts]
    >>> parse_answer(Always().complete(["q"])[0])
    True
"""

from __future__ import annotations

import json
import re
from typing import Protocol

from evaluators.sage.records import Criterion, TurnRecord

JUDGE_MARGIN = 0.5  # S3 answers carry no calibrated confidence; ranked between S2 and S1

PROMPT = """You check one property of one turn of a task-oriented dialogue.
Answer with exactly one word: true, false or abstain (abstain if the evidence is not enough).

Question: {question}
Evidence:
{evidence}
User turn: {user}
Agent reply: {agent}
Answer:"""


class JudgeBackend(Protocol):
    """A batched text-completion backend (one completion per prompt, same order)."""

    def complete(self, prompts: list[str]) -> list[str]: ...


def parse_answer(text: str) -> bool | None:
    """Map a completion to True / False / None (abstain or unreadable)."""
    match = re.search(r"\b(true|false|abstain|yes|no)\b", text.strip().lower())
    if not match or match.group(1) == "abstain":
        return None
    return match.group(1) in ("true", "yes")


class FocusedJudge:
    """S3 stage over a `JudgeBackend`.

    Args:
        backend (`JudgeBackend`): The LLM.
        open_classes (`tuple[str, ...]`): Failure classes S3 may decide (the open-class set).
    """

    def __init__(self, backend: JudgeBackend, open_classes: tuple[str, ...] = ("UV", "IUV", "PC")):
        self.backend = backend
        self.open_classes = open_classes
        self.calls = 0

    def prompt(self, criterion: Criterion, record: TurnRecord) -> str:
        """The criterion-local prompt (no transcript beyond the turn itself)."""
        return PROMPT.format(
            question=criterion.text,
            evidence=json.dumps(criterion.evidence, ensure_ascii=False),
            user=record.user,
            agent=record.agent,
        )

    def verify(self, items: list[tuple[Criterion, TurnRecord]]) -> list[bool | None]:
        """Answer each criterion (None outside the open-class set or on abstain)."""
        asked = [i for i, (c, _) in enumerate(items) if c.failure_class in self.open_classes]
        answers: list[bool | None] = [None] * len(items)
        if not asked:
            return answers
        completions = self.backend.complete([self.prompt(*items[i]) for i in asked])
        if len(completions) != len(asked):
            raise ValueError(
                f"judge backend returned {len(completions)} completions for {len(asked)} prompts"
            )
        self.calls += len(asked)
        for i, text in zip(asked, completions, strict=True):
            answers[i] = parse_answer(text)
        return answers
