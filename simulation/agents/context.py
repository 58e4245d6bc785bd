"""How much of the conversation a model assistant reads: ``full`` or ``compact``.

The dataset's step prompts (``build-dataset --context``) and a model assistant in a live
conversation (``eval online --context``) read the same view, so a policy is evaluated online
on the prompts it was trained on.

``full`` (the default) is the conversation exactly as simulated. ``compact`` is for small
models and CPU budgets, where every prompt token costs training and inference time:

- the system message lists each tool by its signature only (name, typed arguments, enums,
  read/write; no description), see :func:`simulation.agents.prompts.brief_system_prompt`;
- assistant steps of *earlier* turns keep only their action (``<think></think>`` then the
  ``<action>``), the way reasoning-model chat templates drop old reasoning; the steps of the
  current turn (after the last user message) stay whole, so the plan being followed is seen.

User messages and tool results are untouched, so every value a gold action uses is still in
the prompt. On the scripted MADS data this cuts SmolLM2 prompt tokens by about 30 %.

Example:
    >>> chat = [{"role": "system", "content": "Be brief."},
    ...         {"role": "user", "content": "Hi"},
    ...         {"role": "assistant", "content": "<think>greet</think>\\n"
    ...          "<plan>1. greet</plan>\\n<action type=\\"say\\">Hello!</action>"},
    ...         {"role": "user", "content": "Cancel A-1"}]
    >>> print(compact_context(chat)[2]["content"])
    <think></think>
    <action type="say">Hello!</action>
"""

from __future__ import annotations

from mads_bench.pre_act import PreActStep, parse_step, render_step
from simulation.agents.prompts import brief_system_prompt

__all__ = ["CONTEXTS", "apply_context", "compact_context"]

CONTEXTS = ("full", "compact")


def _action_only(content: str) -> str:
    action = parse_step(content, strict=False).action
    return content if action is None else render_step(PreActStep(think="", action=action))


def compact_context(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The ``compact`` view of a prompt (see the module docstring); the input is not changed.

    Args:
        messages (`list[dict]`): ``{role, content}`` messages, system message first.

    Returns:
        `list[dict]`: The same messages, shortened.
    """
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    current_turn = users[-1] if users else len(messages)
    out = []
    for i, message in enumerate(messages):
        content = message["content"]
        if i == 0 and message["role"] == "system":
            content = brief_system_prompt(content)
        elif message["role"] == "assistant" and i < current_turn:
            content = _action_only(content)
        out.append({**message, "content": content})
    return out


def apply_context(messages: list[dict[str, str]], context: str) -> list[dict[str, str]]:
    """``messages`` in the named context (``full`` returns them as they are).

    Raises:
        `ValueError`: For an unknown context name.
    """
    if context not in CONTEXTS:
        raise ValueError(f"unknown context {context!r}; expected one of {CONTEXTS}")
    return list(messages) if context == "full" else compact_context(messages)
