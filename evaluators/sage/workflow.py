"""The workflow specification W = (schema, required fields, legal next fields, outcome predicate).

Built from an SGD-style ``schema.json`` (service → slots + intents with required/optional slots
and a transactional flag) or from MADS tool specs (one intent per tool: its required
parameters are the required fields, a ``write`` tool is transactional, i.e. calling it or
saying "done" is the confirmation). ``WorkflowSpec.from_source`` reads either a loaded MADS
`~mads_bench.catalog.Domain` or the path of a ``schema.json``. The command line and the
``evaluate`` module take one string, ``mads:<domain>`` or a path: they resolve the domain's
name (`mads_domain`) through the catalog themselves and hand the loaded pack down, so nothing
here looks a domain up by name.

* ``next_fields``: the legal next fields, the required slots of the intent still unfilled in
  the state the agent acts on. SGD has no finer order (every system REQUEST in the dev split
  asks for an unfilled required slot), so the relation is "any unfilled required slot".
* ``outcome``: the intent may be confirmed once every required slot is filled.
* ``filled_this_turn``, for the legal ordering of a transactional intent (confirm before
  commit): every required slot filled, then a confirmation of the complete request that the
  user affirms, then the commit (SGD: REQUEST … → CONFIRM → user AFFIRM → NOTIFY_SUCCESS;
  in SGD dev no NOTIFY_SUCCESS comes in a turn that fills a required slot, 0 of 1,877). A
  commit reported in the very turn a required slot is filled skipped the confirmation.

Example:
    >>> spec = WorkflowSpec.from_sgd_schema([{"service_name": "S", "slots": [
    ...     {"name": "city", "description": "City", "is_categorical": False,
    ...      "possible_values": []}], "intents": [{"name": "Book", "is_transactional": True,
    ...     "required_slots": ["city"], "optional_slots": {}}]}])
    >>> spec.next_fields("S", "Book", {}), spec.outcome("S", "Book", {"city": "Oslo"})
    (['city'], True)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mads_bench.catalog import Domain

MADS_PREFIX = "mads:"
# SGD's acts name these for what is not a slot: the intent offered or informed, a result count.
ACT_PSEUDO_SLOTS = frozenset({"intent", "count"})


@dataclass(frozen=True)
class SlotSpec:
    """One slot: name, description, and the closed value set of a categorical slot."""

    name: str
    description: str = ""
    is_categorical: bool = False
    possible_values: tuple[str, ...] = ()

    @property
    def is_flag(self) -> bool:
        """Whether the slot takes True/False (said through its words, never as a value span)."""
        return {v.lower() for v in self.possible_values} == {"true", "false"}


@dataclass(frozen=True)
class IntentSpec:
    """One workflow: required slots (F), optional slots, transactional flag (has an outcome)."""

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    transactional: bool = False
    description: str = ""


@dataclass
class ServiceSpec:
    """A service (SGD) or domain (MADS): its slots and intents."""

    name: str
    slots: dict[str, SlotSpec] = field(default_factory=dict)
    intents: dict[str, IntentSpec] = field(default_factory=dict)
    description: str = ""


class WorkflowSpec:
    """All services of a schema, with the legal-next and outcome predicates."""

    def __init__(self, services: Mapping[str, ServiceSpec], source: str = "") -> None:
        self.services = dict(services)
        self.source = source

    # ----------------------------------------------------------------- builders
    @classmethod
    def from_sgd_schema(cls, schema: str | Path | list[dict[str, Any]]) -> WorkflowSpec:
        """Build from an SGD ``schema.json`` (a path or the loaded list).

        Raises:
            `ValueError`: Naming the file and the line (not JSON) or the service/field that is
                malformed, or an intent's slot that the service does not list.
            `OSError`: When the file cannot be read.
        """
        source = str(schema) if isinstance(schema, str | Path) else "<schema>"
        data = schema
        if isinstance(schema, str | Path):
            try:
                data = json.loads(Path(schema).read_text(encoding="utf-8"))
            except json.JSONDecodeError as err:
                where = f"line {err.lineno} column {err.colno}"
                raise ValueError(f"{source}: {where}: not JSON ({err.msg})") from None
        if not isinstance(data, list):
            raise ValueError(f"{source}: an SGD schema is a JSON list of services")
        services = {}
        for i, raw in enumerate(data):
            try:
                slots = {
                    s["name"]: SlotSpec(
                        s["name"],
                        s.get("description", ""),
                        bool(s.get("is_categorical", False)),
                        tuple(s.get("possible_values", [])),
                    )
                    for s in raw["slots"]
                }
                intents = {
                    it["name"]: IntentSpec(
                        it["name"],
                        tuple(it.get("required_slots", [])),
                        tuple(it.get("optional_slots", {})),
                        bool(it.get("is_transactional", False)),
                        it.get("description", ""),
                    )
                    for it in raw["intents"]
                }
                name = raw["service_name"]
            except (KeyError, TypeError) as err:
                raise ValueError(f"{source}: [{i}]: missing or malformed field {err}") from None
            for j, intent in enumerate(intents.values()):
                for kind, names in (("required", intent.required), ("optional", intent.optional)):
                    absent = [n for n in names if n not in slots]
                    if absent:  # a workflow asking for a slot the service cannot hold
                        raise ValueError(
                            f"{source}: [{i}].intents[{j}].{kind}_slots: {absent[0]!r} is not a "
                            f"slot of service {name!r}"
                        )
            services[name] = ServiceSpec(name, slots, intents, raw.get("description", ""))
        return cls(services, source)

    @classmethod
    def from_source(cls, source: Domain | str | Path) -> WorkflowSpec:
        """Build from a loaded MADS domain (its tool specs) or an SGD ``schema.json`` path.

        A ``mads:<domain>`` string is the caller's to resolve (`mads_domain`, then
        `mads_bench.catalog.load_domain`): the loaded `Domain` is what comes here.

        Raises:
            `ValueError`: When the source is an unresolved ``mads:<domain>`` or the schema file
                is malformed.
            `OSError`: When the schema file cannot be read.

        Example:
            >>> from mads_bench.catalog import load_domain
            >>> sorted(WorkflowSpec.from_source(load_domain("mock")).services)
            ['mock']
        """
        if isinstance(source, Domain):
            return cls.from_tool_specs(source.name, source.tools.values())
        if mads_domain(source) is not None:
            raise ValueError(f"{source}: load the domain (mads_bench.catalog) and pass the Domain")
        return cls.from_sgd_schema(Path(source))

    @classmethod
    def from_tool_specs(cls, service: str, tools: Iterable[Any]) -> WorkflowSpec:
        """Build one service from MADS ``ToolSpec`` objects (one intent per tool).

        Args:
            service (`str`): Name of the service (the MADS domain).
            tools: `mads_bench.data_model.ToolSpec` objects (e.g. a `Domain`'s ``tools.values()``).
        """
        slots: dict[str, SlotSpec] = {}
        intents: dict[str, IntentSpec] = {}
        for tool in tools:
            properties = tool.parameters.get("properties", {})
            for name, prop in properties.items():
                enum = tuple(str(v) for v in prop.get("enum", []))
                slots.setdefault(
                    name, SlotSpec(name, prop.get("description", ""), bool(enum), enum)
                )
            required = tuple(tool.parameters.get("required", []))
            optional = tuple(p for p in properties if p not in required)
            write = tool.kind == "write"
            intents[tool.name] = IntentSpec(tool.name, required, optional, write, tool.description)
        return cls({service: ServiceSpec(service, slots, intents)}, f"tools:{service}")

    # ----------------------------------------------------------------- queries
    def unknown_field(self, record: Any) -> str | None:
        """The first field of a turn record this workflow does not know, as ``field: reason``.

        Service, intent, the slots of both states (the root of a flattened MADS argument such
        as ``to.city``) and the slot of every act; SGD's acts name the pseudo-slots
        `ACT_PSEUDO_SLOTS` too. None when the record is the workflow's throughout.

        Example:
            >>> from evaluators.sage.records import TurnRecord
            >>> spec = WorkflowSpec.from_sgd_schema([{"service_name": "S", "slots": [
            ...     {"name": "city"}], "intents": [{"name": "Book", "required_slots": ["city"]}]}])
            >>> turn = TurnRecord(dialogue_id="d", turn_id="1", service="S", intent="Book",
            ...                   user="Oslo", agent="Done.", state_after={"colour": "red"})
            >>> spec.unknown_field(turn)
            "state_after.colour: not a slot of service 'S'"
        """
        service = self.services.get(record.service)
        if service is None:
            return f"service: {record.service!r} is not in {self.source} (known: " + (
                ", ".join(sorted(self.services)[:8]) + ")"
            )
        if record.intent not in service.intents:
            return f"intent: {record.intent!r} is not an intent of service {service.name!r}"
        for field_name in ("state_before", "state_after"):
            for slot in getattr(record, field_name):
                if re.split(r"[.\[]", slot, maxsplit=1)[0] not in service.slots:
                    return f"{field_name}.{slot}: not a slot of service {service.name!r}"
        for field_name in ("user_acts", "agent_acts"):
            for index, act in enumerate(getattr(record, field_name) or []):
                if act.slot and act.slot not in service.slots and act.slot not in ACT_PSEUDO_SLOTS:
                    return (
                        f"{field_name}[{index}].slot: {act.slot!r} is not a slot of service "
                        f"{service.name!r}"
                    )
        return None

    def service(self, name: str) -> ServiceSpec:
        """The named service; a clear error when the schema does not hold it."""
        try:
            return self.services[name]
        except KeyError:
            known = ", ".join(sorted(self.services)[:8])
            raise KeyError(f"service {name!r} is not in {self.source} (known: {known}…)") from None

    def intent(self, service: str, intent: str) -> IntentSpec:
        """The named intent of a service."""
        spec = self.service(service)
        try:
            return spec.intents[intent]
        except KeyError:
            raise KeyError(f"intent {intent!r} is not an intent of service {service!r}") from None

    def slot(self, service: str, name: str) -> SlotSpec | None:
        """The slot spec, or None when the service has no such slot."""
        return self.service(service).slots.get(name)

    def next_fields(self, service: str, intent: str, state: Mapping[str, str]) -> list[str]:
        """Next(W, s): the required slots of the intent not filled in ``state``."""
        return [s for s in self.intent(service, intent).required if not state.get(s)]

    def outcome(self, service: str, intent: str, state: Mapping[str, str]) -> bool:
        """O(s): every required slot of the intent is filled."""
        return not self.next_fields(service, intent, state)

    def filled_this_turn(
        self,
        service: str,
        intent: str,
        before: Mapping[str, str],
        after: Mapping[str, str],
    ) -> list[str]:
        """Required slots of a transactional intent filled by this turn (empty before, set
        after): a commit reported now would skip the confirm → affirm step."""
        spec = self.intent(service, intent)
        if not spec.transactional:
            return []
        return [s for s in spec.required if not before.get(s) and after.get(s)]


def mads_domain(source: str | Path) -> str | None:
    """The domain name of a ``mads:<domain>`` schema source, else None (a path).

    Example:
        >>> mads_domain("mads:mock"), mads_domain("data/sgd/dev/schema.json")
        ('mock', None)
    """
    if isinstance(source, str) and source.startswith(MADS_PREFIX):
        return source.removeprefix(MADS_PREFIX)
    return None
