"""Simulation agents: the shared protocol, scripted and LLM user/assistant, the tool agent.

``make_agent(role, spec, scenario, domain=...)`` is the one factory: ``spec`` is ``scripted`` (the
offline, deterministic default) or any backend spec of :mod:`simulation.backends`
(``transformers:<model>``, ``openai:<model>@<url>``, ``fake:`` in tests). The tool agent is
always the backend-backed :class:`BackendToolAgent` (spec ``backend``).

The package owns the agents and everything they say: `protocol`, `user`, `assistant` (with
`grounding`, `recovery`), `llm` and `prompts` (LLM agents); the wording as data, loaded and
checked by `wording` — the phrase sets (``user_phrases.json``, ``assistant_phrases.json``,
``slot_forms.json``), the prompts' text (``prompts.json``), the cue words (``cues.json``) and
the rules' word lists (``word_lists.json``) beside the mined SGD phrasebank
(``phrasebank.sgd-train.json``, `phrasebank`); `phrasing`, `speech`, `slot_forms`, `style` and
`objective` realise it; `settings` holds every probability; `text` is the one home of the cue
detectors (yes/no, decline, completion).

Example:
    >>> from mads_bench.catalog import load_domain
    >>> mock = load_domain("mock")
    >>> make_agent("user", "scripted", mock.scenarios[0], domain=mock).spec
    'scripted'
"""

from __future__ import annotations

from typing import Any

from mads_bench.catalog import Domain
from mads_bench.data_model import Scenario
from simulation.agents.assistant import ScriptedAssistant
from simulation.agents.llm import LLMAssistant, LLMUser
from simulation.agents.protocol import BackendToolAgent, Participant
from simulation.agents.user import ScriptedUser

__all__ = [
    "BackendToolAgent",
    "LLMAssistant",
    "LLMUser",
    "Participant",
    "ScriptedAssistant",
    "ScriptedUser",
    "make_agent",
]

ROLES = ("user", "assistant", "tool")


def make_agent(
    role: str,
    spec: str,
    scenario: Scenario,
    *,
    domain: Domain,
    seed: int = 0,
    style: str = "pre_act",
    context: str = "full",
    backend: Any = None,
    **generation: Any,
) -> Participant:
    """Build one participant for a conversation.

    Args:
        role: ``user``, ``assistant`` or ``tool``.
        spec: ``scripted`` or a backend spec (``transformers:<path>``, ``openai:<m>@<url>``);
            ``backend`` for the tool role.
        scenario: the scenario being simulated.
        domain: its loaded domain pack (handed down from the environment).
        seed: conversation seed.
        style: assistant step style, ``pre_act`` or ``react``.
        context: what a model assistant reads, ``full`` or ``compact``
            (:mod:`simulation.agents.context`; the scripted agents read the full view).
        backend: an already built backend for ``spec`` (shared across conversations);
            built with ``simulation.backends.get_backend(spec)`` when omitted.
        **generation: ``max_new_tokens`` / ``temperature`` for LLM agents.

    Returns:
        `Participant`: an object with ``spec`` and ``respond(view) -> Message``.
    """
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {ROLES}")
    if role == "tool":
        if spec != "backend":
            raise ValueError(f"tool agent spec must be 'backend' (the tool backend), got {spec!r}")
        return BackendToolAgent(scenario, seed, domain=domain)
    if spec == "scripted":
        if role == "user":
            return ScriptedUser(scenario, seed, domain=domain)
        return ScriptedAssistant(scenario, seed, style=style, domain=domain)
    if backend is None:
        from simulation.backends import get_backend

        backend = get_backend(spec)
    if role == "user":
        return LLMUser(backend, scenario, seed, domain=domain, **generation)
    return LLMAssistant(backend, seed, context=context, **generation)
