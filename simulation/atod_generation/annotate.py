"""Trajectory annotation: slot values, dependencies, outcomes and complexity (atod.md §4.2, A.4).

A walk becomes a `Trajectory`: each goal gets the required slots of its SGD intent (plus at
most one optional slot) with values drawn from the values SGD users gave for that service
and slot, a description, a planned outcome, and prerequisite links. Dependencies go from an
earlier goal to a later one (so the graph is acyclic) by these rules, in order of preference:
same service search -> transaction (FindRestaurants -> ReserveRestaurant), calendar check ->
a dated transaction, travel booking -> a goal at the destination (the city is copied over),
and, for complex trajectories that still have fewer than two, an earlier transaction -> a
later goal. Shared slot values are copied from prerequisite to dependent.

Table 14 decides the construction attributes by complexity (the walk's stratum):
medium: 2-8 goals, at most 2 dependencies (present in about 30 % of dialogues), no
proactivity, no failure (a goal may be abandoned); complex: 7+ goals, at least 2
dependencies, proactive system turns, one failed goal (the obstacle scenario), possibly an
abandoned goal and one asynchronous goal still pending at the end. Goals with dependents
always complete. `complexity_problems` checks these criteria (the verifier re-checks them).

With a backend, the LLM writes each goal's description; a description that drops a slot
value is replaced by the template (the labels never depend on the LLM).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from simulation.atod_generation import templates
from simulation.atod_generation.sequences import GoalKey, SgdCorpus
from simulation.atod_generation.walks import Walk

FALLBACK_VALUES = {
    "date": ["March 3rd", "next Friday", "April 12th"],
    "time": ["10:30 am", "6 pm", "2:15 pm"],
    "city": ["Chicago", "Seattle", "Denver"],
    "number": ["2", "3"],
}
DESTINATION_SLOTS = ("destination_city", "destination", "to_location")
LOCAL_SLOTS = ("city", "city_of_event", "location", "destination", "where_to", "area")
TRAVEL_INTENTS = {"ReserveOnewayFlight", "ReserveRoundtripFlights", "BuyBusTicket"}
LOCAL_DOMAINS = {"Hotels", "Restaurants", "Events", "Travel", "Weather", "Movies", "Services"}
DESCRIBE_PROMPT = (
    "Write one first-person sentence in which a user describes this goal to an assistant. "
    "Keep every value exactly as written.\nGoal: {phrase}\nValues: {values}\nSentence:"
)


@dataclass
class AnnotatedGoal:
    """One goal of a trajectory, ready for dialogue generation."""

    id: str
    key: GoalKey
    slot_values: dict[str, str]
    transactional: bool
    content: str = ""
    core_content: str = ""
    dependencies: list[str] = field(default_factory=list)
    outcome: str = "completed"
    withheld: str | None = None


@dataclass
class Trajectory:
    """An annotated goal trajectory tau = (S, D_S, c(S))."""

    index: int
    complexity: str
    goals: list[AnnotatedGoal]
    proactivity: bool
    failure_scenario: bool

    @property
    def num_dependencies(self) -> int:
        """Number of prerequisite edges."""
        return sum(len(g.dependencies) for g in self.goals)

    def goal(self, goal_id: str) -> AnnotatedGoal:
        """The goal with this id."""
        return next(g for g in self.goals if g.id == goal_id)


def _value(corpus: SgdCorpus, service: str, slot: str, rng: random.Random) -> str:
    pool = corpus.slot_values.get((service, slot))
    if not pool:
        kind = next((k for k in FALLBACK_VALUES if k in slot), "number")
        pool = FALLBACK_VALUES[kind] if kind != "number" or "number" in slot else ["standard"]
    return rng.choice(pool)


def _order(goals: list[GoalKey], corpus: SgdCorpus) -> list[GoalKey]:
    """Move a search goal in front of the same service's transaction it precedes."""
    ordered = list(goals)
    for goal in list(ordered):
        schema = corpus.schemas.get(goal)
        if schema is None or not schema.transactional:
            continue
        for other in ordered[ordered.index(goal) + 1 :]:
            info = corpus.schemas.get(other)
            if other.service == goal.service and info is not None and not info.transactional:
                ordered.remove(other)
                ordered.insert(ordered.index(goal), other)
    return ordered


def _candidate_links(goals: list[AnnotatedGoal]) -> list[tuple[int, int]]:
    links = []
    for j, dep in enumerate(goals):
        for i, pre in enumerate(goals[:j]):
            same = pre.key.service == dep.key.service and not pre.transactional
            calendar = (
                pre.key.domain == "Calendar"
                and not pre.transactional
                and any("date" in s for s in dep.slot_values)
            )
            travel = pre.key.intent in TRAVEL_INTENTS and dep.key.domain in LOCAL_DOMAINS
            if dep.transactional and (same or calendar) or travel:
                links.append((i, j))
    return links


def _link(pre: AnnotatedGoal, dep: AnnotatedGoal) -> None:
    dep.dependencies.append(pre.id)
    for slot, value in pre.slot_values.items():
        if slot in dep.slot_values:
            dep.slot_values[slot] = value
    city = next((pre.slot_values[s] for s in DESTINATION_SLOTS if s in pre.slot_values), None)
    if city is not None and pre.key.service != dep.key.service:
        for slot in LOCAL_SLOTS:
            if slot in dep.slot_values:
                dep.slot_values[slot] = city
                break


def _dependencies(goals: list[AnnotatedGoal], complexity: str, rng: random.Random) -> None:
    links = _candidate_links(goals)
    rng.shuffle(links)
    wanted = rng.randint(2, 3) if complexity == "complex" else rng.choice([0, 0, 0, 1, 2])
    chosen: list[tuple[int, int]] = []
    for i, j in links:  # at most one prerequisite per goal keeps the dialogue plan readable
        if len(chosen) < wanted and all(j != b for _, b in chosen):
            chosen.append((i, j))
    generic = [(i, j) for j in range(len(goals)) for i in range(j) if goals[i].transactional]
    generic += [(i, j) for j in range(len(goals)) for i in range(j)]
    for i, j in generic:
        if len(chosen) >= wanted:
            break
        if all(j != b for _, b in chosen) and (i, j) not in chosen:
            chosen.append((i, j))
    for i, j in sorted(chosen):
        _link(goals[i], goals[j])


def _outcomes(goals: list[AnnotatedGoal], complexity: str, rng: random.Random) -> None:
    prerequisites = {d for g in goals for d in g.dependencies}
    free = [g for g in goals if g.id not in prerequisites]
    rng.shuffle(free)
    if complexity == "complex":
        free.pop().outcome = "failed"
        if free and rng.random() < 0.5:
            free.pop().outcome = "abandoned"
        unresolved = [g for g in free if g.transactional]
        if unresolved and rng.random() < 0.3:
            unresolved[0].outcome = "pending"
    elif free and rng.random() < 0.3:
        free.pop().outcome = "abandoned"


def describe(goal: AnnotatedGoal, rng: random.Random) -> str:
    """The template description of a goal (first person, every slot value included)."""
    phrase = templates.goal_phrase(goal.key)[0]
    details = templates.render_slots(goal.slot_values, rng)
    return f"I want to {phrase} with {details}." if details else f"I want to {phrase}."


def annotate_walk(walk: Walk, corpus: SgdCorpus, rng: random.Random, index: int) -> Trajectory:
    """Turn a sampled walk into an annotated trajectory (template descriptions).

    Args:
        walk (`Walk`): The goal set and its complexity stratum.
        corpus (`SgdCorpus`): Schemas and slot-value pools.
        rng (`random.Random`): The dialogue's random generator.
        index (`int`): Position of the dialogue in the generated set.

    Returns:
        `Trajectory`: Goals in dialogue order with slots, dependencies and outcomes.
    """
    goals = []
    for number, key in enumerate(_order(list(walk.goals), corpus), start=1):
        schema = corpus.schemas[key]
        slots = list(schema.required_slots)
        optional = [s for s in schema.optional_slots if corpus.slot_values.get((key.service, s))]
        if optional and (not slots or rng.random() < 0.4):
            slots.append(rng.choice(optional))
        values = {slot: _value(corpus, key.service, slot, rng) for slot in slots}
        goals.append(AnnotatedGoal(f"goal_{number}", key, values, schema.transactional))
    _dependencies(goals, walk.complexity, rng)
    _outcomes(goals, walk.complexity, rng)
    for goal in goals:
        goal.core_content = templates.goal_phrase(goal.key)[1]
        goal.content = describe(goal, rng)
        # An abandoned goal is dropped before the system would ask, so it withholds nothing.
        if len(goal.slot_values) >= 2 and goal.outcome != "abandoned" and rng.random() < 0.5:
            goal.withheld = list(goal.slot_values)[-1]
    complex_ = walk.complexity == "complex"
    return Trajectory(
        index, walk.complexity, goals, proactivity=complex_, failure_scenario=complex_
    )


def describe_with_backend(trajectory: Trajectory, backend) -> int:
    """Let an LLM backend rewrite the goal descriptions; keep a rewrite only if it has all values.

    Args:
        trajectory (`Trajectory`): Annotated with template descriptions (changed in place).
        backend (`ChatBackend`): Any `simulation.backends` backend (`complete(prompts)`).

    Returns:
        `int`: Number of descriptions that kept the template (rewrite rejected).
    """
    prompts = [
        DESCRIBE_PROMPT.format(
            phrase=templates.goal_phrase(g.key)[0],
            values="; ".join(
                f"{k} = {templates.render_value(v)}" for k, v in g.slot_values.items()
            ),
        )
        for g in trajectory.goals
    ]
    kept = 0
    for goal, text in zip(trajectory.goals, backend.complete(prompts), strict=True):
        text = text.strip().split("\n")[0]
        values = [templates.render_value(v).lower() for v in goal.slot_values.values()]
        if text and all(v in text.lower() for v in values):
            goal.content = text
        else:
            kept += 1
    return kept


def complexity_problems(trajectory: Trajectory) -> list[str]:
    """Table 14 construction criteria that the trajectory violates (empty when it passes)."""
    n, deps = len(trajectory.goals), trajectory.num_dependencies
    outcomes = [g.outcome for g in trajectory.goals]
    problems = []
    if trajectory.complexity == "medium":
        if not 2 <= n <= 8:
            problems.append(f"medium needs 2-8 goals, has {n}")
        if deps > 2:
            problems.append(f"medium allows at most 2 dependencies, has {deps}")
        if trajectory.proactivity or "failed" in outcomes:
            problems.append("medium has no proactivity and no failure scenario")
    else:
        if n < 7:
            problems.append(f"complex needs 7+ goals, has {n}")
        if deps < 2:
            problems.append(f"complex needs at least 2 dependencies, has {deps}")
        if not trajectory.proactivity or "failed" not in outcomes:
            problems.append("complex needs proactivity and a failure scenario")
    return problems
