"""Seeded execution adversities: backend failures, empty results, timeouts, policy refusals.

:class:`AdversityInjector` sits between the tool agent and the domain handlers. For
each call it decides, from the scenario's execution behaviors and a seed, whether
the call is intercepted; if so it returns an :class:`Injection` (the error that replaces
the call, or the order to empty its result) and records an
:class:`~mads_bench.data_model.InjectionRecord`.
Decisions for ``probability`` triggers hash (seed, behavior, tool, call index), so
they do not depend on what else happened earlier in the run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from mads_bench.data_model import ExecutionBehavior, InjectionRecord, ToolSpec


@dataclass(frozen=True)
class Injection:
    """An adversity applied to one call: ``content`` is the error returned instead.

    For ``empty_results`` the call still runs and :func:`empty_result` empties its result,
    so the answer keeps the shape of a real one.
    """

    kind: str
    content: dict[str, Any] | None = None


class AdversityInjector:
    """Applies execution behaviors to tool calls, deterministically for a seed.

    Args:
        behaviors: the scenario's execution behaviors (other kinds are ignored).
        seed: run seed.
    """

    def __init__(self, behaviors: list[Any], seed: int) -> None:
        self.behaviors: list[ExecutionBehavior] = [
            b
            for b in behaviors
            if b.kind in ("backend_failure", "empty_results", "timeout", "policy_constraint")
        ]
        self.seed = seed
        self.records: list[InjectionRecord] = []

    def intercept(
        self, tool: ToolSpec, call_index: int, turn_index: int | None = None
    ) -> Injection | None:
        """The adversity applied to this call, or None.

        Args:
            tool: spec of the called tool.
            call_index: 1-based index of this call among valid calls of the same tool.
            turn_index: user turn of the call, for the record.
        """
        for position, behavior in enumerate(self.behaviors):
            if behavior.tool not in (None, tool.name):
                continue
            if behavior.kind == "empty_results" and tool.kind != "read":
                continue
            if not self._triggers(behavior, position, tool.name, call_index):
                continue
            content, detail = _effect(behavior, tool)
            self.records.append(
                InjectionRecord(
                    kind=behavior.kind,
                    turn_index=turn_index,
                    tool=tool.name,
                    call_index=call_index,
                    seed=self.seed,
                    detail=detail,
                )
            )
            return Injection(behavior.kind, content)
        return None

    def _triggers(self, behavior: ExecutionBehavior, position: int, tool: str, index: int) -> bool:
        if behavior.probability is None:
            return index in (behavior.on_calls or [])
        rng = random.Random(f"{self.seed}:{position}:{tool}:{index}")
        return rng.random() < behavior.probability


def _effect(behavior: ExecutionBehavior, tool: ToolSpec) -> tuple[dict[str, Any] | None, str]:
    if behavior.kind == "backend_failure":
        content = {
            "code": "backend_error",
            "status": behavior.status_code,
            "message": behavior.message,
            "retryable": True,
        }
        return content, f"{tool.name} failed with {behavior.status_code}"
    if behavior.kind == "timeout":
        content = {
            "code": "timeout",
            "message": f"{tool.name} did not answer within {behavior.after_seconds:g} s",
            "retryable": True,
        }
        return content, f"{tool.name} timed out"
    if behavior.kind == "policy_constraint":
        content = {"code": "policy_violation", "message": behavior.policy, "retryable": False}
        return content, f"{tool.name} refused by policy"
    return None, f"{tool.name} returned no results"


def empty_result(result: Any) -> Any:
    """A real result with its records removed: lists emptied, ``count``/``total`` set to 0.

    Example:
        >>> empty_result({"date": "2026-05-01", "flights": [{"id": 1}], "count": 1})
        {'date': '2026-05-01', 'flights': [], 'count': 0}
    """
    if isinstance(result, list):
        return []
    if isinstance(result, dict):
        return {
            key: [] if isinstance(value, list) else 0 if key in ("count", "total") else value
            for key, value in result.items()
        }
    return result
