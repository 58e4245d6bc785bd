"""Typed data model of MADS-Bench: tools, personas, behaviors, scenarios and trajectories.

Every model forbids unknown fields, so a typo in a hand-written YAML file is an
error that names the field instead of a silently ignored key. The Pre-Act step
format lives in :mod:`mads_bench.pre_act`; this module holds everything around it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Complexity = Literal["normal", "unhappy", "impossible"]
ToolKind = Literal["read", "write"]
Role = Literal["system", "user", "assistant", "tool"]

_IDENTIFIER = r"^[a-z][a-z0-9_]*$"


class StrictModel(BaseModel):
    """Base for every record: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- tools


class ToolSpec(StrictModel):
    """One tool the assistant can call, in OpenAI function-calling terms."""

    name: str = Field(pattern=_IDENTIFIER, description="Function name the assistant calls.")
    description: str = Field(min_length=1, description="What the tool does, shown to the model.")
    parameters: dict[str, Any] = Field(
        description="JSON Schema (type object) of the arguments, OpenAI function-calling style."
    )
    returns: dict[str, Any] = Field(description="JSON Schema of a successful result.")
    kind: ToolKind = Field(description="`read` tools never change backend state; `write` may.")

    @field_validator("parameters", "returns")
    @classmethod
    def _valid_json_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as err:
            raise ValueError(f"not a valid JSON Schema: {err.message}") from None
        return schema

    @field_validator("parameters")
    @classmethod
    def _object_parameters(cls, schema: dict[str, Any]) -> dict[str, Any]:
        if schema.get("type") != "object":
            raise ValueError('parameters must be a JSON Schema with "type": "object"')
        missing = set(schema.get("required", [])) - set(schema.get("properties", {}))
        if missing:
            raise ValueError(f"required parameters without a property: {sorted(missing)}")
        for name, prop in schema.get("properties", {}).items():
            # A YAML slip like `{description: Date, YYYY-MM-DD}` adds a null-valued key.
            if not isinstance(prop, dict) or not isinstance(prop.get("description"), str):
                raise ValueError(f"parameter {name!r} needs a string description")
            nulls = [key for key, value in prop.items() if value is None]
            if nulls:
                raise ValueError(f"parameter {name!r} has keys without a value: {nulls}")
        return schema

    @property
    def required(self) -> list[str]:
        """Names of the required arguments."""
        return list(self.parameters.get("required", []))

    def argument_errors(self, arguments: Any) -> list[str]:
        """JSON-Schema violations of ``arguments`` (formats such as ``date`` included).

        Example:
            >>> spec = ToolSpec(name="t", description="d", kind="read", returns={},
            ...     parameters={"type": "object", "required": ["day"], "properties":
            ...                 {"day": {"type": "string", "format": "date", "description": "d"}}})
            >>> spec.argument_errors({"day": "2026-02-30"})
            ["day: '2026-02-30' is not a 'date'"]
        """
        validator = jsonschema.Draft202012Validator(
            self.parameters, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        out = []
        for error in errors:
            where = ".".join(str(p) for p in error.absolute_path)
            out.append(f"{where}: {error.message}" if where else error.message)
        return out

    def signature(self) -> str:
        """A compact one-line rendering for prompts: ``name(arg: type, opt?: type) [kind]: text``.

        Parameter types come from the schema (enums as ``"a"|"b"``, arrays as ``type[]``,
        objects as ``{field: type}``, dates as ``date``); ``?`` marks optional arguments.
        It is several times shorter than the OpenAI JSON, which matters for small models.

        Example:
            >>> ToolSpec(name="get_order", description="Look up an order.", kind="read",
            ...     returns={}, parameters={"type": "object", "required": ["order_id"],
            ...     "properties": {"order_id": {"type": "string", "description": "Id."},
            ...                    "verbose": {"type": "boolean", "description": "More."}}}
            ... ).signature()
            'get_order(order_id: string, verbose?: boolean) [read]: Look up an order.'
        """
        return f"{self.name}({_render_fields(self.parameters)}) [{self.kind}]: {self.description}"

    def enum_values(self) -> set[str]:
        """Every ``enum`` value anywhere in the parameter schema, as strings."""
        return _schema_enums(self.parameters)

    def to_openai(self) -> dict[str, Any]:
        """Return the tool in the OpenAI / chat-template `tools=` format."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def _schema_enums(schema: dict[str, Any]) -> set[str]:
    found = set(map(str, schema.get("enum", [])))
    for sub in schema.get("properties", {}).values():
        found |= _schema_enums(sub)
    if isinstance(schema.get("items"), dict):
        found |= _schema_enums(schema["items"])
    return found


def json_leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """The scalar leaves of a JSON value with their paths.

    Example:
        >>> json_leaves({"a": [1, {"b": "x"}]}, "args")
        [('args.a[0]', 1), ('args.a[1].b', 'x')]
    """
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in json_leaves(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in json_leaves(v, f"{path}[{i}]")]
    return [(path, value)]


def _render_fields(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", []))
    return ", ".join(
        f"{name}{'' if name in required else '?'}: {_render_type(prop)}"
        for name, prop in schema.get("properties", {}).items()
    )


def _render_type(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return "|".join(json.dumps(v) for v in prop["enum"])
    kind = prop.get("type", "any")
    if isinstance(kind, list):
        return "|".join(kind)
    if kind == "array":
        return f"{_render_type(prop.get('items', {}))}[]"
    if kind == "object" and "properties" in prop:
        return "{" + _render_fields(prop) + "}"
    if kind == "string" and prop.get("format") in ("date", "time", "date-time"):
        return prop["format"]
    if kind in ("integer", "number") and ("minimum" in prop or "maximum" in prop):
        low, high = prop.get("minimum", ""), prop.get("maximum", "")
        return f"{kind} {low}..{high}"
    return kind


# ------------------------------------------------------------------------ personas


class Persona(StrictModel):
    """A simulated user: who they are and how they write."""

    id: str = Field(pattern=_IDENTIFIER, description="Stable identifier used by scenarios.")
    name: str = Field(min_length=1, description="Full name.")
    age: int = Field(ge=16, le=100, description="Age in years.")
    hometown: str = Field(min_length=1, description="City and country or state.")
    occupation: str = Field(min_length=1, description="Job or main activity.")
    background: str = Field(min_length=1, description="Short biography.")
    writing_style: str = Field(min_length=1, description="How this person writes messages.")
    sample_messages: list[str] = Field(
        min_length=2, description="Example messages in the persona's own voice."
    )
    domains: list[str] = Field(
        default_factory=list,
        description="Domains this persona is a natural user of; empty means any domain.",
    )


# ----------------------------------------------------------------------- behaviors


class _ConversationalBehavior(StrictModel):
    """Shapes what the simulated user says and when."""


class PartialInformation(_ConversationalBehavior):
    """The user withholds the listed slots until the assistant asks for them."""

    kind: Literal["partial_information"] = "partial_information"
    withheld: list[str] = Field(min_length=1, description="Slot names not volunteered.")


class IncrementalConstraintRevelation(_ConversationalBehavior):
    """The user reveals constraints one per turn, in this order, after the opening."""

    kind: Literal["incremental_constraint_revelation"] = "incremental_constraint_revelation"
    reveal_order: list[str] = Field(min_length=1, description="Slot names, revealed in order.")


class GoalRevision(_ConversationalBehavior):
    """The user changes the goal or some slot values part-way through."""

    kind: Literal["goal_revision"] = "goal_revision"
    after_user_turn: int = Field(ge=1, description="Revision is announced after this user turn.")
    revised_slots: dict[str, Any] = Field(
        default_factory=dict, description="Slot values that replace the original ones."
    )
    revised_objective: str | None = Field(None, description="The new objective, if it changes.")

    @model_validator(mode="after")
    def _changes_something(self) -> GoalRevision:
        if not self.revised_slots and not self.revised_objective:
            raise ValueError("goal_revision must revise slots or the objective")
        return self


class AdversarialTone(_ConversationalBehavior):
    """The user is frustrated, sceptical or challenges the assistant's suggestions."""

    kind: Literal["adversarial_tone"] = "adversarial_tone"
    intensity: Literal["mild", "moderate", "severe"] = Field(
        "moderate", description="How strongly the tone shows."
    )


class _ExecutionBehavior(StrictModel):
    """Changes what a tool call returns; applied by a seeded wrapper around the backend."""

    tool: str | None = Field(None, description="Affected tool; None means any tool.")
    on_calls: list[Annotated[int, Field(ge=1)]] | None = Field(
        default_factory=lambda: [1],
        description="1-based indices of the affected calls of that tool.",
    )
    probability: float | None = Field(
        None, ge=0.0, le=1.0, description="Alternative to on_calls: seeded chance per call."
    )

    @model_validator(mode="after")
    def _one_trigger(self) -> _ExecutionBehavior:
        if self.probability is not None:
            self.on_calls = None
        if not self.on_calls and self.probability is None:
            raise ValueError("set on_calls (non-empty) or probability")
        return self


class BackendFailure(_ExecutionBehavior):
    """The backend answers with a server error."""

    kind: Literal["backend_failure"] = "backend_failure"
    status_code: int = Field(503, ge=500, le=599, description="HTTP-like status code reported.")
    message: str = Field("service temporarily unavailable", description="Error text returned.")


class EmptyResults(_ExecutionBehavior):
    """A query returns no records."""

    kind: Literal["empty_results"] = "empty_results"


class Timeout(_ExecutionBehavior):
    """The call exceeds its time limit and returns no result."""

    kind: Literal["timeout"] = "timeout"
    after_seconds: float = Field(30.0, gt=0, description="Reported time limit.")


class PolicyConstraint(_ExecutionBehavior):
    """The call is refused by a business rule."""

    kind: Literal["policy_constraint"] = "policy_constraint"
    policy: str = Field(min_length=1, description="The rule that refuses the call, as returned.")


Behavior = Annotated[
    PartialInformation
    | IncrementalConstraintRevelation
    | GoalRevision
    | AdversarialTone
    | BackendFailure
    | EmptyResults
    | Timeout
    | PolicyConstraint,
    Field(discriminator="kind"),
]
ExecutionBehavior = BackendFailure | EmptyResults | Timeout | PolicyConstraint
CONVERSATIONAL_KINDS = (
    "partial_information",
    "incremental_constraint_revelation",
    "goal_revision",
    "adversarial_tone",
)
EXECUTION_KINDS = ("backend_failure", "empty_results", "timeout", "policy_constraint")
BEHAVIOR_KINDS = CONVERSATIONAL_KINDS + EXECUTION_KINDS


# ----------------------------------------------------------------------- scenarios


class GoldToolCall(StrictModel):
    """One expected tool call of the gold workflow."""

    name: str = Field(pattern=_IDENTIFIER, description="Tool name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Expected arguments.")


class Scenario(StrictModel):
    """A task for the simulator: who the user is, what they want and what goes wrong."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_\-]*$", description="Unique scenario id.")
    domain: str = Field(pattern=_IDENTIFIER, description="Domain pack the scenario belongs to.")
    objective: str = Field(min_length=1, description="What the user wants, in one sentence.")
    persona: str = Field(description="Persona id of the simulated user.")
    hard_constraints: dict[str, Any] = Field(
        default_factory=dict, description="Slot values that must hold for success."
    )
    soft_preferences: dict[str, Any] = Field(
        default_factory=dict, description="Slot values the user may relax."
    )
    success_criteria: list[str] = Field(min_length=1, description="What counts as done.")
    tools: list[str] | Literal["all"] = Field(
        "all", description="Tools available to the assistant; `all` = every domain tool."
    )
    backend_state: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict,
        description="Records merged over the domain seed data by primary key, per table.",
    )
    behaviors: list[Behavior] = Field(default_factory=list, description="Injected behaviors.")
    complexity: Complexity = Field(description="normal, unhappy (has behaviors) or impossible.")
    impossible: bool = Field(False, description="The objective cannot be reached.")
    fallback_behavior: str | None = Field(
        None, description="How the assistant should decline and what it should offer instead."
    )
    gold_workflow: list[GoldToolCall] = Field(
        default_factory=list, description="Expected tool calls, in order."
    )
    must_say: list[str] = Field(
        default_factory=list,
        description="Facts the assistant must tell the user (τ²-bench's communicate_info): "
        "each must appear in one of its replies.",
    )
    user_brief: str | None = Field(
        None,
        description="The user's situation in its source's own words (τ²-bench's user "
        "instructions), given to an LLM user with the objective.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        if self.impossible != (self.complexity == "impossible"):
            raise ValueError("impossible must be true exactly when complexity is 'impossible'")
        if self.impossible and not self.fallback_behavior:
            raise ValueError("an impossible scenario needs a fallback_behavior")
        if not self.gold_workflow and not self.impossible and not self.must_say:
            raise ValueError(
                "a scenario with no gold_workflow must be impossible or list must_say: "
                "otherwise doing nothing would reach its goal"
            )
        if self.complexity == "normal" and self.behaviors:
            raise ValueError("a normal scenario has no injected behaviors")
        if self.complexity == "unhappy" and not self.behaviors:
            raise ValueError("an unhappy scenario needs at least one behavior")
        slots = set(self.slots)
        for behavior in self.behaviors:
            named = (
                getattr(behavior, "withheld", [])
                + getattr(behavior, "reveal_order", [])
                + list(getattr(behavior, "revised_slots", {}))
            )
            unknown = sorted(set(named) - slots)
            if unknown:
                raise ValueError(f"behavior {behavior.kind!r} names unknown slots {unknown}")
        return self

    @property
    def slots(self) -> dict[str, Any]:
        """All slot values the user knows: hard constraints over soft preferences."""
        return {**self.soft_preferences, **self.hard_constraints}

    def behaviors_of(self, *kinds: str) -> list[Any]:
        """The injected behaviors of the given kinds, in declaration order."""
        return [b for b in self.behaviors if b.kind in kinds]


# -------------------------------------------------------------------- trajectories


class ToolCall(StrictModel):
    """A tool invocation made by the assistant."""

    id: str = Field(description="Call id, unique within the trajectory.")
    name: str = Field(description="Tool name as emitted (may be unknown to the backend).")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments as emitted.")


class ToolResult(StrictModel):
    """What the tool agent returned for one call."""

    call_id: str = Field(description="Id of the call this answers.")
    name: str = Field(description="Tool name.")
    ok: bool = Field(description="True for a successful result, False for an error.")
    content: Any = Field(description="Result data, or an error object {code, message, ...}.")


class Message(StrictModel):
    """One message of a conversation, in chat roles."""

    role: Role = Field(description="system, user, assistant or tool.")
    content: str = Field(description="Text as the model sees it (Pre-Act for the assistant).")
    turn_index: int = Field(ge=0, description="0-based index of the user turn it belongs to.")
    step_index: int | None = Field(None, ge=0, description="Assistant step within the turn.")
    tool_call: ToolCall | None = Field(None, description="Set on assistant tool steps.")
    tool_result: ToolResult | None = Field(None, description="Set on tool messages.")
    parse_problems: list[str] = Field(
        default_factory=list,
        description="Pre-Act problems found in an assistant message, or what was repaired in an "
        "LLM user's reply (a speaker label, the assistant's part written too).",
    )


class InjectionRecord(StrictModel):
    """An adversity that was actually applied during a run."""

    kind: str = Field(description="Behavior kind.")
    turn_index: int | None = Field(None, description="User turn where it took effect.")
    tool: str | None = Field(None, description="Tool call it affected, for execution kinds.")
    call_index: int | None = Field(None, description="1-based index of the affected call.")
    seed: int = Field(description="Seed of the wrapper that applied it.")
    detail: str = Field("", description="Human-readable description of the effect.")


EndReason = Literal["done", "turn_cap", "loop", "error", "truncated"]


class Trajectory(StrictModel):
    """One simulated conversation with everything needed to validate and train on it."""

    id: str = Field(description="Unique trajectory id.")
    scenario_id: str = Field(description="Scenario that was simulated.")
    domain: str = Field(description="Domain of the scenario.")
    complexity: Complexity = Field(description="Scenario complexity.")
    persona: str = Field(description="Persona id of the user.")
    seed: int = Field(description="Run seed; same seed and backends give the same trajectory.")
    backends: dict[str, str] = Field(
        default_factory=dict, description="Backend spec per agent: user, assistant, tool."
    )
    messages: list[Message] = Field(default_factory=list, description="The conversation.")
    injections: list[InjectionRecord] = Field(
        default_factory=list, description="Adversities applied, in order."
    )
    end_reason: EndReason | None = Field(None, description="Why the run stopped.")
    final_state: dict[str, list[dict[str, Any]]] | None = Field(
        None,
        description="The records the run wrote, by table, as they ended (a deleted one as "
        "{key, _deleted: true}); laid over the seed state, the backend state after the run. "
        "A full dump (older files) reads the same.",
    )
    verdict: dict[str, Any] | None = Field(None, description="Validator verdict, once validated.")
