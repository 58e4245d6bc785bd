"""The validator's entry points: run the four checks, consult the judge, build the verdict.

``validate_trajectories`` works in chunks: it runs the rule checks per trajectory, the
embedding checks for the whole chunk in one encoder batch, then sends every pending judge
question of the chunk in ONE ``judge.complete`` call. Without a judge each question falls
back to the offline decision it carries (rules or embedding), so a run without a judge is
a complete judgement, not "always pass". The verdict (``Trajectory.verdict``) is::

    {"passed": bool, "judge": "<spec>" | "rules",
     "checks": {"syntax" | "faithfulness" | "role_confusion" | "task_success":
                {"passed": bool, "reasons": [str], "decided_by": "rules"|"embedding"|"judge"}}}

Example:
    >>> from mads_bench.catalog import load_domain
    >>> from simulation.environment import simulate
    >>> scenario = load_domain("mock").scenarios[1]
    >>> verdict = validate_trajectory(simulate(scenario), scenario, embedder=NO_EMBEDDINGS)
    >>> verdict["passed"], sorted(verdict["checks"])
    (True, ['faithfulness', 'role_confusion', 'syntax', 'task_success'])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import numpy as np

from mads_bench.catalog import domain_of
from mads_bench.data_model import Scenario, Trajectory
from mads_bench.embedding import SentenceEncoder
from simulation.backends.judge import JudgeBackend
from simulation.validator.common import CHECK_NAMES, CheckResult, Context, resolve
from simulation.validator.faithfulness import check_faithfulness
from simulation.validator.role_confusion import RoleConfusionChecker
from simulation.validator.rubric import grade_conversation
from simulation.validator.syntax import check_syntax
from simulation.validator.task_success import TaskSuccessChecker


class _Orthogonal:
    """An encoder under which different texts are unrelated, so the embedding tests never
    fire. For doctests and rule-only runs; not the default.

    Each distinct text gets its own axis, in the order first seen; past ``dimension`` texts,
    a text gets the zero vector, related to nothing. (A hash of the text used to pick the
    axis, and a message could land on a prototype's.)
    """

    dimension = 1 << 12

    def __init__(self) -> None:
        self._axes: dict[str, int | None] = {}

    def encode(self, texts: list[str], **kwargs: object) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            if text not in self._axes:
                n = len(self._axes)
                self._axes[text] = n if n < self.dimension else None
            if (axis := self._axes[text]) is not None:
                vectors[row, axis] = 1.0
        return vectors


NO_EMBEDDINGS = SentenceEncoder(_Orthogonal())


def validate_trajectories(
    trajectories: Iterable[Trajectory],
    scenarios: Mapping[str, Scenario],
    *,
    judge: JudgeBackend | None = None,
    embedder: SentenceEncoder | None = None,
    chunk_size: int = 32,
) -> Iterator[Trajectory]:
    """Validate trajectories lazily, yielding each with its ``verdict`` set, in input order.

    Args:
        trajectories: the trajectories (any iterable; read lazily, chunk by chunk).
        scenarios: scenario by id; a trajectory whose scenario is missing fails every check.
        judge: optional judge backend (``complete(prompts) -> replies``).
        embedder: shared sentence embedder (MiniLM, loaded on first use, when omitted).
        chunk_size: trajectories per embedding batch and judge call.
    """
    embedder = embedder or SentenceEncoder()
    role_checker = RoleConfusionChecker(embedder)
    task_checker = TaskSuccessChecker(embedder)
    chunk: list[Trajectory] = []
    for trajectory in trajectories:
        chunk.append(trajectory)
        if len(chunk) >= chunk_size:
            yield from _validate_chunk(chunk, scenarios, judge, role_checker, task_checker)
            chunk = []
    if chunk:
        yield from _validate_chunk(chunk, scenarios, judge, role_checker, task_checker)


def _validate_chunk(
    chunk: list[Trajectory],
    scenarios: Mapping[str, Scenario],
    judge: JudgeBackend | None,
    role_checker: RoleConfusionChecker,
    task_checker: TaskSuccessChecker,
) -> Iterator[Trajectory]:
    known = [t for t in chunk if t.scenario_id in scenarios]
    # the validator's entry: each scenario's pack is resolved here and handed to the checks
    contexts = [
        Context(t, scenarios[t.scenario_id], domain_of(scenarios[t.scenario_id]), style=_style(t))
        for t in known
    ]
    roles = iter(role_checker.check_many(contexts))
    results: dict[str, dict[str, CheckResult]] = {}
    for context in contexts:
        results[context.trajectory.id] = {
            "syntax": check_syntax(context),
            "faithfulness": check_faithfulness(context),
            "role_confusion": next(roles),
            "task_success": task_checker.check(context, judged=judge is not None),
        }
    questions = [q for checks in results.values() for r in checks.values() for q in r.pending]
    replies = judge.complete([q.prompt for q in questions]) if judge and questions else []
    cursor = 0
    for checks in results.values():
        for result in checks.values():
            count = len(result.pending)
            resolve(result, replies[cursor : cursor + count] if judge else None)
            cursor += count
    # the task-success stage reports the rubric's parts, graded from its resolved check
    outcomes = {
        c.trajectory.id: grade_conversation(
            c.trajectory, c.scenario, domain=c.domain, task=results[c.trajectory.id]["task_success"]
        )
        for c in contexts
    }
    spec = getattr(judge, "spec", "judge") if judge is not None else "rules"
    for trajectory in chunk:
        checks = results.get(trajectory.id) or _missing_scenario(trajectory)
        entries = {name: checks[name].to_dict() for name in CHECK_NAMES}
        if (outcome := outcomes.get(trajectory.id)) is not None:
            entries["task_success"]["parts"] = outcome.parts
        verdict = {
            "passed": all(r.passed for r in checks.values()),
            "checks": entries,
            "judge": spec,
        }
        yield trajectory.model_copy(update={"verdict": verdict})


def _missing_scenario(trajectory: Trajectory) -> dict[str, CheckResult]:
    results = {name: CheckResult() for name in CHECK_NAMES}
    for result in results.values():
        result.fail(f"conversation: unknown_scenario: no scenario {trajectory.scenario_id!r}")
    return results


def _style(trajectory: Trajectory) -> str:
    """``react`` when the system prompt describes no ``<plan>`` block, else ``pre_act``."""
    messages = trajectory.messages
    if messages and messages[0].role == "system" and "<plan>" not in messages[0].content:
        return "react"
    return "pre_act"


def validate_trajectory(
    trajectory: Trajectory,
    scenario: Scenario,
    *,
    judge: JudgeBackend | None = None,
    embedder: SentenceEncoder | None = None,
) -> dict:
    """Validate one trajectory and return its verdict dict (see the module docstring).

    Args:
        trajectory: the conversation.
        scenario: the scenario it simulated.
        judge: optional judge backend; any :func:`simulation.backends.get_backend` spec works.
        embedder: sentence embedder (MiniLM by default).

    Returns:
        `dict`: ``{"passed", "checks", "judge"}``.
    """
    (validated,) = validate_trajectories(
        [trajectory], {scenario.id: scenario}, judge=judge, embedder=embedder
    )
    return validated.verdict
