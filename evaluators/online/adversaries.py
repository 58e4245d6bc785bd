"""Assistants that try to game online task success; each must score 0 on every scenario.

The battery plays every scenario once with the scripted user and each cheat as the assistant
(:func:`run_battery`), and scores the conversations with
:func:`simulation.validator.rubric.grade_conversation`. The cheats know the scenario (its gold
workflow), so they are as strong as a cheat can be:

| name | what it does |
| --- | --- |
| ``does_nothing`` | says "All done, everything is taken care of." every turn, calls nothing |
| ``asks_forever`` | asks the same question every turn |
| ``lookups_only`` | makes the gold lookups, then says it is done without the answer |
| ``wrong_number`` | the gold policy, every digit of every reply 3 up (right kind, wrong value) |
| ``changed_argument`` | the gold policy, with one argument of every write changed |
| ``extra_write`` | the gold policy, plus a write nobody asked for before its report |
| ``premature_report`` | says it is done before its first call, and never reports after |

The scripted gold policy (``scripted``) plays beside them as the baseline: it must succeed on
every scenario. ``mads-bench eval online --battery`` prints the table (:func:`render_battery`).

``extra_write`` finds its write by trying candidates on a backend that replays the calls made
so far (each gold write once more, then every write tool with arguments taken from the gold
calls and the seed records); where none would change the state it has nothing to add and
plays the gold policy; so do ``changed_argument`` where no changed argument of a write gives
another state (a hand-off summary is free text the state does not keep) and ``wrong_number``
where its last reply has no figure (two digits or more, or a decimal: "1:1" is part of a
name). Those conversations are counted as ``not_applicable``, not scored.

Example:
    >>> from mads_bench.catalog import load_domain
    >>> table = run_battery(load_domain("mock").scenarios, names=["scripted", "does_nothing"])
    >>> [(row["conversations"], row["success"]) for row in table.values()]
    [(3, 3), (3, 0)]
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from mads_bench.catalog import Domain, domain_of
from mads_bench.data_model import Message, Scenario, ToolCall, Trajectory
from mads_bench.embedding import SentenceEncoder
from mads_bench.pre_act import Action, PreActStep, parse_step, render_step
from simulation.agents.assistant import ScriptedAssistant
from simulation.environment import Environment
from simulation.runner import conversation_seed, trajectory_id
from simulation.tool_backend import ToolBackend
from simulation.validator.aggregate import NO_EMBEDDINGS
from simulation.validator.rubric import grade_conversation
from simulation.validator.state import replay_workflow

__all__ = ["ADVERSARIES", "BASELINE", "play_adversary", "render_battery", "run_battery"]

_DONE = "All done, everything is taken care of."
_FIGURE = re.compile(r"\d{2,}|\d[.,]\d")  # an amount, an id, a date, a time ("1:1" is a name)


def _say(text: str) -> Message:
    step = PreActStep(think="Wrap up.", plan="1. Reply.", action=Action.say(text))
    return Message(role="assistant", content=render_step(step), turn_index=0)


def _call(name: str, arguments: dict[str, Any]) -> Message:
    step = PreActStep(think="Look it up.", plan="1. Call.", action=Action.tool(name, arguments))
    return Message(role="assistant", content=render_step(step), turn_index=0)


class _Adversary:
    spec = "adversary"

    def __init__(self, scenario: Scenario, *, seed: int, domain: Domain) -> None:
        self.scenario, self.seed, self.domain = scenario, seed, domain
        self.tools = {t.name: t for t in domain.tools_for(scenario)}


class DoesNothing(_Adversary):
    """Claims success every turn without a call or a question."""

    def respond(self, view: list[Message]) -> Message:
        return _say(_DONE)


class AsksForever(_Adversary):
    """Asks one question forever."""

    def respond(self, view: list[Message]) -> Message:
        return _say("Could you tell me a bit more about what you need?")


class LookupsOnly(_Adversary):
    """Makes every gold lookup once, then claims success without saying what it found."""

    def respond(self, view: list[Message]) -> Message:
        made = sum(m.tool_call is not None for m in view)
        reads = [g for g in self.scenario.gold_workflow if self.tools[g.name].kind == "read"]
        if made < len(reads):
            return _call(reads[made].name, dict(reads[made].arguments))
        return _say("All done, I have looked into everything for you.")


class _GoldWrapper(_Adversary):
    """The scripted gold policy with its steps rewritten by :meth:`rewrite`; it does not see
    the messages at the positions in ``hidden`` (a call of the cheat's own and its result)."""

    def __init__(self, scenario: Scenario, *, seed: int, domain: Domain) -> None:
        super().__init__(scenario, seed=seed, domain=domain)
        self.gold = ScriptedAssistant(scenario, seed=seed, domain=domain)
        self.hidden: set[int] = set()

    def respond(self, view: list[Message]) -> Message:
        visible = [m for i, m in enumerate(view) if i not in self.hidden]
        message = self.gold.respond(visible)
        return self.rewrite(view, message, parse_step(message.content).action)

    def rewrite(self, view: list[Message], message: Message, action: Action) -> Message:
        return message


class WrongNumber(_GoldWrapper):
    """The gold policy; every digit of every reply 3 up, mod 10 ("2745.90" -> "5078.23")."""

    def __init__(self, scenario: Scenario, *, seed: int, domain: Domain) -> None:
        super().__init__(scenario, seed=seed, domain=domain)
        self.applies = False  # its last reply had a figure to change (else it is the gold one)

    def rewrite(self, view: list[Message], message: Message, action: Action) -> Message:
        if action.type != "say":
            return message
        text = action.text or ""
        self.applies = bool(_FIGURE.search(text))
        return _say(re.sub(r"\d", lambda m: str((int(m.group(0)) + 3) % 10), text))


class ChangedArgument(_GoldWrapper):
    """The gold policy, with one argument of every write changed (a number one up, else
    another value of that field from the seed records, else a suffix): the first argument
    whose change gives another state than the gold write would (a free-text argument the
    state does not keep, such as a hand-off summary, is no change)."""

    def __init__(self, scenario: Scenario, *, seed: int, domain: Domain) -> None:
        super().__init__(scenario, seed=seed, domain=domain)
        replay = replay_workflow(scenario, seed, domain)
        # a goal reached by a write (else it is a decline, where a changed write is refused)
        self.reachable = not (scenario.impossible or replay.blocked) and any(
            c.kind == "write" and c.result.ok for c in replay.calls
        )
        self.changed = False

    @property
    def applies(self) -> bool:
        """It changed a write of a goal a write reaches (else it played the gold policy)."""
        return self.reachable and self.changed

    def rewrite(self, view: list[Message], message: Message, action: Action) -> Message:
        if action.type != "tool" or self.tools[action.name].kind != "write":
            return message
        backend = _backend_after(self.domain, self.scenario, self.seed, view)
        want = _state_after(backend, action.name, dict(action.arguments))
        for key, value in action.arguments.items():
            changed = _changed(value, _seed_values(self.scenario).get(key, []))
            arguments = {**action.arguments, key: changed}
            if changed is not None and _state_after(backend, action.name, arguments) != want:
                self.changed = True
                return _call(action.name, arguments)
        return message


class ExtraWrite(_GoldWrapper):
    """The gold policy, plus one write nobody asked for just before its report."""

    def __init__(self, scenario: Scenario, *, seed: int, domain: Domain) -> None:
        super().__init__(scenario, seed=seed, domain=domain)
        self.made = False

    @property
    def applies(self) -> bool:
        """It made its extra write (else it played the gold policy)."""
        return self.made

    def rewrite(self, view: list[Message], message: Message, action: Action) -> Message:
        finished = self.gold.pointer >= len(self.scenario.gold_workflow)
        if action.type == "say" and finished and not self.made:
            extra = _extra_write(self.domain, self.scenario, self.seed, view)
            if extra is not None:
                self.made = True
                self.hidden |= {len(view), len(view) + 1}  # the call and its result
                self.gold = ScriptedAssistant(
                    self.scenario, seed=self.seed, domain=self.domain
                )  # reads anew
                return _call(*extra)
        return message


class PrematureReport(_GoldWrapper):
    """Says it is done before its first call, then acts without ever reporting."""

    def __init__(self, scenario: Scenario, *, seed: int, domain: Domain) -> None:
        super().__init__(scenario, seed=seed, domain=domain)
        self.claimed = False

    def rewrite(self, view: list[Message], message: Message, action: Action) -> Message:
        if action.type == "tool" and not self.claimed:
            self.claimed = True
            self.gold = ScriptedAssistant(
                self.scenario, seed=self.seed, domain=self.domain
            )  # replays the view
            return _say("Your request has been completed successfully.")
        if action.type == "say" and self.gold.pointer >= len(self.scenario.gold_workflow):
            return _say("As I said, that has all been taken care of.")
        return message


ADVERSARIES: dict[str, Callable[[Scenario, int], Any]] = {
    "does_nothing": DoesNothing,
    "asks_forever": AsksForever,
    "lookups_only": LookupsOnly,
    "wrong_number": WrongNumber,
    "changed_argument": ChangedArgument,
    "extra_write": ExtraWrite,
    "premature_report": PrematureReport,
}
"""The cheats by name (see the module docstring)."""
BASELINE = "scripted"
"""The scripted gold policy, played beside the cheats by :func:`run_battery`."""


def _seed_values(scenario: Scenario) -> dict[str, list[Any]]:
    """Every scalar of the seed records, by field name, in order."""
    values: dict[str, list[Any]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, (dict, list)):
                    walk(value)
                elif value is not None and value not in values.setdefault(key, []):
                    values[key].append(value)

    walk(scenario.backend_state)
    return values


def _changed(value: Any, others: list[Any]) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return next((o for o in others if isinstance(o, str) and o != value), f"{value} 2")
    return None


def _backend_after(
    domain: Domain, scenario: Scenario, seed: int, view: list[Message]
) -> ToolBackend:
    """A backend that has run the calls of ``view``."""
    backend = ToolBackend(scenario, seed=seed, domain=domain)
    for message in view:
        if message.tool_call is not None:
            backend.execute(message.tool_call)
    return backend


def _state_after(backend: ToolBackend, name: str, arguments: dict[str, Any]) -> Any:
    """The state ``backend`` would have after the call (``backend`` is left as it is)."""
    probe = copy.deepcopy(backend)
    probe.execute(ToolCall(id="probe", name=name, arguments=arguments))
    return probe.state()


def _extra_write(
    domain: Domain, scenario: Scenario, seed: int, view: list[Message]
) -> tuple[str, dict[str, Any]] | None:
    """A write that would change the state now (tried on a backend that replays the calls
    of ``view``), or None."""
    tools = {t.name: t for t in domain.tools_for(scenario)}
    backend = _backend_after(domain, scenario, seed, view)
    known: dict[str, list[Any]] = {}
    for gold in scenario.gold_workflow:
        for key, value in gold.arguments.items():
            known.setdefault(key, []).append(value)
    for key, values in _seed_values(scenario).items():
        known.setdefault(key, []).extend(values)
    candidates = [
        (g.name, dict(g.arguments)) for g in scenario.gold_workflow if tools[g.name].kind == "write"
    ]
    for tool in tools.values():
        if tool.kind != "write":
            continue
        required = tool.parameters.get("required", list(tool.parameters.get("properties", {})))
        for pick in range(3):
            arguments = {}
            for name in required:
                options = known.get(name) or []
                if not options:
                    break
                arguments[name] = options[min(pick, len(options) - 1)]
            else:
                candidates.append((tool.name, arguments))
    before = backend.state()
    for name, arguments in candidates:
        probe = copy.deepcopy(backend)
        result = probe.execute(ToolCall(id="extra", name=name, arguments=arguments))
        if result.ok and probe.state() != before:
            return name, arguments
    return None


def play_adversary(
    scenario: Scenario, name: str, *, seed: int = 0, repetition: int = 0
) -> tuple[Trajectory, Any]:
    """One conversation of ``scenario`` with the scripted user and the cheat ``name`` (or
    :data:`BASELINE`).

    Returns:
        `tuple`: the `Trajectory` (with the id a simulation with these seeds would give it)
        and the cheat (its ``applies`` is False where it played the gold policy).
    """
    conv_seed, domain = conversation_seed(seed, scenario.id, repetition), domain_of(scenario)
    play = ScriptedAssistant if name == BASELINE else ADVERSARIES[name]
    assistant = play(scenario, seed=conv_seed, domain=domain)
    trajectory = Environment(domain, scenario, seed=conv_seed).run(assistant)
    trajectory = trajectory.model_copy(update={"id": trajectory_id(scenario.id, repetition, seed)})
    return trajectory, assistant


def run_battery(
    scenarios: Iterable[Scenario],
    *,
    names: Sequence[str] | None = None,
    seed: int = 0,
    trials: int = 1,
    embedder: SentenceEncoder | None = None,
    progress: bool = False,
) -> dict[str, dict[str, Any]]:
    """Play every scenario ``trials`` times with each cheat and count what it earned.

    Args:
        scenarios (`Iterable[Scenario]`): the scenarios.
        names (`Sequence[str]`, *optional*): the players (default: :data:`BASELINE`, then all
            of :data:`ADVERSARIES`).
        seed (`int`): the run seed.
        trials (`int`): conversations per scenario and player.
        embedder (`SentenceEncoder`, *optional*): for the decline rules (default: rules only).
        progress (`bool`): show a progress bar.

    Returns:
        `dict`: per player, ``conversations`` (scored), ``not_applicable`` (conversations where
        the cheat played the gold policy: no write to change or to add, no figure to alter),
        ``success`` (count), ``state``, ``told``, ``ended`` (counts of parts that held) and
        ``succeeded`` (scenario ids).
    """
    from tqdm.auto import tqdm

    scenarios = list(scenarios)
    names = list(names or [BASELINE, *ADVERSARIES])
    unknown = [n for n in names if n != BASELINE and n not in ADVERSARIES]
    if unknown:
        raise ValueError(f"unknown player {unknown[0]!r} (known: {[BASELINE, *ADVERSARIES]})")
    embedder = embedder or NO_EMBEDDINGS
    table: dict[str, dict[str, Any]] = {}
    bar = tqdm(total=len(names) * len(scenarios) * trials, disable=not progress, unit="conv")
    for name in names:
        row: dict[str, Any] = {"conversations": 0, "not_applicable": 0}
        row |= {part: 0 for part in _PARTS}
        row["succeeded"] = []
        for scenario in scenarios:
            for repetition in range(trials):
                trajectory, cheat = play_adversary(scenario, name, seed=seed, repetition=repetition)
                bar.update()
                if not getattr(cheat, "applies", True):
                    row["not_applicable"] += 1
                    continue
                outcome = grade_conversation(
                    trajectory, scenario, domain=domain_of(scenario), embedder=embedder
                )
                row["conversations"] += 1
                for part in _PARTS:
                    row[part] += bool(getattr(outcome, part))
                if outcome.success:
                    row["succeeded"].append(scenario.id)
        table[name] = row
    bar.close()
    return table


_PARTS = ("success", "state", "told", "ended")


def render_battery(table: dict[str, dict[str, Any]]) -> str:
    """The battery's table in markdown: per player, conversations scored, the share that
    succeeded and the share of each part that held."""
    lines = [
        "| player | scored | n/a | success | state | told | ended |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in table.items():
        n = row["conversations"]
        shares = " | ".join(f"{row[p] / n:.3f}" if n else "-" for p in _PARTS)
        lines.append(f"| {name} | {n} | {row['not_applicable']} | {shares} |")
    return "\n".join(lines) + "\n"
