"""Helpers that corrupt copies of real scripted trajectories for the validator tests.

Each edit keeps everything else as simulated: ``with_step`` re-renders one assistant step,
``with_user`` rewrites a user message, ``with_state`` edits the final backend state.
"""

from __future__ import annotations

from typing import Any

from mads_bench.catalog import load_domain
from mads_bench.data_model import ToolCall, Trajectory
from mads_bench.pre_act import Action, PreActStep, parse_step, render_step

TRANSFER = "banking-savings-transfer-normal"  # 0 sys, 1 user, 2 list, 3 result, 4 confirm say,
# 5 user yes, 6 transfer call, 7 result, 8 summary say, 9 user [DONE]
FROZEN = "banking-frozen-account-payment-impossible"  # ..., 6 confirm say, 7 user yes,
# 8 send_payment (refused), 9 result, 10 decline say, 11 user [DONE]


def with_step(
    trajectory: Trajectory,
    position: int,
    *,
    think: str | None = None,
    plan: str | None | bool = False,
    action: Action | None = None,
    raw: str | None = None,
) -> Trajectory:
    """A copy with the assistant message at ``position`` replaced.

    ``plan=False`` keeps the old plan, ``None`` removes it; ``raw`` sets the text verbatim.
    """
    messages = [m.model_copy() for m in trajectory.messages]
    message = messages[position]
    assert message.role == "assistant", f"message {position} is a {message.role} message"
    if raw is not None:
        messages[position] = message.model_copy(update={"content": raw})
        return trajectory.model_copy(update={"messages": messages})
    old = parse_step(message.content)
    step = PreActStep(
        think=old.think if think is None else think,
        plan=old.plan if plan is False else plan,
        action=action or old.action,
    )
    call = message.tool_call
    if step.action.type == "tool":
        call = ToolCall(
            id=call.id if call else "call_x", name=step.action.name, arguments=step.action.arguments
        )
    else:
        call = None
    messages[position] = message.model_copy(
        update={"content": render_step(step), "tool_call": call}
    )
    return trajectory.model_copy(update={"messages": messages})


def with_user(trajectory: Trajectory, position: int, text: str) -> Trajectory:
    """A copy with the user message at ``position`` rewritten."""
    messages = [m.model_copy() for m in trajectory.messages]
    assert messages[position].role == "user"
    messages[position] = messages[position].model_copy(update={"content": text})
    return trajectory.model_copy(update={"messages": messages})


def with_state(trajectory: Trajectory, table: str, key_field: str, key: Any, **changes: Any):
    """A copy whose final state has ``changes`` applied to one record (taken from the domain's
    seed state when the run did not write it: ``final_state`` holds the records written)."""
    state = {t: [dict(r) for r in rows] for t, rows in trajectory.final_state.items()}
    rows = state.setdefault(table, [])
    if not any(record[key_field] == key for record in rows):
        rows.append(load_domain(trajectory.domain).database().get(table, key))
    for record in rows:
        if record[key_field] == key:
            record.update(changes)
    return trajectory.model_copy(update={"final_state": state})


def reasons(verdict: dict, check: str) -> list[str]:
    """The reasons of one check of a verdict."""
    return verdict["checks"][check]["reasons"]
