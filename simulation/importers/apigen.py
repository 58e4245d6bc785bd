"""APIGen-MT conversations -> Pre-Act :class:`~mads_bench.data_model.Trajectory` records.

Source format (Salesforce/APIGen-MT-5k, ShareGPT-like; a JSON array or JSONL)::

    {"conversations": [{"from": "human" | "gpt" | "function_call" | "observation",
                        "value": "..."}],
     "tools": "<JSON string: a list of tool specs>", "system": "<domain policy>"}

Mapping (one user turn = a ``human`` message and everything up to the next one):

- ``human`` -> user message (consecutive ones are merged);
- ``function_call`` (``{"name", "arguments"}`` as JSON text or object) -> an assistant tool
  step with a :class:`ToolCall`; the ``observation`` right after it -> a tool message with a
  :class:`ToolResult` (``ok`` is False for ``{"error": ...}`` or text starting "Error");
- ``gpt`` -> the turn's closing ``say`` step (consecutive ones are merged);
- a ``think`` function call (tau-bench's reasoning tool) is not a step: its thought becomes
  the ``<think>`` of the next step and its observation is dropped.

The ``<think>`` / ``<plan>`` of every step come from a narrator (:mod:`.narration`). The
system message holds the source's policy, the tools in OpenAI format and the same Pre-Act
format text and rules as simulated trajectories (so ``restyle_prompt`` works on them).
A record that breaks this grammar raises :class:`ImportProblem` naming the message.
"""

from __future__ import annotations

import json
from typing import Any

from mads_bench.data_model import Message, ToolCall, ToolResult, Trajectory
from mads_bench.errors import MadsBenchError
from mads_bench.pre_act import Action, PreActParseError, PreActStep, parse_step, render_step
from simulation.agents.prompts import ASSISTANT_RULES, STEP_FORMATS
from simulation.importers.narration import (
    Event,
    Narration,
    NarrationRequest,
    Step,
    ToolOutput,
    User,
)

ROLES = ("human", "gpt", "function_call", "observation")
THINK_TOOL = "think"


class ImportProblem(MadsBenchError, ValueError):
    """A source record that cannot be converted (the message names where and why)."""


def parse_tools(raw: Any) -> dict[str, dict[str, Any]]:
    """Tool specs by name, in OpenAI function format, from a JSON string or a list.

    Example:
        >>> parse_tools('[{"name": "f", "description": "d", "parameters": {}}]')["f"]["name"]
        'f'
    """
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else []
        except ValueError as err:
            raise ImportProblem(f"tools: not valid JSON ({err})") from None
    if not isinstance(raw, list):
        raise ImportProblem(f"tools: expected a list of tool specs, got {type(raw).__name__}")
    tools = {}
    for index, spec in enumerate(raw):
        function = spec.get("function", spec) if isinstance(spec, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ImportProblem(f"tools[{index}]: a tool spec needs a string 'name'")
        tools[function["name"]] = {
            "name": function["name"],
            "description": str(function.get("description", "")),
            "parameters": function.get("parameters") or {"type": "object", "properties": {}},
        }
    return tools


def _parse_call(value: Any, where: str) -> tuple[str, dict[str, Any]]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as err:
            raise ImportProblem(f"{where}: function_call is not valid JSON ({err})") from None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise ImportProblem(f"{where}: function_call needs a JSON object with a string 'name'")
    arguments = value.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            raise ImportProblem(f"{where}: function_call arguments are not valid JSON") from None
    if not isinstance(arguments, dict):
        raise ImportProblem(f"{where}: function_call arguments must be a JSON object")
    return value["name"], arguments


def _tool_output(value: Any) -> tuple[str, Any, bool]:
    """(text the model reads, structured content, ok) of an observation."""
    if isinstance(value, str):
        text = value
        try:
            content = json.loads(value)
        except ValueError:
            content = value
    else:
        text, content = json.dumps(value, ensure_ascii=False), value
    failed = (isinstance(content, dict) and "error" in content) or (
        isinstance(content, str) and content.strip().casefold().startswith("error")
    )
    return text, content, not failed


def parse_conversation(record: dict[str, Any]) -> tuple[list[Event], dict[str, dict], str]:
    """(events, tools by name, source system prompt) of one record, checking the grammar."""
    turns = record.get("conversations")
    if not isinstance(turns, list) or not turns:
        raise ImportProblem("'conversations' must be a non-empty list")
    tools = parse_tools(record.get("tools"))
    system = record.get("system") or ""
    if not isinstance(system, str):
        raise ImportProblem("'system' must be a string")
    events: list[Event] = []
    turn, step, calls, said = -1, 0, 0, False
    pending: Step | str | None = None  # the call awaiting its observation ("think" if folded)
    thoughts: list[str] = []
    for k, message in enumerate(turns):
        where = f"conversations[{k}]"
        if not isinstance(message, dict) or "from" not in message or "value" not in message:
            raise ImportProblem(f"{where}: needs 'from' and 'value'")
        role, value = message["from"], message["value"]
        if role not in ROLES:
            raise ImportProblem(f"{where}: unknown role {role!r}; expected one of {ROLES}")
        if pending is not None and role != "observation":
            raise ImportProblem(f"{where}: the function_call before it has no observation")
        if role in ("human", "gpt") and (not isinstance(value, str) or not value.strip()):
            raise ImportProblem(f"{where}: empty {role} message")
        if role == "human":
            if events and isinstance(events[-1], User):
                events[-1].text += "\n\n" + value
                continue
            if turn >= 0 and not said:
                raise ImportProblem(f"{where}: turn {turn} ends without a gpt reply")
            turn, step, said = turn + 1, 0, False
            events.append(User(value, turn))
        elif turn < 0:
            raise ImportProblem(f"{where}: the conversation must open with a human message")
        elif role == "gpt":
            last = events[-1]
            text = last.action.text + "\n\n" + value if said and isinstance(last, Step) else value
            try:
                action = Action.say(text)
            except ValueError as err:
                raise ImportProblem(f"{where}: unusable reply: {err}") from None
            if said:
                last.action = action
            else:
                thought = "\n".join(thoughts) or None
                events.append(Step(action, turn, step, source_thought=thought))
                step, said, thoughts = step + 1, True, []
        elif role == "function_call":
            if said:
                raise ImportProblem(f"{where}: function_call after the gpt reply of turn {turn}")
            name, arguments = _parse_call(value, where)
            if name == THINK_TOOL:
                thoughts += [str(v) for v in arguments.values() if isinstance(v, str)]
                pending = THINK_TOOL
                continue
            if tools and name not in tools:
                raise ImportProblem(f"{where}: function_call names unknown tool {name!r}")
            call = Step(Action.tool(name, arguments), turn, step, f"call_{calls}")
            call.source_thought, thoughts = "\n".join(thoughts) or None, []
            events.append(call)
            step, calls, pending = step + 1, calls + 1, call
        else:
            if pending is None:
                raise ImportProblem(f"{where}: observation without a function_call before it")
            if isinstance(pending, Step):
                text, content, ok = _tool_output(value)
                name, call_id = pending.action.name, pending.call_id
                events.append(
                    ToolOutput(name, call_id, text, content, ok, turn, pending.step_index)
                )
            pending = None
    if pending is not None:
        raise ImportProblem("the last function_call has no observation")
    if not said and not isinstance(events[-1], User):
        raise ImportProblem(f"turn {turn} ends without a gpt reply")
    if not any(isinstance(e, Step) for e in events):
        raise ImportProblem("no assistant reply in the conversation")
    return events, tools, system


def narration_requests(events: list[Event], tools: dict[str, dict]) -> list[NarrationRequest]:
    """One request per assistant step, in order."""
    steps = [e for e in events if isinstance(e, Step)]
    return [
        NarrationRequest(
            history=events[:position],
            step=event,
            turn_steps=[s for s in steps if s.turn_index == event.turn_index],
            tools=tools,
        )
        for position, event in enumerate(events)
        if isinstance(event, Step)
    ]


def system_prompt(tools: dict[str, dict], source_system: str) -> str:
    """The assistant's system message of an imported trajectory."""
    lines = "\n".join(
        json.dumps({"type": "function", "function": spec}, ensure_ascii=False)
        for spec in tools.values()
    )
    head = source_system.strip() or "You are a customer-service assistant."
    return (
        f"{head}\n\nTools (OpenAI function format, one per line):\n{lines}\n\n"
        f"{STEP_FORMATS['pre_act']}\n\n{ASSISTANT_RULES}"
    )


def build_trajectory(
    events: list[Event],
    tools: dict[str, dict],
    source_system: str,
    narrations: list[Narration],
    *,
    trajectory_id: str,
    scenario_id: str,
    domain: str,
    narrator_spec: str,
) -> Trajectory:
    """Assemble the trajectory; every assistant step is checked with the strict parser."""
    messages = [Message(role="system", content=system_prompt(tools, source_system), turn_index=0)]
    pending = iter(narrations)
    for event in events:
        if isinstance(event, User):
            messages.append(Message(role="user", content=event.text, turn_index=event.turn_index))
        elif isinstance(event, ToolOutput):
            result = ToolResult(
                call_id=event.call_id, name=event.name, ok=event.ok, content=event.content
            )
            messages.append(
                Message(
                    role="tool",
                    content=event.text,
                    turn_index=event.turn_index,
                    step_index=event.step_index,
                    tool_result=result,
                )
            )
        else:
            narration = next(pending)
            try:
                step = PreActStep(think=narration.think, plan=narration.plan, action=event.action)
                text = render_step(step)
                parse_step(text)
            except (ValueError, PreActParseError) as err:
                raise ImportProblem(
                    f"turn {event.turn_index} step {event.step_index}: {err}"
                ) from None
            call = None
            if event.action.type == "tool":
                call = ToolCall(
                    id=event.call_id, name=event.action.name, arguments=event.action.arguments
                )
            messages.append(
                Message(
                    role="assistant",
                    content=text,
                    turn_index=event.turn_index,
                    step_index=event.step_index,
                    tool_call=call,
                )
            )
    return Trajectory(
        id=trajectory_id,
        scenario_id=scenario_id,
        domain=domain,
        complexity="normal",
        persona=f"{domain}_user",
        seed=0,
        backends={"user": "apigen", "assistant": f"apigen+{narrator_spec}", "tool": "apigen"},
        messages=messages,
        end_reason="done",
    )
