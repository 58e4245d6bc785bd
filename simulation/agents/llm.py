"""LLM-driven user and assistant agents on top of the backend registry (``simulation.backends``).

Both take a built backend (anything with ``generate(conversations, max_new_tokens,
temperature, seed, stop) -> list[str]``), so one loaded model serves many conversations.
The assistant sends its view as chat messages (system, user, assistant, tool) and stops
at ``</action>``; the stop string is put back so the step can be parsed. The user sees the
conversation from its side: its brief as the system message, the assistant's ``say`` texts
as ``user`` messages and its own messages as ``assistant`` messages.
"""

from __future__ import annotations

from typing import Any

from mads_bench.catalog import Domain, load_personas
from mads_bench.data_model import CONVERSATIONAL_KINDS, InjectionRecord, Message, Scenario
from simulation.agents.context import apply_context
from simulation.agents.prompts import parse_user_reply, user_system_prompt

_OPENING_CUE = "(The assistant is waiting. Write your first message.)"


def generate_steps(
    backend: Any,
    conversations: list[list[dict[str, str]]],
    *,
    max_new_tokens: int,
    temperature: float = 0.0,
    seed: int = 0,
    drafts: list[str] | None = None,
) -> list[str]:
    """One Pre-Act step per conversation: generation stops at the first ``</action>``.

    A step has exactly one action, so whatever a model would write after it is never part of
    the step; the stop string is put back so the step parses. The assistant agent and the
    L-1/L-2 evaluation (``evaluators.predict``) both produce steps this way. ``drafts``: the
    step each conversation is expected to get (see `ChatBackend.generate`).

    Example:
        >>> from simulation.backends import get_backend
        >>> lm = get_backend('fake:<think>t</think> <action type="say">Hi</action> and more')
        >>> generate_steps(lm, [[{"role": "user", "content": "hi"}]], max_new_tokens=8)
        ['<think>t</think> <action type="say">Hi</action>']
    """
    texts = backend.generate(
        conversations,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        seed=seed,
        stop=["</action>"],
        drafts=drafts,
    )
    return [
        text.rstrip() + "</action>"
        if "<action" in text and not text.rstrip().endswith("</action>")
        else text
        for text in texts
    ]


class LLMAssistant:
    """Assistant whose Pre-Act steps come from a language model.

    Args:
        backend: a chat backend (see :mod:`simulation.backends`).
        seed: sampling seed (used when ``temperature > 0``).
        max_new_tokens: generation budget per step.
        temperature: 0 for greedy decoding.
        context: what the model reads, ``full`` or ``compact`` (:mod:`simulation.agents.context`:
            the view a dataset built with ``--context compact`` trained it on).
    """

    def __init__(
        self,
        backend: Any,
        seed: int = 0,
        max_new_tokens: int = 384,
        temperature: float = 0.0,
        context: str = "full",
    ) -> None:
        apply_context([], context)  # an unknown context fails here, before any conversation
        self.backend, self.seed, self.context = backend, seed, context
        self.spec = backend.spec
        self.max_new_tokens, self.temperature = max_new_tokens, temperature

    def respond(self, view: list[Message]) -> Message:
        """One step: the raw model output (``</action>`` restored after the stop string)."""
        conversation = [{"role": m.role, "content": m.content} for m in view]
        conversation = apply_context(conversation, self.context)
        (text,) = generate_steps(
            self.backend,
            [conversation],
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            seed=self.seed,
        )
        return Message(role="assistant", content=text.strip(), turn_index=0)


class LLMUser:
    """Simulated user whose messages come from a language model briefed with the scenario.

    Args:
        backend: a chat backend.
        scenario: the scenario (persona, objective, slots, behaviors go into the brief).
        seed: sampling seed.
        max_new_tokens: generation budget per message.
        temperature: 0 for greedy decoding.
        domain: the scenario's loaded domain pack.
    """

    def __init__(
        self,
        backend: Any,
        scenario: Scenario,
        seed: int = 0,
        max_new_tokens: int = 160,
        temperature: float = 0.0,
        *,
        domain: Domain,
    ) -> None:
        self.backend, self.scenario, self.seed = backend, scenario, seed
        self.spec = backend.spec
        self.max_new_tokens, self.temperature = max_new_tokens, temperature
        self.system = user_system_prompt(domain, scenario)
        # The behaviors live in the brief from the first message on; record them there.
        self.injections = [
            InjectionRecord(kind=b.kind, turn_index=0, seed=seed, detail="in the user prompt")
            for b in scenario.behaviors
            if b.kind in CONVERSATIONAL_KINDS
        ]

    def respond(self, view: list[Message]) -> Message:
        """The next user message; an empty generation ends the conversation with [DONE]."""
        conversation = [{"role": "system", "content": self.system}]
        flipped = {"user": "assistant", "assistant": "user"}
        conversation += [{"role": flipped[m.role], "content": m.content} for m in view]
        if not view:
            conversation.append({"role": "user", "content": _OPENING_CUE})
        text = self.backend.generate(
            [conversation],
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            seed=self.seed,
        )[0]
        persona = load_personas()[self.scenario.persona].name
        content, problems = parse_user_reply(text, persona)
        return Message(role="user", content=content, turn_index=0, parse_problems=problems)
