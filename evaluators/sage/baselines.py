"""LLM-judge baselines for comparison runs against SAGE (issue 6 §2), through any backend.

Three judges, each writing the same `Verdict` records as ``sage run`` (so ``sage compare``
computes a paired bootstrap ΔF1 between any two evaluators):

* ``geval``: G-Eval-style (Liu et al., 2023): the evaluation criteria and auto-written
  evaluation steps, then a form to fill in ("Score (1-5): ..."); a score at or below the
  threshold (default 2) is a failure. Transcript and state are shown.
* ``single``: one call per turn, transcript only (history, user turn, agent reply).
* ``single-state``: the same question with the workflow state before/after the turn and the
  intent's required fields (the information SAGE's compiler reads).

A reply that cannot be read (no score / no verdict line) gives an ``undecided`` verdict with
the raw reply in its evidence: an abstention, never a crash. The prompts are our own.

Example:
    >>> from simulation.backends import FakeBackend
    >>> judge = BaselineJudge("single", FakeBackend(replies=["VERDICT: failure\\nCLASS: PC"]))
    >>> judge.parse("VERDICT: acceptable")
    ('acceptable', [], 1.0, 'verdict acceptable')
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from evaluators.sage.records import FAILURE_CLASSES, TurnRecord, Verdict
from evaluators.sage.workflow import WorkflowSpec
from simulation.backends.judge import JudgeBackend

KINDS = ("geval", "single", "single-state")

CLASSES_TEXT = """- IUV (ignored user value): the user gave a value the state does not keep.
- WNF (wrong next field): the agent asks for a field that is already known or not needed next.
- PC (premature confirmation): the agent confirms or reports the task done before every required
  field is known.
- UV (unsupported value): the agent or the state uses a value the user never gave."""

SINGLE_PROMPT = """You judge the LAST agent reply of a task-oriented dialogue.
Failure types:
{classes}

Service: {service} · task: {intent}{state}
Dialogue so far:
{history}
User: {user}
Agent (judged): {agent}

Does the judged agent reply contain one of these failures? Answer in exactly this format:
VERDICT: failure or acceptable
CLASS: IUV, WNF, PC or UV (only for a failure)"""

GEVAL_PROMPT = """You will be given one turn of a task-oriented dialogue: the user's message, the \
agent's reply and the workflow state the agent keeps. Your task is to rate the reply on one \
metric. Please make sure you read and understand these instructions carefully.

Evaluation Criteria:
Workflow correctness (1-5): the reply keeps every value the user gave, asks only for a field \
that is still needed, uses no value the user never gave, and does not confirm or report the task \
done before all required fields ({required}) are known. Failure types:
{classes}

Evaluation Steps:
1. Read the dialogue and note the values the user has given.
2. Compare them with the state after the turn and with the agent's reply.
3. Check whether the agent asks for a needed field and whether it confirms too early.
4. Assign a score from 1 (clear failure) to 5 (fully correct).

Service: {service} · task: {intent}{state}
Dialogue so far:
{history}
User: {user}
Agent (judged): {agent}

Evaluation Form (fill in the scores ONLY):
Score (1-5):
Failure type (IUV, WNF, PC, UV or none):"""

_VERDICT = re.compile(
    r"verdict\s*[:=]\s*\**\s*(failure|acceptable)\b(?!\s+or\b)", re.IGNORECASE
)  # the last answer counts; "failure or acceptable" (the instruction echoed) is no answer
_SCORE = re.compile(r"score[^:\n]*[:=]\s*\**\s*([1-5](?:\.\d+)?)\b", re.IGNORECASE)
_CLASS = re.compile(r"\b(IUV|WNF|PC|UV)\b")


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    matches = list(pattern.finditer(text))
    return matches[-1] if matches else None


class BaselineJudge:
    """A single-call or G-Eval-style LLM judge producing SAGE `Verdict` records.

    Args:
        kind (`str`): ``geval``, ``single`` or ``single-state``.
        backend (`JudgeBackend`): Any object with ``complete(prompts) -> list[str]``.
        spec (`WorkflowSpec`, *optional*): Required fields and descriptions for the prompts.
        threshold (`float`): G-Eval: a score ``<= threshold`` is a failure (default 2).
    """

    def __init__(
        self,
        kind: str,
        backend: JudgeBackend,
        spec: WorkflowSpec | None = None,
        threshold: float = 2.0,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown baseline kind {kind!r}; expected one of {list(KINDS)}")
        self.kind, self.backend, self.spec, self.threshold = kind, backend, spec, threshold

    def prompt(self, record: TurnRecord) -> str:
        """The judge prompt for one turn (transcript only for ``single``)."""
        history = "\n".join(f"{h.speaker.capitalize()}: {h.text}" for h in record.history)
        required: list[str] = []
        if self.spec is not None:
            try:
                required = list(self.spec.intent(record.service, record.intent).required)
            except KeyError:
                required = []
        state = ""
        if self.kind != "single":
            state = (
                f"\nRequired fields: {required}\n"
                f"State before the turn: {json.dumps(record.state_before, ensure_ascii=False)}\n"
                f"State after the turn: {json.dumps(record.state_after, ensure_ascii=False)}"
            )
        fields = {
            "classes": CLASSES_TEXT,
            "service": record.service,
            "intent": record.intent,
            "state": state,
            "history": history or "(none)",
            "user": record.user,
            "agent": record.agent,
            "required": ", ".join(required) or "none",
        }
        template = GEVAL_PROMPT if self.kind == "geval" else SINGLE_PROMPT
        return template.format(**fields)

    def parse(self, reply: str) -> tuple[str, list[str], float, str]:
        """``(verdict, failure classes, margin, note)`` from one reply; unreadable → undecided."""
        text = reply or ""
        if self.kind == "geval":
            match = _last(_SCORE, text)
            if not match:
                return "undecided", [], 0.0, "no 'Score (1-5):' value in the reply"
            score = float(match.group(1))
            verdict = "failure" if score <= self.threshold else "acceptable"
            margin = min(1.0, abs(score - (self.threshold + 0.5)) / 2.5)
            note = f"score {score:g} (failure at <= {self.threshold:g})"
        else:
            match = _last(_VERDICT, text)
            if not match:
                return "undecided", [], 0.0, "no 'VERDICT: failure|acceptable' line in the reply"
            verdict, margin = match.group(1).lower(), 1.0
            note = f"verdict {verdict}"
        after = text[match.end() :]
        classes = sorted(set(_CLASS.findall(after))) if verdict == "failure" else []
        return verdict, [c for c in classes if c in FAILURE_CLASSES], margin, note

    def evaluate(self, records: list[TurnRecord], batch_size: int = 64) -> list[Verdict]:
        """One verdict per record, in order; one ``complete`` call per batch of turns."""
        verdicts: list[Verdict] = []
        for start in range(0, len(records), batch_size):
            batch = records[start : start + batch_size]
            started = time.perf_counter()
            replies = self.backend.complete([self.prompt(r) for r in batch])
            if len(replies) != len(batch):
                raise ValueError(
                    f"judge backend returned {len(replies)} completions for {len(batch)} prompts"
                )
            share = (time.perf_counter() - started) / max(1, len(batch))
            verdicts.extend(
                self._verdict(r, reply, share) for r, reply in zip(batch, replies, strict=True)
            )
        return verdicts

    def _verdict(self, record: TurnRecord, reply: Any, latency: float) -> Verdict:
        verdict, classes, margin, note = self.parse(reply if isinstance(reply, str) else "")
        decided = verdict != "undecided"
        return Verdict(
            dialogue_id=record.dialogue_id,
            turn_id=record.turn_id,
            verdict=verdict,
            failure_classes=classes,
            margin=margin,
            evidence=[
                {
                    "criterion": f"baseline:{self.kind}",
                    "class": classes[0] if classes else None,
                    "fires": (verdict == "failure") if decided else None,
                    "stage": "judge" if decided else None,
                    "margin": margin,
                    "span": {"reply": str(reply)[:500]},
                    "trace": [note],
                }
            ],
            stages={"judge": 1, "abstained": 0} if decided else {"abstained": 1},
            latency_s=latency,
        )
