"""Dialogue planning from an annotated trajectory (atod.md §4.3): who does what, turn by turn.

The planner writes alternating USER/SYSTEM turns (starting with USER) as lists of *acts*,
each with at most one status effect, so the per-turn labels follow from the plan exactly:

| act (speaker) | effect | act (speaker) | effect |
| --- | --- | --- | --- |
| `intro` (U) | goal -> open | `ack`, `ask` (S) | goal -> pending |
| `abandon` (U) | goal -> abandoned | `complete` (S) | goal -> completed |
| `provide`, `check`, `followup`, `decline`, `close` (U) | none | `fail` (S) | goal -> failed |
| | | `wait_dep`, `still`, `recap`, `proactive`, `filler`, `bye` (S) | none |

Behaviours (§3.1): *interleaving* — new goals are introduced while earlier ones are pending,
and results arrive later, between other goals' turns; *asynchronous execution* — every goal
waits a seeded number of turns (1-2 medium, 2-4 complex) before its result, a goal with a
withheld slot waits for the user's answer, and a planned `pending` outcome stays pending to
the end after a `still` notice; *dependencies* — a dependent goal's result is only delivered
after all its prerequisites completed (the system says it is waiting); *proactivity*
(complex only) — the system offers a reminder or suggestion unprompted, which the user may
decline. A complex dialogue is padded with follow-up questions to Table 14's 30+ turns.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

from simulation.atod_generation.annotate import Trajectory

STATUS_EFFECT = {
    "intro": "open",
    "ack": "pending",
    "ask": "pending",
    "abandon": "abandoned",
    "complete": "completed",
    "fail": "failed",
}
TERMINAL = ("completed", "failed", "abandoned")
MAX_PAIRS = 60


@dataclass
class Act:
    """One thing a speaker does in a turn; `goal` is a goal id (None for social acts)."""

    kind: str
    goal: str | None = None
    other: str | None = None


@dataclass
class PlannedTurn:
    """One turn of the plan: its speaker and acts (the utterance is rendered later)."""

    speaker: str
    acts: list[Act] = field(default_factory=list)


class _Planner:
    def __init__(self, trajectory: Trajectory, rng: random.Random) -> None:
        self.t, self.rng = trajectory, rng
        self.complex = trajectory.complexity == "complex"
        self.status = {g.id: "not_mentioned" for g in trajectory.goals}
        self.to_intro = deque(trajectory.goals)
        self.ask_later: deque[str] = deque()
        self.awaiting: str | None = None  # goal whose withheld slot the system just asked for
        self.ready_at: dict[str, int] = {}
        self.abandon_at: dict[str, int] = {}
        self.settled: set[str] = set()
        self.decline_next = False
        self.max_active = rng.choice([3, 4] if self.complex else [2, 3])
        self.delays = (2, 4) if self.complex else (1, 2)
        self.min_turns = 30 if self.complex else 8
        self.proactive_at = set(rng.sample(range(2, 9), 2)) if self.complex else set()
        self.turns: list[PlannedTurn] = []

    def open_goals(self) -> list[str]:
        return [
            g for g, s in self.status.items() if s in ("open", "pending") and g not in self.settled
        ]

    def run(self) -> list[PlannedTurn]:
        for pair in range(MAX_PAIRS):
            user = self.user_acts(pair)
            self.turns.append(PlannedTurn("USER", user))
            for act in user:
                if act.kind in STATUS_EFFECT:
                    self.status[act.goal] = STATUS_EFFECT[act.kind]
            system = self.system_acts(pair, user)
            self.turns.append(PlannedTurn("SYSTEM", system))
            for act in system:
                if act.kind in STATUS_EFFECT:
                    self.status[act.goal] = STATUS_EFFECT[act.kind]
            if any(a.kind == "close" for a in user):
                break
        return self.turns

    def user_acts(self, pair: int) -> list[Act]:
        acts = []
        if self.awaiting is not None:
            goal = self.awaiting
            acts.append(Act("provide", goal))
            self.ready_at[goal] = pair + self.rng.randint(*self.delays)
            self.awaiting = None
        elif self.decline_next:
            acts.append(Act("decline"))
        self.decline_next = False
        due = [g for g, p in self.abandon_at.items() if p <= pair and self.status[g] == "pending"]
        if due and g_not_in(due[0], acts):
            acts.append(Act("abandon", due[0]))
            self.settled.add(due[0])
            if due[0] in self.ask_later:
                self.ask_later.remove(due[0])
        if self.to_intro and len(acts) < 2 and len(self.open_goals()) < self.max_active:
            acts.append(Act("intro", self.to_intro.popleft().id))
            if self.to_intro and not self.complex and len(acts) < 2 and self.rng.random() < 0.3:
                acts.append(Act("intro", self.to_intro.popleft().id))
        if not acts:
            acts.append(self.idle_act(pair))
        return acts

    def idle_act(self, pair: int) -> Act:
        waiting = [g for g in self.open_goals() if self.status[g] == "pending"]
        if waiting:
            return Act("check", waiting[0])
        if self.to_intro:
            return Act("intro", self.to_intro.popleft().id)
        if 2 * pair + 2 < self.min_turns:
            done = [g for g, s in self.status.items() if s == "completed"] or list(self.status)
            return Act("followup", self.rng.choice(done))
        return Act("close")

    def system_acts(self, pair: int, user: list[Act]) -> list[Act]:
        acts: list[Act] = []
        if any(a.kind == "close" for a in user):
            return [Act("bye")]
        for act in user:
            if act.kind == "intro":
                acts.extend(self.take_on(act.goal, pair, asked=any(a.kind == "ask" for a in acts)))
            elif act.kind == "followup":
                acts.append(Act("recap", act.goal))
        if self.awaiting is None and self.ask_later and not any(a.kind == "ask" for a in acts):
            goal = self.ask_later.popleft()
            acts.append(Act("ask", goal))
            self.awaiting = goal
        acts.extend(self.deliveries(pair))
        for act in user:
            if act.kind == "check" and not any(a.goal == act.goal for a in acts):
                acts.append(Act("still", act.goal))
        if pair in self.proactive_at:
            acts.append(Act("proactive"))
            self.decline_next = True
        return acts or [Act("filler")]

    def take_on(self, goal_id: str, pair: int, asked: bool) -> list[Act]:
        goal = self.t.goal(goal_id)
        acts = []
        if goal.withheld and not asked and self.awaiting is None:
            acts.append(Act("ask", goal_id))
            self.awaiting = goal_id
        else:
            acts.append(Act("ack", goal_id))
            if goal.withheld:
                self.ask_later.append(goal_id)
            else:
                self.ready_at[goal_id] = pair + self.rng.randint(*self.delays)
        for dep in goal.dependencies:
            if self.status[dep] != "completed":
                acts.append(Act("wait_dep", goal_id, other=dep))
        if goal.outcome == "abandoned":
            self.ready_at.pop(goal_id, None)
            self.abandon_at[goal_id] = pair + self.rng.randint(1, 3)
        return acts

    def deliveries(self, pair: int) -> list[Act]:
        acts = []
        done_before = {g for g, s in self.status.items() if s == "completed"}
        for goal in self.t.goals:
            g = goal.id
            ready = self.ready_at.get(g, MAX_PAIRS) <= pair and g != self.awaiting
            if not ready or g in self.settled or self.status[g] != "pending" or len(acts) == 2:
                continue
            if goal.outcome == "abandoned" or any(d not in done_before for d in goal.dependencies):
                continue  # the user abandons it first, or a prerequisite was not done before
            if goal.outcome == "pending":
                acts.append(Act("still", g))
            else:
                acts.append(Act("complete" if goal.outcome == "completed" else "fail", g))
                self.status[g] = goal.outcome
            self.settled.add(g)
        return acts


def g_not_in(goal: str, acts: list[Act]) -> bool:
    """Whether no act of the list is about `goal`."""
    return all(a.goal != goal for a in acts)


def plan_dialogue(trajectory: Trajectory, rng: random.Random) -> list[PlannedTurn]:
    """Plan the turns of a dialogue for a trajectory (see the module docstring).

    Args:
        trajectory (`Trajectory`): The annotated trajectory.
        rng (`random.Random`): The dialogue's random generator.

    Returns:
        `list[PlannedTurn]`: Alternating USER/SYSTEM turns, ending with the system's goodbye
        (or at the 60-pair safety cap, which the verifier then rejects).
    """
    return _Planner(trajectory, rng).run()


def status_timeline(trajectory: Trajectory, plan: list[PlannedTurn]) -> list[dict[str, str]]:
    """The status of every goal after each turn (index 0 = turn 1), from the acts' effects."""
    status = {g.id: "not_mentioned" for g in trajectory.goals}
    timeline = []
    for turn in plan:
        for act in turn.acts:
            if act.kind in STATUS_EFFECT:
                status[act.goal] = STATUS_EFFECT[act.kind]
        timeline.append(dict(status))
    return timeline


def is_interleaved(plan: list[PlannedTurn]) -> bool:
    """Whether some goal is acted on again after another goal was acted on in between."""
    seen: list[str] = []
    for turn in plan:
        for act in turn.acts:
            if act.goal is None:
                continue
            if act.goal in seen and seen[-1] != act.goal:
                return True
            seen.append(act.goal)
    return False
