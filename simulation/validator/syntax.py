"""Syntax check (MADS §3.1): Pre-Act structure of every step and turn, tool calls vs schemas.

Rules, all decided without a judge:

- every assistant message parses strictly (:func:`mads_bench.pre_act.parse_step`), so it has
  a ``<think>`` and exactly one ``<action>``; a parse error is reported with its reason code;
- every turn passes :func:`mads_bench.pre_act.validate_turn`: the first step has a
  ``<plan>`` (``pre_act`` style), thinks are not empty, and the turn ends with exactly one
  ``say`` (a say before the last step is ``early_say``, a turn without one ``missing_say``);
- every user message except a final ``[DONE]`` gets at least one assistant step;
- every tool call names a tool available in the scenario, its arguments validate against
  the tool's JSON Schema (:meth:`mads_bench.data_model.ToolSpec.argument_errors`), and a
  tool result answers it.

Example:
    >>> from simulation.validator.common import Context
    >>> from simulation.environment import simulate
    >>> from mads_bench.catalog import load_domain
    >>> domain = load_domain("mock")
    >>> scenario = domain.scenarios[1]
    >>> check_syntax(Context(simulate(scenario), scenario, domain)).passed
    True
"""

from __future__ import annotations

from itertools import groupby

from mads_bench.pre_act import PreActStep, validate_turn
from simulation.validator.common import DONE_TOKEN, CheckResult, Context, Step


def _turn_step(step: Step) -> PreActStep | None:
    """The strict step, or a stand-in built from the lenient parse for turn-level checks."""
    if step.step is not None:
        return step.step
    if step.parsed.action is None:
        return None
    try:
        return PreActStep(
            think=step.parsed.think or "-", plan=step.parsed.plan, action=step.parsed.action
        )
    except ValueError:
        return None


def _check_turns(context: Context, result: CheckResult) -> None:
    by_turn = {
        turn: list(steps)
        for turn, steps in groupby(context.steps, key=lambda s: s.message.turn_index)
    }
    for turn, steps in by_turn.items():
        rebuilt = [_turn_step(s) for s in steps]
        if any(r is None for r in rebuilt):
            continue  # the unparsable step is already reported; the turn shape is unknown
        for problem in validate_turn(rebuilt, style=context.style):
            result.fail(f"turn {turn} {problem}")
    users = context.user_messages()
    for index, (_, message) in enumerate(users):
        last = index == len(users) - 1
        if message.turn_index not in by_turn and not (last and DONE_TOKEN in message.content):
            result.fail(f"turn {message.turn_index}: the user message got no assistant step")


def _check_tool_calls(context: Context, result: CheckResult) -> None:
    messages = context.messages
    for step in context.steps:
        action = step.parsed.action
        if action is None or action.type != "tool":
            continue
        tool = context.tools.get(action.name)
        if tool is None:
            result.fail(
                f"{step.where}: unknown_tool: {action.name!r} is not a tool of this scenario"
            )
        else:
            for error in tool.argument_errors(action.arguments):
                result.fail(f"{step.where}: invalid_arguments: {action.name}: {error}")
        following = messages[step.position + 1] if step.position + 1 < len(messages) else None
        call = step.message.tool_call
        answered = (
            following is not None
            and following.role == "tool"
            and following.tool_result is not None
            and (call is None or following.tool_result.call_id == call.id)
        )
        if not answered:
            result.fail(f"{step.where}: missing_tool_result: no tool result follows the call")


def check_syntax(context: Context) -> CheckResult:
    """Run the syntax rules on one trajectory.

    Args:
        context (`Context`): the trajectory with its scenario.

    Returns:
        `CheckResult`: reasons like ``"turn 1 step 0: missing_plan: ..."``; always rules.
    """
    result = CheckResult()
    if not context.messages or context.messages[0].role != "system":
        result.fail("message 0: missing_system: the trajectory must open with the system prompt")
    for step in context.steps:
        if step.error is not None:
            result.fail(f"{step.where}: {step.error.reason}: {step.error.message}")
    _check_turns(context, result)
    _check_tool_calls(context, result)
    return result
