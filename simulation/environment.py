"""One conversation as an environment: a loaded domain, a scenario and a seed; reset and step.

:class:`Environment` is what ``simulate``, ``eval online`` (its adversary battery included)
and the conversation-level GRPO rollouts play through. It is built from a loaded
:class:`~mads_bench.catalog.Domain`, a scenario and the conversation seed; the domain is handed
down to the user agent, the tool backend and the system prompt (nothing below it looks a domain
up by name). It runs the runner's rules (:func:`simulation.runner.play_conversation`, whose
only caller it is) with the user and tool agents it builds, and leaves the assistant to whoever
drives it:

- ``reset()`` -> the assistant's first view (the finished trajectory if the user left at once);
- ``step(text)`` -> the next view, or the finished :class:`~mads_bench.data_model.Trajectory`;
- ``truncate()`` -> the trajectory ended now, ``end_reason="truncated"`` (a spent budget);
- ``run(assistant)`` -> the whole conversation played with a participant.

:func:`simulate` is the library call behind the ``simulate`` command: the scenario's pack from
the catalog (once), the run seed turned into the conversation seed, agents from spec strings.

Example:
    >>> from mads_bench.catalog import load_domain
    >>> mock = load_domain("mock")
    >>> env = Environment(mock, mock.scenarios[0], seed=0)
    >>> [m.role for m in env.reset()]
    ['system', 'user']
    >>> env.truncate().end_reason
    'truncated'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mads_bench.catalog import Domain, domain_of
from mads_bench.data_model import Message, Scenario, Trajectory
from simulation.agents import make_agent
from simulation.agents.protocol import Participant
from simulation.runner import (
    BudgetSpent,
    RunLimits,
    conversation_seed,
    play_conversation,
    trajectory_id,
)

__all__ = ["Environment", "simulate"]


class Environment:
    """One conversation of ``scenario`` in ``domain`` (see the module docstring).

    Args:
        domain (`Domain`): The scenario's loaded pack.
        scenario (`Scenario`): What is played.
        seed (`int`): The conversation seed (user phrasing, backend adversities).
        user (`str`): User agent spec (``scripted`` or a backend spec).
        user_backend: An already built backend for a non-scripted ``user``.
        assistant_spec (`str`): Recorded in the trajectory as the assistant's spec
            (``run`` records its participant's).
        style (`str`): ``pre_act`` or ``react``.
        limits (`RunLimits`, *optional*): The runner's caps (default :class:`RunLimits`).
    """

    def __init__(
        self,
        domain: Domain,
        scenario: Scenario,
        *,
        seed: int,
        user: str = "scripted",
        user_backend: Any = None,
        assistant_spec: str = "policy",
        style: str = "pre_act",
        limits: RunLimits | None = None,
    ) -> None:
        if domain.name != scenario.domain:
            raise ValueError(
                f"scenario {scenario.id!r} is of {scenario.domain!r}, not {domain.name!r}"
            )
        self.domain, self.scenario, self.seed = domain, scenario, seed
        self.user, self.user_backend, self.assistant_spec = user, user_backend, assistant_spec
        self.style, self.limits = style, limits or RunLimits()
        self.trajectory: Trajectory | None = None
        self._game = None

    def reset(self) -> list[Message] | Trajectory:
        """Start the conversation afresh (new user and tool agents): the first view."""
        user = make_agent(
            "user", self.user, self.scenario, domain=self.domain, seed=self.seed,
            style=self.style, backend=self.user_backend,
        )  # fmt: skip
        tools = make_agent("tool", "backend", self.scenario, domain=self.domain, seed=self.seed)
        self._game = play_conversation(
            self.domain, self.scenario, user, tools, assistant_spec=self.assistant_spec,
            seed=self.seed, style=self.style, limits=self.limits,
        )  # fmt: skip
        self.trajectory = None
        return self._advance(lambda game: next(game))

    def step(self, assistant_text: str) -> list[Message] | Trajectory:
        """Play one assistant step (its raw output): the next view, or the trajectory."""
        return self._advance(lambda game: game.send(assistant_text))

    def truncate(self) -> Trajectory:
        """End the conversation at its pending step with ``end_reason="truncated"``."""
        return self._advance(lambda game: game.throw(BudgetSpent()))

    def run(self, assistant: Participant) -> Trajectory:
        """Play the whole conversation with ``assistant`` answering every view."""
        self.assistant_spec = assistant.spec
        view = self.reset()
        while not isinstance(view, Trajectory):
            view = self.step(assistant.respond(view).content)
        return view

    def _advance(self, move: Callable[[Any], list[Message]]) -> list[Message] | Trajectory:
        if self._game is None or self.trajectory is not None:
            raise RuntimeError("no conversation in progress: call reset() first")
        try:
            return move(self._game)
        except StopIteration as finished:
            self.trajectory = finished.value
            return self.trajectory


def simulate(
    scenario: Scenario,
    *,
    seed: int = 0,
    repetition: int = 0,
    user: str = "scripted",
    assistant: str = "scripted",
    style: str = "pre_act",
    context: str = "full",
    limits: RunLimits | None = None,
    backends: dict[str, Any] | None = None,
    domain: Domain | None = None,
) -> Trajectory:
    """Simulate one conversation of ``scenario`` with agents built from spec strings.

    Args:
        scenario: the scenario.
        seed: run seed; the conversation seed is derived from (seed, scenario id, repetition).
        repetition: index of this conversation among the scenario's repetitions.
        user: user agent spec (``scripted`` or a backend spec).
        assistant: assistant agent spec.
        style: ``pre_act`` or ``react``.
        context: what a model assistant reads, ``full`` or ``compact``
            (:mod:`simulation.agents.context`).
        limits: caps (defaults: :class:`RunLimits`).
        backends: already built backends by spec, shared across conversations.
        domain: the scenario's loaded pack (from the catalog when omitted).

    Returns:
        `Trajectory`: with id ``<scenario>/r<repetition>/s<seed>``.

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> trajectory = simulate(load_domain("mock").scenarios[0], seed=0)
        >>> trajectory.end_reason, trajectory.messages[1].role
        ('done', 'user')
    """
    domain = domain or domain_of(scenario)
    conv_seed = conversation_seed(seed, scenario.id, repetition)
    built = backends or {}
    environment = Environment(
        domain, scenario, seed=conv_seed, user=user, user_backend=built.get(user), style=style,
        limits=limits,
    )  # fmt: skip
    agent = make_agent(
        "assistant", assistant, scenario, domain=domain, seed=conv_seed, style=style,
        context=context, backend=built.get(assistant),
    )  # fmt: skip
    trajectory = environment.run(agent)
    return trajectory.model_copy(update={"id": trajectory_id(scenario.id, repetition, seed)})
