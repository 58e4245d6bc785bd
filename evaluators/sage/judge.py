"""S3: the optional focused single-criterion LLM judge (sage.md, S3).

The judge sees only the criterion text and its minimal evidence span, never the transcript,
and answers ``true`` / ``false`` / ``abstain`` (`ANSWER_WORDS`). The LLM itself is any
`simulation.backends.JudgeBackend` (batched ``complete(prompts) -> completions``), e.g. a
backend of `simulation.backends.get_backend`.

Example:
    >>> from simulation.backends import parse_judge_answer
    >>> class Always:
    ...     def complete(self, prompts): return ["true" for _ in prompts]
    >>> parse_judge_answer(Always().complete(["q"])[0], words=ANSWER_WORDS)
    True
"""

from __future__ import annotations

import json

from evaluators.sage.records import Criterion, TurnRecord
from simulation.backends.judge import JudgeBackend, parse_judge_answer

JUDGE_MARGIN = 0.5  # S3 answers carry no calibrated confidence; ranked between S2 and S1

PROMPT = """You check one property of one turn of a task-oriented dialogue.
Answer with exactly one word: true, false or abstain (abstain if the evidence is not enough).

Question: {question}
Evidence:
{evidence}
User turn: {user}
Agent reply: {agent}
Answer:"""


ANSWER_WORDS = {"true": True, "yes": True, "false": False, "no": False, "abstain": None}
"""What the first such word of a completion means; ``abstain`` (or none) leaves it undecided."""


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
            answers[i] = parse_judge_answer(text, words=ANSWER_WORDS)
        return answers
