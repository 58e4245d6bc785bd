"""Prompts written for this project: the assistant's system prompt and the user agent's brief.

The assistant system prompt is stored as the first message of every trajectory (whatever
the backend), so the SFT/GRPO rows built from it carry the tools and the format. It renders
the domain, the tools (``ToolSpec.signature()``, one compact line each) and the Pre-Act rules
of SPEC §4.1. The user prompt renders the persona, the objective, the slots (hard
constraints vs soft preferences) and the conversational behaviors as instructions.
"""

from __future__ import annotations

import re

from mads_bench.catalog import load_domain, load_personas
from mads_bench.data_model import Scenario
from simulation.agents.text import DONE_TOKEN, render_value, slot_label

STEP_FORMATS = {
    "pre_act": """Answer every time with exactly one step in this format:
<think>your reasoning about the situation</think>
<plan>a numbered plan for the rest of this turn</plan>   (first step of a turn only)
<action type="tool">{"name": "<tool name>", "arguments": {...}}</action>
or
<action type="say">what you tell the user</action>""",
    "react": """Answer every time with exactly one step in this format:
<think>your reasoning about the situation</think>
<action type="tool">{"name": "<tool name>", "arguments": {...}}</action>
or
<action type="say">what you tell the user</action>""",
}

ASSISTANT_RULES = """Rules:
- One action per step. A tool step is answered by a tool result; a turn ends with one say.
- Use only values the user gave or a tool returned; ask for anything that is missing.
- Confirm with the user before any write tool (bookings, payments, cancellations).
- If a tool times out or fails with a server error, retry once, then tell the user.
- If a request is refused by a rule or cannot be done, explain why and offer alternatives."""

_BEHAVIOR_TEXT = {
    "partial_information": "Do not mention {slots} until the assistant asks for them.",
    "incremental_constraint_revelation": (
        "Reveal these details one per message, in this order, after your first message: {slots}."
    ),
    "adversarial_tone": "Sound {intensity}ly frustrated and sceptical of the assistant.",
}


def assistant_system_prompt(scenario: Scenario, style: str = "pre_act") -> str:
    """The assistant's system message: domain, tools as JSON, and the step format.

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> prompt = assistant_system_prompt(load_domain("mock").scenarios[0])
        >>> "- cancel_order(order_id: string) [write]" in prompt and "<plan>" in prompt
        True
    """
    domain = load_domain(scenario.domain)
    tools = "\n".join(f"- {tool.signature()}" for tool in domain.tools_for(scenario))
    return (
        f"You are a {domain.manifest.title.lower()} assistant. {domain.manifest.description}\n"
        f"Today is {domain.manifest.today.isoformat()}.\n\n"
        f"{_TOOLS_HEADER}\n{tools}\n\n"
        f"{STEP_FORMATS[style]}\n\n{ASSISTANT_RULES}"
    )


_TOOLS_HEADER = (
    "Tools (name(arguments) [read or write]: what it does; ? marks an optional argument):"
)
_BRIEF_TOOLS_HEADER = "Tools (name(arguments) [read or write]; ? marks an optional argument):"
_TOOL_LINE = re.compile(r"^(- \w+\(.*\) \[(?:read|write)\]): .*$", re.MULTILINE)


def brief_system_prompt(system: str) -> str:
    r"""The same assistant system message with each tool cut to its signature (no description).

    Roughly halves the system message (about 1.3k -> 0.5k SmolLM2 tokens for a 12-tool
    domain); names, argument types, enums and read/write tags stay. A system message this
    module did not write (an imported one) is returned unchanged.

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> brief = brief_system_prompt(assistant_system_prompt(load_domain("mock").scenarios[0]))
        >>> "- cancel_order(order_id: string) [write]\n" in brief
        True
    """
    if _TOOLS_HEADER not in system:
        return system
    return _TOOL_LINE.sub(r"\1", system.replace(_TOOLS_HEADER, _BRIEF_TOOLS_HEADER))


def user_system_prompt(scenario: Scenario) -> str:
    """The user agent's brief: persona, objective, slot values and behaviors."""
    persona = load_personas()[scenario.persona]
    samples = "\n".join(f"- {m}" for m in persona.sample_messages)
    hard = (
        "\n".join(
            f"- {slot_label(k)}: {render_value(v)}" for k, v in scenario.hard_constraints.items()
        )
        or "- none"
    )
    soft = (
        "\n".join(
            f"- {slot_label(k)}: {render_value(v)}" for k, v in scenario.soft_preferences.items()
        )
        or "- none"
    )
    lines = []
    for behavior in scenario.behaviors:
        if behavior.kind == "goal_revision":
            changes = ", ".join(
                f"{slot_label(k)} to {render_value(v)}" for k, v in behavior.revised_slots.items()
            )
            goal = f" New goal: {behavior.revised_objective}" if behavior.revised_objective else ""
            lines.append(
                f"After your message number {behavior.after_user_turn}, change your mind: "
                f"{changes or 'see the new goal'}.{goal}"
            )
        elif behavior.kind in _BEHAVIOR_TEXT:
            names = getattr(behavior, "withheld", None) or getattr(behavior, "reveal_order", [])
            lines.append(
                _BEHAVIOR_TEXT[behavior.kind].format(
                    slots=", ".join(slot_label(n) for n in names),
                    intensity=getattr(behavior, "intensity", ""),
                )
            )
    behaviors = "\n".join(f"- {line}" for line in lines) or "- none"
    return (
        f"You are {persona.name}, {persona.age}, from {persona.hometown}; {persona.occupation}. "
        f"{persona.background}\n\nHow you write: {persona.writing_style}\nExamples of your "
        f"messages:\n{samples}\n\nYou are talking to a customer-service assistant. Your goal: "
        f"{scenario.objective}\nMust hold (hard constraints):\n{hard}\nNice to have (you may "
        f"give these up):\n{soft}\nBehave like this:\n{behaviors}\n\nWrite only your own next "
        "message, in your own voice. Never act as the assistant or offer help. Answer the "
        "assistant's questions from the details above. When the task is done, or the "
        f"assistant has explained why it cannot be done and offered alternatives, write a short "
        f"closing line followed by {DONE_TOKEN}."
    )


def restyle_prompt(messages: list[dict[str, str]], style: str) -> list[dict[str, str]]:
    """The same prompt with the system message's step format switched to ``style``.

    Used to evaluate ReAct prompting on rows built from Pre-Act trajectories.

    Raises:
        `ValueError`: If the first message is not a system prompt written by this module.

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> system = assistant_system_prompt(load_domain("mock").scenarios[0])
        >>> react = restyle_prompt([{"role": "system", "content": system}], "react")
        >>> "<plan>" in react[0]["content"]
        False
    """
    if style not in STEP_FORMATS:
        raise ValueError(f"unknown style {style!r}; known: {sorted(STEP_FORMATS)}")
    if not messages or messages[0]["role"] != "system":
        raise ValueError("the prompt has no system message to restyle")
    system = messages[0]["content"]
    current = next((s for s, text in STEP_FORMATS.items() if text in system), None)
    if current is None:
        raise ValueError("the system message does not contain a mads-bench step format")
    restyled = system.replace(STEP_FORMATS[current], STEP_FORMATS[style])
    return [{**messages[0], "content": restyled}, *messages[1:]]
