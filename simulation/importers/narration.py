"""Writers of the ``<think>`` / ``<plan>`` of imported assistant steps.

Source datasets such as APIGen-MT hold WHAT the assistant did (calls, replies) but not the
Pre-Act reasoning around it, so an importer asks a narrator for it, one
:class:`NarrationRequest` per step, in batches:

- :class:`ScriptedNarrator` (spec ``scripted``, the offline default) writes them
  deterministically from the step and its context: what the user said, what the previous
  call returned, where each argument value came from (the user, a tool result, or neither),
  and a numbered plan of the turn's remaining actions. A reasoning text the source already
  has (APIGen-MT's ``think`` tool calls) is kept as the think.
- :class:`BackendNarrator` (any :func:`simulation.backends.get_backend` spec) prompts a model
  once per batch (``complete(prompts)``); a reply without a usable ``<think>`` (or ``<plan>``
  where one is needed) falls back to the scripted text and is counted in ``fallbacks``.

Example:
    >>> from mads_bench.pre_act import Action
    >>> step = Step(Action.tool("get_order", {"order_id": "W1"}), 0, 0, call_id="call_0")
    >>> request = NarrationRequest([User("Where is order W1?", 0)], step, [step], {})
    >>> print(ScriptedNarrator().narrate([request])[0].think)
    The user says: "Where is order W1?" Next I call get_order with order ID = W1 (from the user).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from mads_bench.pre_act import Action
from mads_bench.text import normalise
from simulation.agents.text import (
    asks_confirmation,
    declines_with_alternatives,
    render_value,
    slot_label,
    value_in,
)

_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_PLAN = re.compile(r"<plan>(.*?)</plan>", re.DOTALL)


@dataclass
class User:
    """A user message of the source conversation."""

    text: str
    turn_index: int


@dataclass
class Step:
    """An assistant step (tool call or say) and any reasoning the source already had."""

    action: Action
    turn_index: int
    step_index: int
    call_id: str | None = None
    source_thought: str | None = None


@dataclass
class ToolOutput:
    """A tool result (an APIGen ``observation``)."""

    name: str
    call_id: str
    text: str
    content: Any
    ok: bool
    turn_index: int
    step_index: int


Event = User | Step | ToolOutput


@dataclass
class NarrationRequest:
    """One step to narrate: the conversation before it, the step, its turn, the tools."""

    history: list[Event]
    step: Step
    turn_steps: list[Step]
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Narration:
    """The think text, and the plan (None except on the first step of a turn)."""

    think: str
    plan: str | None


def _excerpt(text: str, limit: int = 160) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


def _clean(text: str, tag: str) -> str:
    return text.replace(f"</{tag}>", "").strip()


def _say_intent(text: str) -> tuple[str, str]:
    """(reason in the think, plan line) for a reply."""
    if asks_confirmation(text):
        return "before changing anything I ask the user to confirm", "Ask the user to confirm"
    if declines_with_alternatives(text):
        return "I explain what cannot be done and offer alternatives", "Explain and offer options"
    if "?" in text:
        return "I ask the user for what I still need", "Ask the user for the missing details"
    return "I tell the user the outcome", "Tell the user the outcome"


class ScriptedNarrator:
    """Deterministic think/plan texts from the step and its context (see the module doc)."""

    spec = "scripted"

    def __init__(self) -> None:
        self.fallbacks = 0

    def narrate(self, requests: list[NarrationRequest]) -> list[Narration]:
        """One narration per request, in order."""
        return [self.narration(request) for request in requests]

    def narration(self, request: NarrationRequest) -> Narration:
        """The think and (first step of a turn) plan of one step."""
        step = request.step
        plan = self.plan(request) if step.step_index == 0 else None
        if step.source_thought and step.source_thought.strip():
            return Narration(_clean(step.source_thought, "think"), plan)
        return Narration(self.think(request), plan)

    def think(self, request: NarrationRequest) -> str:
        step, history = request.step, request.history
        turn_results = [e for e in history if isinstance(e, ToolOutput)]
        turn_results = [e for e in turn_results if e.turn_index == step.turn_index]
        users = [e.text for e in history if isinstance(e, User)]
        if step.step_index == 0 or not turn_results:
            opening = f'The user says: "{_excerpt(users[-1] if users else "")}"'
        else:
            last = turn_results[-1]
            outcome = (
                "returned what I asked for" if last.ok else f"failed: {_excerpt(last.text, 80)}"
            )
            opening = f"The {last.name} call {outcome}."
        if step.action.type == "say":
            if turn_results:
                names = ", ".join(dict.fromkeys(r.name for r in turn_results))
                failed = (
                    " (one call failed, which I have to explain)"
                    if not all(r.ok for r in turn_results)
                    else ""
                )
                basis = f"I have the results of {names}{failed}"
            else:
                basis = "No tool is needed for this message"
            return f"{opening} {basis}; {_say_intent(step.action.text)[0]}."
        return f"{opening} Next I call {step.action.name}{self._arguments(request)}."

    def _arguments(self, request: NarrationRequest) -> str:
        arguments = request.step.action.arguments or {}
        if not arguments:
            return " (it takes no arguments)"
        user_text = " ".join(e.text for e in request.history if isinstance(e, User))
        users = normalise(user_text, numbers="canonical")
        results = [e for e in request.history if isinstance(e, ToolOutput)]
        parts = []
        for name, value in arguments.items():
            origin = "not stated so far"
            if value_in(value, users):
                origin = "from the user"
            else:
                source = next(
                    (
                        r
                        for r in reversed(results)
                        if value_in(value, normalise(r.text, numbers="canonical"))
                    ),
                    None,
                )
                if source is not None:
                    origin = f"from the {source.name} result"
            shown = (
                render_value(value) if not isinstance(value, (dict, list)) else json.dumps(value)
            )
            parts.append(f"{slot_label(name)} = {_excerpt(shown, 60)} ({origin})")
        return " with " + "; ".join(parts)

    def plan(self, request: NarrationRequest) -> str:
        lines = []
        for step in request.turn_steps:
            if step.action.type == "tool":
                names = ", ".join(step.action.arguments or {})
                lines.append(f"Call {step.action.name}" + (f" ({names})" if names else ""))
            else:
                lines.append(_say_intent(step.action.text)[1])
        return "\n".join(f"{i}. {line}." for i, line in enumerate(lines, 1))


class BackendNarrator(ScriptedNarrator):
    """Think/plan written by a language model, batched; scripted text where a reply fails.

    Args:
        backend: anything with ``complete(prompts, max_new_tokens=..., temperature=...)``.
        max_new_tokens: generation budget per step.
    """

    def __init__(self, backend: Any, max_new_tokens: int = 256) -> None:
        super().__init__()
        self.backend, self.spec = backend, getattr(backend, "spec", "backend")
        self.max_new_tokens = max_new_tokens

    def narrate(self, requests: list[NarrationRequest]) -> list[Narration]:
        prompts = [narration_prompt(request) for request in requests]
        replies = self.backend.complete(prompts, max_new_tokens=self.max_new_tokens)
        out = []
        for request, reply in zip(requests, replies, strict=True):
            scripted = self.narration(request)
            think = _THINK.search(reply or "")
            plan = _PLAN.search(reply or "")
            use_think = _usable(think) and not request.step.source_thought
            need_plan = scripted.plan is not None
            use_plan = need_plan and _usable(plan)
            if not use_think and not request.step.source_thought or need_plan and not use_plan:
                self.fallbacks += 1
            out.append(
                Narration(
                    _clean(think.group(1), "think") if use_think else scripted.think,
                    _clean(plan.group(1), "plan") if use_plan else scripted.plan,
                )
            )
        return out


def _usable(match: re.Match[str] | None) -> bool:
    # An echo of the prompt's answer template ("..." / "1. ...") is not reasoning.
    return match is not None and match.group(1).strip() not in ("", "...", "1. ...")


def _render_event(event: Event) -> str:
    if isinstance(event, User):
        return f"USER: {_excerpt(event.text, 500)}"
    if isinstance(event, ToolOutput):
        return f"TOOL RESULT ({event.name}): {_excerpt(event.text, 500)}"
    if event.action.type == "say":
        return f"ASSISTANT: {_excerpt(event.action.text, 500)}"
    call = json.dumps({"name": event.action.name, "arguments": event.action.arguments})
    return f"ASSISTANT CALLS: {call}"


def narration_prompt(request: NarrationRequest, max_events: int = 12) -> str:
    """The prompt asking a model for the think (and plan) of one known step."""
    tools = "\n".join(
        f"- {name}: {_excerpt(spec.get('description', ''), 120)}"
        for name, spec in request.tools.items()
    )
    history = "\n".join(_render_event(e) for e in request.history[-max_events:])
    first = request.step.step_index == 0
    steps = "\n".join(f"- {_render_event(s)}" for s in request.turn_steps)
    hint = (
        f"\nThe assistant's own note: {request.step.source_thought}"
        if request.step.source_thought
        else ""
    )
    want = "<think>...</think>\n<plan>1. ...</plan>" if first else "<think>...</think>"
    return (
        "You write the hidden reasoning of a customer-service assistant that uses tools.\n"
        f"Tools:\n{tools or '- none'}\n\nConversation so far:\n{history}\n\n"
        f"The assistant's next action is fixed:\n{_render_event(request.step)}{hint}\n"
        f"Its actions for the rest of this turn:\n{steps}\n\n"
        "Explain in the think block why this action is the right next step, using only facts "
        "from the conversation"
        + (", and give a numbered plan of the turn's actions in the plan block" if first else "")
        + f". Answer with exactly:\n{want}"
    )
