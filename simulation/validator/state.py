"""Expected vs actual backend state for the task-success check.

:func:`replay_gold` runs the gold workflow through a fresh
:class:`~simulation.tool_backend.ToolBackend` seeded like the trajectory, retrying
transient failures (``retryable``, ``timeout``, ``backend_error``), an empty search once and
refusals that explicitly invite a resubmission ("... confirm it with the customer and
resubmit"), as the assistant is expected to. Refused writes that never succeed later are
``refusals``: the goal is blocked by a business rule.

:func:`compare_states` lays the trajectory's ``final_state`` (the records it wrote) over the
seed state and diffs both states against the seed state, record by record (primary
keys from ``domain.yaml``), and sorts the differences into hard ``problems`` and ``soft``
differences (see :mod:`simulation.validator.task_success`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from mads_bench.catalog import Domain
from mads_bench.data_model import Scenario, ToolCall, ToolResult
from mads_bench.database import apply_changes
from mads_bench.pre_act import canonical_json
from mads_bench.text import canonical_number, normalise
from simulation.agents.speech import is_empty_result
from simulation.tool_backend import ToolBackend
from simulation.validator.common import Context

MAX_ATTEMPTS = 4
_RESUBMIT = ("resubmit", "try again", "retry")
Records = dict[str, list[dict[str, Any]]]


@dataclass(frozen=True)
class GoldCall:
    """One gold call of a replay: its tool's kind (``read``/``write``), the call and its last
    result (after the retries)."""

    kind: str
    call: ToolCall
    result: ToolResult


@dataclass
class GoldReplay:
    """The expected final state, the gold writes a business rule refused for good, and every
    gold call made, in workflow order."""

    state: Records
    refusals: list[str] = field(default_factory=list)
    calls: list[GoldCall] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        """A business rule refused a gold call for good: the goal cannot be reached."""
        return bool(self.refusals)


@dataclass
class StateComparison:
    """Differences between the expected and the actual final state."""

    problems: list[str] = field(default_factory=list)
    soft: list[str] = field(default_factory=list)


def _transient(content: Any) -> bool:
    if not isinstance(content, dict):
        return False
    message = str(content.get("message", "")).casefold()
    return (
        bool(content.get("retryable"))
        or content.get("code") in ("timeout", "backend_error")
        or any(cue in message for cue in _RESUBMIT)
    )


def replay_gold(context: Context) -> GoldReplay:
    """Run the gold workflow on a fresh backend seeded like the trajectory."""
    return replay_workflow(context.scenario, context.trajectory.seed, context.domain)


def replay_workflow(scenario: Scenario, seed: int, domain: Domain) -> GoldReplay:
    """Run ``scenario``'s gold workflow on a fresh backend with the conversation ``seed``
    (what the user agent and the validator both expect of a conversation)."""
    tools = {t.name: t for t in domain.tools_for(scenario)}
    backend = ToolBackend(scenario, seed=seed, domain=domain)
    refused: dict[str, str] = {}
    calls: list[GoldCall] = []
    for index, gold in enumerate(scenario.gold_workflow):
        call = ToolCall(id=f"gold_{index}", name=gold.name, arguments=gold.arguments)
        tool = tools.get(gold.name)
        kind = tool.kind if tool is not None else "read"
        for attempt in range(MAX_ATTEMPTS):
            result = backend.execute(call)
            # a search that found nothing is run once more, as the gold policy does
            if result.ok and attempt == 0 and is_empty_result(result.content, kind):
                continue
            if result.ok or not _transient(result.content):
                break
        calls.append(GoldCall(kind, call, result))
        content = result.content if isinstance(result.content, dict) else {}
        if (tool is None or tool.kind != "write") and content.get("code") == "policy_violation":
            # a rule refuses a lookup the rest depends on: the assistant explains it and stops
            refused[gold.name] = f"{gold.name}: {content.get('message', content)}"
            break
        if tool is None or tool.kind != "write":
            continue
        if result.ok:
            refused.pop(gold.name, None)
        else:
            content = result.content if isinstance(result.content, dict) else {}
            refused[gold.name] = f"{gold.name}: {content.get('message', content)}"
    return GoldReplay(backend.state(), list(refused.values()), calls)


def same(a: Any, b: Any) -> bool:
    """Equality after normalisation: numbers by value, strings by words, else canonical JSON."""
    if type(a) is type(b) and a == b:
        return True
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        magnitude_a, magnitude_b = (canonical_number(x, signed=False, places=6) for x in (a, b))
        return magnitude_a == magnitude_b and (a < 0) == (b < 0)
    if isinstance(a, str) and isinstance(b, str):
        return normalise(a, punctuation="words") == normalise(b, punctuation="words")
    return canonical_json(a) == canonical_json(b)


def _index(records: Records, keys: dict[str, str]) -> dict[tuple[str, Any], dict[str, Any]]:
    return {(t, r.get(keys.get(t, ""))): r for t, rows in records.items() for r in rows}


@lru_cache(maxsize=256)
def _seed_index(domain: Domain, backend_state: str) -> dict[tuple[str, Any], dict[str, Any]]:
    """The seed state of a scenario, indexed by (table, key); cached (read-only use)."""
    return _index(domain.database(json.loads(backend_state)).dump(), domain.manifest.keys)


def _changed_fields(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return [f for f in dict.fromkeys([*old, *new]) if not same(old.get(f), new.get(f))]


def _slot_values(context: Context, slots: dict[str, Any]) -> list[Any]:
    """The values of ``slots`` (the hard constraints or the soft preferences), revised ones
    included; flags left out (``True`` says nothing about a field)."""
    values = list(slots.values())
    for revision in context.scenario.behaviors_of("goal_revision"):
        values += [v for k, v in revision.revised_slots.items() if k in slots]
    return [v for v in values if not isinstance(v, bool)]


def compare_states(context: Context, replay: GoldReplay, *, forbid_all: bool) -> StateComparison:
    """Compare the trajectory's final state with the gold replay's (both against the seed).

    Args:
        context: the trajectory and scenario.
        replay: the gold replay.
        forbid_all: an impossible scenario: every change of the state is forbidden.
    """
    keys = context.domain.manifest.keys
    seed = _seed_index(context.domain, canonical_json(context.scenario.backend_state))
    expected = {} if forbid_all else _index(replay.state, keys)
    actual = apply_changes(seed, context.trajectory.final_state or {}, keys)
    scenario = context.scenario
    hard = _slot_values(context, scenario.hard_constraints)
    soft = _slot_values(context, scenario.soft_preferences)
    out = StateComparison()

    def differ(where: str, field_name: str, want: Any, got: Any) -> None:
        text = f"{where}.{field_name} is {got!r}, expected {want!r}"
        if any(same(want, h) or same(got, h) for h in hard):
            out.problems.append(f"hard_constraint_violated: {text}")
        elif any(same(want, v) for v in soft):  # a soft preference the assistant relaxed
            out.soft.append(text)
        else:
            out.problems.append(f"unexpected_value: {text}")

    exp_new = [k for k in expected if k not in seed]
    act_new = [k for k in actual if k not in seed]
    for key, old in seed.items():
        where = f"{key[0]} {key[1]}"
        want = old if forbid_all else expected.get(key)
        got = actual.get(key)
        if want is not None and got is None:
            out.problems.append(f"unexpected_change: {where} was deleted")
            continue
        if got is None or want is None:
            if want is None and got is not None and not forbid_all:
                out.problems.append(f"missing_change: {where} should have been removed")
            continue
        wanted, made = _changed_fields(old, want), _changed_fields(old, got)
        if wanted and not made:
            summary = ", ".join(f"{f}: {old.get(f)!r} -> {want.get(f)!r}" for f in wanted)
            out.problems.append(f"missing_change: {where} should change ({summary})")
        elif made and not wanted:
            summary = ", ".join(f"{f}: {old.get(f)!r} -> {got.get(f)!r}" for f in made)
            out.problems.append(f"unexpected_change: {where} changed ({summary})")
        else:
            for name in dict.fromkeys([*wanted, *made]):
                if not same(want.get(name), got.get(name)):
                    differ(where, name, want.get(name), got.get(name))
    _match_inserts(context, expected, actual, exp_new, act_new, out, differ)
    return out


def _match_inserts(
    context: Context,
    expected: dict[tuple[str, Any], dict[str, Any]],
    actual: dict[tuple[str, Any], dict[str, Any]],
    exp_new: list[tuple[str, Any]],
    act_new: list[tuple[str, Any]],
    out: StateComparison,
    differ: Callable[[str, str, Any, Any], None],
) -> None:
    """Pair new records table by table, closest first; leftovers are missing or unexpected."""
    keys = context.domain.manifest.keys
    remaining = list(act_new)
    for key in exp_new:
        want = expected[key]
        candidates = [k for k in remaining if k[0] == key[0]]
        if not candidates:
            out.problems.append(f"missing_change: no new {key[0]} record like {want}")
            continue

        primary = keys[key[0]]

        def distance(
            other: tuple[str, Any], want: dict[str, Any] = want, primary: str = primary
        ) -> int:
            return len([f for f in _changed_fields(want, actual[other]) if f != primary])

        best = min(candidates, key=distance)
        remaining.remove(best)
        for name in _changed_fields(want, actual[best]):
            if name != keys[key[0]]:
                differ(f"new {key[0]} {best[1]}", name, want.get(name), actual[best].get(name))
    for key in remaining:
        out.problems.append(f"unexpected_change: new {key[0]} record {key[1]} was created")
