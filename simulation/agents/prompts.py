"""Prompts written for this project: the assistant's system prompt and the user agent's brief.

The assistant system prompt is stored as the first message of every trajectory (whatever
the backend), so the SFT/GRPO rows built from it carry the tools and the format. It renders
the domain, the tools (``ToolSpec.signature()``, one compact line each) and the Pre-Act rules
of SPEC §4.1. The user prompt renders the persona, the objective, the slots (hard
constraints vs soft preferences) and the conversational behaviors as instructions. Their fixed
text (step formats, rules, behaviour lines) is data, ``prompts.json`` beside this module.
"""

from __future__ import annotations

import re

from mads_bench.catalog import Domain, load_personas
from mads_bench.data_model import Scenario
from simulation.agents.text import DONE_TOKEN, render_value, slot_label
from simulation.agents.wording import prompt_text

_TEXT = prompt_text()
STEP_FORMATS = _TEXT.step_formats
ASSISTANT_RULES = _TEXT.assistant_rules


def assistant_system_prompt(domain: Domain, scenario: Scenario, style: str = "pre_act") -> str:
    """The assistant's system message: domain, tools as JSON, and the step format.

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> mock = load_domain("mock")
        >>> prompt = assistant_system_prompt(mock, mock.scenarios[0])
        >>> "- cancel_order(order_id: string) [write]" in prompt and "<plan>" in prompt
        True
    """
    tools = "\n".join(f"- {tool.signature()}" for tool in domain.tools_for(scenario))
    policy = (
        f"\n\nDomain policy:\n{domain.manifest.policy.strip()}" if domain.manifest.policy else ""
    )
    manifest = domain.manifest
    return _TEXT.assistant_prompt.format(
        title=manifest.title.lower(), description=manifest.description, tools=tools,
        today=manifest.today.isoformat(), tools_header=_TEXT.tools_header, policy=policy,
        step_format=STEP_FORMATS[style], rules=ASSISTANT_RULES,
    )  # fmt: skip


_TOOL_LINE = re.compile(r"^(- \w+\(.*\) \[(?:read|write)\]): .*$", re.MULTILINE)


def brief_system_prompt(system: str) -> str:
    r"""The same assistant system message with each tool cut to its signature (no description).

    Roughly halves the system message (about 1.3k -> 0.5k SmolLM2 tokens for a 12-tool
    domain); names, argument types, enums and read/write tags stay. A system message this
    module did not write (an imported one) is returned unchanged.

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> mock = load_domain("mock")
        >>> brief = brief_system_prompt(assistant_system_prompt(mock, mock.scenarios[0]))
        >>> "- cancel_order(order_id: string) [write]\n" in brief
        True
    """
    if _TEXT.tools_header not in system:
        return system
    return _TOOL_LINE.sub(r"\1", system.replace(_TEXT.tools_header, _TEXT.brief_tools_header))


def user_system_prompt(domain: Domain, scenario: Scenario) -> str:
    """The user agent's brief: persona, situation, what the user knows, behaviors and rules.

    The rules keep an LLM user in its part: one message in its own voice, never the
    assistant's side, details only from the brief (it says it does not know the rest), no
    word about being briefed or simulated, and the closing line with the done token.

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> mock = load_domain("mock")
        >>> brief = user_system_prompt(mock, mock.scenarios[0])
        >>> "Never say or hint that you were given" in brief
        True
    """
    persona = load_personas()[scenario.persona]
    samples = "\n".join(f"- {m}" for m in persona.sample_messages)
    hard = _slot_lines(scenario.hard_constraints)
    soft = _slot_lines(scenario.soft_preferences)
    lines = []
    for behavior in scenario.behaviors:
        if behavior.kind == "goal_revision":
            changes = ", ".join(
                f"{slot_label(k)} to {render_value(v)}" for k, v in behavior.revised_slots.items()
            )
            goal = f" New goal: {behavior.revised_objective}" if behavior.revised_objective else ""
            turn, changes = behavior.after_user_turn, changes or "see the new goal"
            lines.append(_TEXT.goal_revision.format(turn=turn, changes=changes, goal=goal))
        elif behavior.kind in _TEXT.behaviors:
            names = getattr(behavior, "withheld", None) or getattr(behavior, "reveal_order", [])
            slots = ", ".join(slot_label(n) for n in names)
            intensity = getattr(behavior, "intensity", "")
            lines.append(_TEXT.behaviors[behavior.kind].format(slots=slots, intensity=intensity))
    if scenario.impossible:  # the user may not know it; the assistant's fallback stays hidden
        lines.append(_TEXT.impossible)
    behaviors = "\n".join(f"- {line}" for line in lines) or "- nothing special"
    if scenario.user_brief:  # who the user is comes with the brief: the persona lends its voice
        who, situation = _TEXT.who_brief, _TEXT.situation.format(brief=scenario.user_brief.strip())
    else:
        who, situation = _TEXT.who_persona.format(**persona.model_dump()), ""
    return _TEXT.user_prompt.format(
        who=who, writing_style=persona.writing_style, samples=samples, title=domain.manifest.title,
        objective=scenario.objective, situation=situation, hard=hard, soft=soft,
        behaviors=behaviors, rules=USER_RULES,
    )  # fmt: skip


USER_RULES = _TEXT.user_rules.format(done_token=DONE_TOKEN)


def _slot_lines(slots: dict) -> str:
    return "\n".join(f"- {slot_label(k)}: {render_value(v)}" for k, v in slots.items()) or "- none"


_SPEAKER_LABEL = re.compile(r"^\s*(?:user|customer|me|you|client)\s*:\s*", re.IGNORECASE)
_OTHER_SIDE = re.compile(
    r"^\s*(?:assistant|agent|system|support|bot)\s*:", re.IGNORECASE | re.MULTILINE
)
_QUOTES = {'"': '"', "\u201c": "\u201d", "'": "'"}


def parse_user_reply(text: str, name: str = "") -> tuple[str, list[str]]:
    r"""Clean an LLM user's raw reply into one user message, listing what had to be repaired.

    A leading speaker label ("User:", the persona's first name) and quotes around the whole
    reply are removed; a reply that goes on to write the assistant's side ("Assistant: ...") is
    cut there; anything after the done token is dropped; an empty reply is the done token.

    Example:
        >>> text, problems = parse_user_reply('User: "Cancel order 7."\nAssistant: Sure!')
        >>> text, len(problems)
        ('Cancel order 7.', 3)
    """
    problems: list[str] = []
    text = text.strip()
    first = name.split()[0] if name.strip() else ""
    label = _SPEAKER_LABEL.match(text) or (
        re.match(rf"^\s*{re.escape(first)}\s*:\s*", text, re.IGNORECASE) if first else None
    )
    if label:
        text, problems = text[label.end() :], [*problems, "speaker label removed"]
    other = _OTHER_SIDE.search(text)
    if other:
        text = text[: other.start()].rstrip()
        problems.append("cut where the reply wrote the assistant part")
    if DONE_TOKEN in text:
        head, _, tail = text.partition(DONE_TOKEN)
        if tail.strip():
            problems.append(f"text after {DONE_TOKEN} dropped")
        text = f"{head.strip()} {DONE_TOKEN}".strip()
    body = text.removesuffix(DONE_TOKEN).strip()
    if len(body) >= 2 and _QUOTES.get(body[0]) == body[-1]:
        text = text.replace(body, body[1:-1].strip(), 1)
        problems.append("quotes removed")
    return (text.strip() or DONE_TOKEN), problems


def restyle_prompt(messages: list[dict[str, str]], style: str) -> list[dict[str, str]]:
    """The same prompt with the system message's step format switched to ``style``.

    Used to evaluate ReAct prompting on rows built from Pre-Act trajectories.

    Raises:
        `ValueError`: If the first message is not a system prompt written by this module.

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> mock = load_domain("mock")
        >>> system = assistant_system_prompt(mock, mock.scenarios[0])
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
