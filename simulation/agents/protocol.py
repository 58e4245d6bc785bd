"""The one protocol every participant shares, the tool agent, and the per-agent views.

Participants (user, assistant, tool) implement ``respond(view) -> Message`` and nothing
else the runner relies on (tau2-style): the runner builds each agent's VIEW of the
conversation and never looks inside an agent. Views (MADS §3.1, SPEC §5):

- assistant: everything — the system prompt, user messages, its own Pre-Act steps and the
  tool results (:func:`assistant_view` is the trajectory itself);
- user: only user-facing exchanges — its own messages and the assistant's ``say`` texts
  (:func:`user_view`, built incrementally by the runner);
- tool: only the tool calls (:func:`tool_view`).

Agents may expose ``injections`` (a list of :class:`InjectionRecord`) for the behaviors they
applied; the runner copies new ones into the trajectory as they appear.
"""

from __future__ import annotations

import json
from typing import Protocol, runtime_checkable

from mads_bench.catalog import Domain
from mads_bench.data_model import InjectionRecord, Message, Scenario
from simulation.tool_backend import ToolBackend


@runtime_checkable
class Participant(Protocol):
    """A conversation participant: reads its view, returns its next message.

    Attributes:
        spec (`str`): backend spec it was built from (``scripted``, ``transformers:...``).
    """

    spec: str

    def respond(self, view: list[Message]) -> Message:
        """The next message given this agent's view (the runner sets turn/step indices)."""
        ...


class BackendToolAgent:
    """The default tool agent: executes the last tool call of its view with a :class:`ToolBackend`.

    Args:
        scenario: the scenario (seed state, tools, execution behaviors).
        seed: adversity seed.
        domain: the scenario's loaded domain pack.

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> from mads_bench.data_model import ToolCall
        >>> domain = load_domain("mock")
        >>> agent = BackendToolAgent(domain.scenarios[0], seed=0, domain=domain)
        >>> call = ToolCall(id="call_0", name="get_item", arguments={"item_id": "I1"})
        >>> agent.respond([Message(role="assistant", content="", turn_index=0, tool_call=call)]
        ...               ).tool_result.ok
        True
    """

    spec = "backend"

    def __init__(self, scenario: Scenario, seed: int, *, domain: Domain) -> None:
        self.backend = ToolBackend(scenario, seed=seed, domain=domain)

    @property
    def injections(self) -> list[InjectionRecord]:
        """Execution adversities applied so far."""
        return self.backend.injections

    def respond(self, view: list[Message]) -> Message:
        """Execute the last call in ``view``; the result's JSON is the message content."""
        last = view[-1]
        if last.tool_call is None:
            raise ValueError("the tool agent's view must end with a tool call")
        result = self.backend.execute(last.tool_call, last.turn_index)
        return Message(
            role="tool",
            content=tool_content(result.content),
            turn_index=last.turn_index,
            step_index=last.step_index,
            tool_result=result,
        )


def tool_content(content: object) -> str:
    """The text form of a tool result that the assistant reads (compact, sorted JSON)."""
    return json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)


def assistant_view(messages: list[Message]) -> list[Message]:
    """The assistant sees the whole trajectory, system prompt and tool results included."""
    return list(messages)


def user_view(messages: list[Message], say_texts: dict[int, str]) -> list[Message]:
    """User-facing exchanges only: user messages and the assistant's ``say`` texts.

    Args:
        messages: the trajectory so far.
        say_texts: position in ``messages`` -> text the user was shown for that message.
    """
    view = []
    for index, message in enumerate(messages):
        if message.role == "user":
            view.append(message)
        elif index in say_texts:
            view.append(
                Message(role="assistant", content=say_texts[index], turn_index=message.turn_index)
            )
    return view


def tool_view(messages: list[Message]) -> list[Message]:
    """Tool calls only (the assistant messages that carry a ``tool_call``)."""
    return [m for m in messages if m.tool_call is not None]
