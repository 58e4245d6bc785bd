"""The conversation runner: orchestrates user, assistant and tool agents into a Trajectory.

One conversation (MADS §3.1, SPEC §5):

1. the trajectory starts with the assistant's system prompt; the user opens;
2. per user turn the assistant makes steps until a ``say``: each step is parsed leniently
   (:func:`mads_bench.pre_act.parse_step`), tool steps go to the tool agent and its result is
   appended as a ``tool`` message; at most ``max_steps_per_turn`` steps (the run's cap, or
   else the domain's: a τ²-bench task looks up a dozen records before it says anything);
3. the run ends with ``end_reason``: ``done`` (the user wrote ``[DONE]``), ``turn_cap``
   (``max_turns`` user turns), ``loop`` (the same tool call with identical arguments and
   result ``loop_repeats`` times in a row, the same ``say`` in two consecutive turns, or the
   step cap hit without a ``say``), ``error`` (see below) or ``truncated`` (a training
   rollout's budget ran out: :class:`BudgetSpent`).

Malformed assistant output — the ONE rule: every step is kept verbatim and its lenient-parse
problems go to ``Message.parse_problems``. If an action was recovered (e.g. a say without
``<plan>``, repairable tool JSON) it is carried out as recovered. If none could be recovered,
the turn ends there and the user is shown the fixed notice ``NOT_PROCESSED_NOTICE``; after
``max_malformed_turns`` such turns in a row the run ends with ``end_reason="error"``.
Nothing here raises on model output.
"""

from __future__ import annotations

import hashlib
from collections.abc import Generator
from dataclasses import dataclass

from mads_bench.catalog import Domain
from mads_bench.data_model import Message, Scenario, ToolCall, Trajectory
from mads_bench.pre_act import canonical_json, parse_step
from simulation.agents.prompts import assistant_system_prompt
from simulation.agents.protocol import Participant, assistant_view, tool_view, user_view
from simulation.agents.text import DONE_TOKEN, NOT_PROCESSED_NOTICE


@dataclass(frozen=True)
class RunLimits:
    """Caps of one conversation."""

    max_turns: int = 12
    max_steps_per_turn: int | None = None  # None: the domain's ``max_steps_per_turn``
    max_malformed_turns: int = 2
    loop_repeats: int = 3


def conversation_seed(seed: int, scenario_id: str, repetition: int) -> int:
    """The per-conversation seed derived from the run seed (stable across machines)."""
    digest = hashlib.sha256(f"{seed}:{scenario_id}:{repetition}".encode()).hexdigest()
    return int(digest[:8], 16)


def trajectory_id(scenario_id: str, repetition: int, seed: int) -> str:
    """The record key: scenario id + repetition index + run seed."""
    return f"{scenario_id}/r{repetition}/s{seed}"


class BudgetSpent(Exception):
    """Thrown into :func:`play_conversation` to end it now with ``end_reason="truncated"``
    (a conversation-level GRPO rollout whose token or step budget ran out)."""


def play_conversation(
    domain: Domain,
    scenario: Scenario,
    user: Participant,
    tool_agent: Participant,
    *,
    assistant_spec: str,
    seed: int,
    style: str = "pre_act",
    limits: RunLimits = RunLimits(),
) -> Generator[list[Message], str, Trajectory]:
    """The conversation as a generator: it yields the assistant's view whenever an assistant
    step is due and is sent that step's raw output; it returns the :class:`Trajectory`.

    Its one caller is :class:`simulation.environment.Environment` (reset, step, truncate),
    which builds the user and tool agents from the loaded ``domain`` and leaves the assistant
    to whoever drives it. Throwing :class:`BudgetSpent` in at a yield ends the run with
    ``end_reason="truncated"``.
    """
    messages = [
        Message(
            role="system", content=assistant_system_prompt(domain, scenario, style), turn_index=0
        )
    ]
    shown: dict[int, str] = {}  # message position -> text the user saw for it
    injections, taken = [], {id(user): 0, id(tool_agent): 0}
    end, malformed_streak, last_say, calls = None, 0, None, 0
    step_cap = limits.max_steps_per_turn or domain.manifest.max_steps_per_turn

    def collect(agent: Participant) -> None:
        new = list(getattr(agent, "injections", []))[taken[id(agent)] :]
        taken[id(agent)] += len(new)
        injections.extend(new)

    for turn in range(limits.max_turns):
        reply = user.respond(user_view(messages, shown))
        messages.append(
            reply.model_copy(update={"role": "user", "turn_index": turn, "step_index": None})
        )
        collect(user)
        if DONE_TOKEN in reply.content:
            end = "done"
            break
        said, malformed, streak, previous = None, False, 0, None
        for step in range(step_cap):
            try:
                output = yield assistant_view(messages)
            except BudgetSpent:
                end = "truncated"
                break
            parsed = parse_step(output, strict=False, style=style)
            message = Message(
                role="assistant",
                content=output,
                turn_index=turn,
                step_index=step,
                parse_problems=list(parsed.problems),
            )
            action = parsed.action
            if action is None:
                message.parse_problems.append(
                    "no_action_recovered: turn ended; the user was shown the could-not-process "
                    "notice"
                )
                messages.append(message)
                shown[len(messages) - 1], malformed = NOT_PROCESSED_NOTICE, True
                break
            if action.type == "say":
                messages.append(message)
                shown[len(messages) - 1] = said = action.text
                break
            message.tool_call = ToolCall(
                id=f"call_{calls}", name=action.name, arguments=action.arguments
            )
            calls += 1
            messages.append(message)
            result = tool_agent.respond(tool_view(messages))
            messages.append(result)
            collect(tool_agent)
            signature = canonical_json(
                [action.name, action.arguments, result.tool_result.ok, result.tool_result.content]
            )
            streak = streak + 1 if signature == previous else 1
            previous = signature
            if streak >= limits.loop_repeats:
                end = "loop"
                break
        else:
            end = "loop"  # the step cap was hit without a say
        if end:
            break
        malformed_streak = malformed_streak + 1 if malformed else 0
        if malformed_streak >= limits.max_malformed_turns:
            end = "error"
            break
        if said is not None and said == last_say:
            end = "loop"
            break
        last_say = said if said is not None else last_say
    else:
        end = "turn_cap"
    return Trajectory(
        id=f"{scenario.id}/seed{seed}",
        scenario_id=scenario.id,
        domain=scenario.domain,
        complexity=scenario.complexity,
        persona=scenario.persona,
        seed=seed,
        backends={"user": user.spec, "assistant": assistant_spec, "tool": tool_agent.spec},
        messages=messages,
        injections=injections,
        end_reason=end,
        final_state=tool_agent.backend.changes() if hasattr(tool_agent, "backend") else None,
    )
