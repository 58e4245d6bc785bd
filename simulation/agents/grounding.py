"""Argument grounding for the scripted assistant: which values it may use, which it must ask.

The gold workflow says which tool to call with which values; :class:`SlotGrounding`
decides, from the conversation only, whether the assistant has *earned* each value:

- a value that belongs to a user slot (matched by value against hard constraints, soft
  preferences and revised slots; a bare number only to a slot with a similar name) is
  usable once the user stated it; if the user's latest statement of that slot is a
  different value it is ``stale`` (the assistant checks before acting), and a value the
  user confirmed over the workflow's (``accepted``) wins; a slot never stated and not
  returned by a tool is ``missing`` (the assistant asks for it);
- any other value must appear in the user messages or tool results; if not, it is
  ``derived`` (used, and said so in the think).

Lists are grounded element by element; an object (an address) is one slot when a slot holds
exactly that object (the user says it as a whole), otherwise field by field.
"""

from __future__ import annotations

from typing import Any

from mads_bench.data_model import Scenario
from mads_bench.text import normalise
from simulation.agents.text import render_value, same_value, slot_label, value_in

Resolution = tuple[dict[str, Any], list[str], list[tuple[str, Any]], list[str]]


class SlotGrounding:
    """Grounds gold-call arguments in the conversation (see the module docstring).

    Args:
        scenario: the scenario whose slots (and revised slots) the user may state.

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> grounding = SlotGrounding(load_domain("mock").scenarios[1])
        >>> tools = normalise('{"items": [{"item_id": "I1"}]}', numbers="canonical")
        >>> grounding.resolve({"item_id": "I1", "quantity": 2}, ["buy a blue mug"], tools)
        ({'item_id': 'I1', 'quantity': 2}, ['quantity'], [], [])
    """

    def __init__(self, scenario: Scenario) -> None:
        self.candidates: dict[str, list[Any]] = {k: [v] for k, v in scenario.slots.items()}
        for revision in scenario.behaviors_of("goal_revision"):
            for name, value in revision.revised_slots.items():
                self.candidates[name].append(value)
        self.accepted: dict[str, Any] = {}

    def resolve(self, arguments: dict[str, Any], users: list[str], tools: str) -> Resolution:
        """Ground every argument.

        Args:
            arguments: the gold call's arguments.
            users: the normalised user messages, in order.
            tools: the normalised text of all tool results so far.

        Returns:
            `tuple`: (arguments to use, missing slots, stale ``(slot, stated value)`` pairs,
            names of derived arguments).
        """
        found: dict[str, list[Any]] = {"missing": [], "stale": [], "derived": []}
        args = {
            name: self._ground(name, value, users, tools, found)
            for name, value in arguments.items()
        }
        missing = list(dict.fromkeys(found["missing"]))
        return args, missing, found["stale"], list(dict.fromkeys(found["derived"]))

    def _ground(
        self, name: str, value: Any, users: list[str], tools: str, found: dict[str, list[Any]]
    ) -> Any:
        if isinstance(value, list):
            return [self._ground(name, v, users, tools, found) for v in value]
        slot = self.slot_for(name, value)
        if isinstance(value, dict) and slot is None:
            return {k: self._ground(k, v, users, tools, found) for k, v in value.items()}
        if slot is None:
            if not value_in(value, tools + " " + " ".join(users)):
                found["derived"].append(name)
            return value
        if slot in self.accepted:
            return self.accepted[slot]
        latest = self.latest_stated(slot, users)
        said_flag = isinstance(value, bool) and any(
            normalise(slot_label(slot), numbers="canonical") in text for text in users
        )
        if latest is None and not (value_in(value, tools) or said_flag):
            found["missing"].append(slot)
        elif latest is not None and not same_value(latest, value):
            found["stale"].append((slot, latest))
        return value

    def slot_for(self, argument: str, value: Any) -> str | None:
        """The slot holding ``value`` (preferring a slot whose name shares a word)."""
        matches = [
            s for s, values in self.candidates.items() if any(same_value(v, value) for v in values)
        ]
        similar = [s for s in matches if set(s.split("_")) & set(argument.split("_"))]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            matches = similar  # a bare number only belongs to a slot with a similar name
        return (similar or matches or [None])[0]

    def latest_stated(self, slot: str, users: list[str]) -> Any:
        """The slot value the user mentioned last (the longer one on a tie), or None."""
        best, best_key = None, (-1, -1)
        for value in self.candidates[slot]:
            hits = [i for i, text in enumerate(users) if value_in(value, text)]
            key = (hits[-1], len(render_value(value))) if hits else (-1, -1)
            if key > best_key:
                best, best_key = value, key
        return best
