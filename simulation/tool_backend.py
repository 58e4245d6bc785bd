"""The default tool agent: executes tool calls against a scenario's backend state.

Every call is checked before it runs: the tool must exist and be available in the
scenario, and the arguments must validate against the tool's JSON Schema. Invalid
calls get a structured error result (``{"code": "invalid_arguments", ...}``) and never
raise. Valid calls pass through the seeded :class:`~simulation.adversity.AdversityInjector`
(failures replace the call; empty results run it and empty the lists of its result),
then run the domain handler on a private copy of the seed state, so writes persist
for the rest of the conversation (a cancelled order stays cancelled).
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

from mads_bench.catalog import Domain
from mads_bench.data_model import InjectionRecord, Scenario, ToolCall, ToolResult
from mads_bench.database import ToolError
from simulation.adversity import AdversityInjector, empty_result


class ToolBackend:
    """Stateful executor of one scenario's tools.

    Args:
        scenario: the scenario being simulated.
        seed: run seed for the adversity wrappers.
        domain: the scenario's loaded domain pack (handed down, never looked up here).

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> domain = load_domain("mock")
        >>> backend = ToolBackend(domain.scenarios[0], seed=0, domain=domain)
        >>> backend.execute(ToolCall(id="c1", name="get_item", arguments={"item_id": "I1"})).ok
        True
    """

    def __init__(self, scenario: Scenario, seed: int = 0, *, domain: Domain) -> None:
        self.domain = domain
        self.scenario = scenario
        self.db = self.domain.database(scenario.backend_state)
        self.tools = {t.name: t for t in self.domain.tools_for(scenario)}
        self.injector = AdversityInjector(scenario.behaviors, seed)
        self._calls: Counter[str] = Counter()

    def __deepcopy__(self, memo: dict[int, Any]) -> ToolBackend:
        """A copy to try calls on: its own state, call counts and adversities; the domain,
        the scenario and the tool specs (read-only) are shared."""
        other = copy.copy(self)
        other.db = copy.deepcopy(self.db, memo)
        other.injector = copy.deepcopy(self.injector, memo)
        other._calls = Counter(self._calls)
        return other

    @property
    def injections(self) -> list[InjectionRecord]:
        """Adversities applied so far, in order."""
        return self.injector.records

    def execute(self, call: ToolCall, turn_index: int | None = None) -> ToolResult:
        """Run one call and return its result; never raises for bad calls."""
        tool = self.tools.get(call.name)
        if tool is None:
            return self._error(
                call, "unknown_tool", f"no tool named {call.name!r}", available=sorted(self.tools)
            )
        problems = tool.argument_errors(call.arguments)
        if problems:
            return self._error(
                call, "invalid_arguments", f"invalid arguments for {tool.name}", errors=problems
            )
        self._calls[tool.name] += 1
        injected = self.injector.intercept(tool, self._calls[tool.name], turn_index)
        if injected is not None and injected.kind != "empty_results":
            return ToolResult(call_id=call.id, name=tool.name, ok=False, content=injected.content)
        try:
            content = self.domain.handlers[tool.name](self.db, **call.arguments)
        except ToolError as err:
            return ToolResult(call_id=call.id, name=tool.name, ok=False, content=err.to_content())
        except Exception as err:  # a handler bug must not end the simulation
            content = {"code": "internal_error", "message": f"{type(err).__name__}: {err}"}
            return ToolResult(call_id=call.id, name=tool.name, ok=False, content=content)
        if injected is not None:  # empty results keep the real result's shape
            content = empty_result(content)
        return ToolResult(call_id=call.id, name=tool.name, ok=True, content=content)

    def state(self) -> dict[str, list[dict[str, Any]]]:
        """The current backend state (a copy)."""
        return self.db.dump()

    def changes(self) -> dict[str, list[dict[str, Any]]]:
        """The records the calls wrote, as they are now (:meth:`Database.changes`): what a
        trajectory stores as its ``final_state``, small even over a large seed state."""
        return self.db.changes()

    @staticmethod
    def _error(call: ToolCall, code: str, message: str, **details: Any) -> ToolResult:
        content = {"code": code, "message": message, **details}
        return ToolResult(call_id=call.id, name=call.name, ok=False, content=content)
