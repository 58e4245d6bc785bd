"""Seeded execution adversities: backend failures, empty results, timeouts, policy refusals.

:class:`AdversityInjector` sits between the tool agent and the domain handlers. For
each call it decides, from the scenario's execution behaviors and a seed, whether
the call is intercepted; if so it returns the error (or empty) result in place of
the real one and records an :class:`~mads_bench.data_model.InjectionRecord`.
Decisions for ``probability`` triggers hash (seed, behavior, tool, call index), so
they do not depend on what else happened earlier in the run.
"""

from __future__ import annotations

import random
from typing import Any

from mads_bench.data_model import ExecutionBehavior, InjectionRecord, ToolSpec


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
    ) -> dict[str, Any] | None:
        """The injected result ``{"ok": bool, "content": ...}`` for this call, or None.

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
            ok, content, detail = _effect(behavior, tool)
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
            return {"ok": ok, "content": content}
        return None

    def _triggers(self, behavior: ExecutionBehavior, position: int, tool: str, index: int) -> bool:
        if behavior.probability is None:
            return index in (behavior.on_calls or [])
        rng = random.Random(f"{self.seed}:{position}:{tool}:{index}")
        return rng.random() < behavior.probability


def _effect(behavior: ExecutionBehavior, tool: ToolSpec) -> tuple[bool, Any, str]:
    if behavior.kind == "backend_failure":
        content = {
            "code": "backend_error",
            "status": behavior.status_code,
            "message": behavior.message,
            "retryable": True,
        }
        return False, content, f"{tool.name} failed with {behavior.status_code}"
    if behavior.kind == "timeout":
        content = {
            "code": "timeout",
            "message": f"{tool.name} did not answer within {behavior.after_seconds:g} s",
            "retryable": True,
        }
        return False, content, f"{tool.name} timed out"
    if behavior.kind == "policy_constraint":
        content = {"code": "policy_violation", "message": behavior.policy, "retryable": False}
        return False, content, f"{tool.name} refused by policy"
    return True, empty_result(tool.returns), f"{tool.name} returned no results"


def empty_result(returns: dict[str, Any]) -> Any:
    """The "nothing found" value of a return schema: [] for arrays, arrays emptied in objects.

    Example:
        >>> empty_result({"type": "object", "properties": {"items": {"type": "array"},
        ...               "total": {"type": "integer"}}})
        {'items': [], 'total': 0}
    """
    kind = returns.get("type")
    if kind == "array":
        return []
    if kind == "object":
        out: dict[str, Any] = {}
        for name, prop in returns.get("properties", {}).items():
            if prop.get("type") == "array":
                out[name] = []
            elif prop.get("type") == "integer" and name in ("count", "total"):
                out[name] = 0
        return out
    return None
