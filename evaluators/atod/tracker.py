"""The ATOD memory tracker (atod.md §5.2): extract -> match -> update / insert+evolve -> decide.

It reads only each turn's speaker and utterance. Per turn:

1. **extract**: the utterance is split into clauses; a user clause with a request cue whose
   best intent (cosine to the SGD intent catalogue, restricted to the domains its cue words
   name) reaches `intent_threshold` is a goal candidate; every clause is also a mention.
2. **match** (existence check): FAISS top-`k` (5) neighbours with cosine >= `threshold`
   (0.40), then a judge: the `JudgeBackend` when given, else the offline rule: a clause
   that says it adds something ("also", "another") is a new goal; otherwise it belongs to the
   goal of the same domain and intent, else to the domain's latest goal still in play, and
   a request that points back ("those tickets") to the goal that found them (a switch cue
   such as "instead" makes it a new goal and marks the old one replaced). A completion report
   that names no domain ("Your confirmation number is …") goes with the clause before it.
3. **update** the matched goal (slot cues; a goal mentioned again after it was opened becomes
   pending), or **insert** the candidate and **evolve** links to its neighbours (dependency on
   a dependency cue, link for a same-domain neighbour, else none; the judge decides when given).
4. **decide** statuses: every goal's evidence of the turn (`status_features`: what each speaker
   said about it, the turn before, whether the user moved on, replaced it or closed) goes to
   the status model (`status_model.json`, fitted on the fit part of the development split by
   `mads-bench atod fit`), which moves undecided goals to completed, failed or abandoned. A
   decided goal stays decided, and a goal has no status before it is mentioned. With a judge,
   its status verdicts (and a closing-turn audit of informational goals) decide instead.

Defaults follow Table 19: top-k 5, tau 0.40, IndexFlatIP over normalised MiniLM, audit
every turn, all MiniLM (`MemoryTracker()`). `MemoryTracker.for_encoders()` (what `atod track`
runs) keeps the goal memory over the static word-piece encoder and reads only the intent of
request clauses with MiniLM: the same algorithm at a seventh of the encoder time.
`track(turns)` runs a whole dialogue (offline); `step(speaker, utterance)` is the online mode
and returns the goal table after the turn.

Example:
    >>> tracker = MemoryTracker()  # doctest: +SKIP
    >>> turns = [("USER", "I need to book a flight to Boston on May 3rd.")]
    >>> state = tracker.track(turns)  # doctest: +SKIP
    >>> state.goals[0].intent, state.goals[0].status  # doctest: +SKIP
    ('ReserveOnewayFlight', 'open')
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from evaluators.atod import cues
from evaluators.atod.catalog import IntentEntry, action_cues, domain_cues, load_intent_catalog
from evaluators.atod.judge import (
    RELATION_PROMPT,
    STATUS_PROMPT,
    judge_same_goal,
    parse_relations,
    parse_status,
)
from evaluators.atod.matching import EmbedFn, minilm_embedder
from evaluators.atod.memory import TERMINAL, GoalStore, TrackedGoal
from evaluators.atod.status_features import (
    FEATURES,
    GoalRecord,
    TurnContext,
    goal_features,
    remember,
)
from evaluators.atod.status_model import StatusModel, load_status_model
from simulation.backends.judge import JudgeBackend

DEFAULT_ENCODERS = ("minilm-static", "minilm")
"""(memory, intent) encoders of the offline default: the goal memory over the static word-piece
encoder, the intent of request clauses read by MiniLM."""
SETTINGS: dict[tuple[str, str], dict[str, float]] = {
    ("minilm", "minilm"): {
        "threshold": 0.40,
        "intent_threshold": 0.35,
        "unnamed_intent_threshold": 0.50,
    },
    ("minilm-static", "minilm"): {
        "threshold": 0.40,
        "intent_threshold": 0.35,
        "unnamed_intent_threshold": 0.60,
    },
    ("minilm-static", "minilm-static"): {
        "threshold": 0.50,
        "intent_threshold": 0.35,
        "unnamed_intent_threshold": 0.60,
    },
}
"""Thresholds per (memory, intent) encoder pair: cosines differ in scale between encoders.
All-MiniLM follows Table 19 (tuned on the sample); the others are what `atod cv` picks on
`atod_dev` in most folds."""


@dataclass
class TrackerState:
    """What a tracking run produced: the goal table and one record per turn."""

    goals: list[TrackedGoal]
    turns: list[dict] = field(default_factory=list)
    seconds_per_turn: list[float] = field(default_factory=list)
    features: list[tuple[int, int, np.ndarray]] = field(default_factory=list)
    """(goal index, turn, status features) for every goal on every turn from its first one."""


class MemoryTracker:
    """Symbolic + vector memory goal tracker with a zero-LLM default.

    Args:
        embedder (`EmbedFn`, *optional*): Texts -> normalised vectors (MiniLM when None): the
            goal memory's vectors (existence match, attribution of follow-up clauses).
        intent_embedder (`EmbedFn`, *optional*): Reads the intent of the user's request
            clauses against the catalogue (``embedder`` when None). Only request clauses
            (~1 in 9) reach it, so a slow accurate encoder costs little here.
        judge (`JudgeBackend`, *optional*): Used for existence checks, status and relations.
        catalog (`list[IntentEntry]`, *optional*): Intent catalogue (SGD when None).
        top_k (`int`): Neighbours retrieved per candidate (Table 19: 5).
        threshold (`float`): Existence-match cosine threshold tau (Table 19: 0.40).
        intent_threshold (`float`): Minimum intent cosine for a new goal.
        status_model (`StatusModel`, *optional*): Decides when a goal is completed, failed or
            abandoned (the shipped `status_model.json` when None); not used with a judge.
    """

    def __init__(
        self,
        embedder: EmbedFn | None = None,
        judge: JudgeBackend | None = None,
        intent_embedder: EmbedFn | None = None,
        catalog: list[IntentEntry] | None = None,
        top_k: int = 5,
        threshold: float = 0.40,
        intent_threshold: float = 0.35,
        unnamed_intent_threshold: float = 0.50,
        status_model: StatusModel | None = None,
    ) -> None:
        self.embed = embedder or minilm_embedder()
        self.embed_intent = intent_embedder or self.embed
        self._dim = self.embed(["goal"]).shape[1]
        self.judge = judge
        self.catalog = catalog or load_intent_catalog()
        self.top_k, self.threshold, self.intent_threshold = top_k, threshold, intent_threshold
        self.unnamed_intent_threshold = unnamed_intent_threshold
        self.status_model = status_model or load_status_model(features=FEATURES)
        self._informational = {(e.domain, e.intent) for e in self.catalog if not e.transactional}
        rows = [(i, text) for i, entry in enumerate(self.catalog) for text in entry.exemplars]
        self._exemplar_owner = np.array([i for i, _ in rows])
        self._exemplars = self.embed_intent([text for _, text in rows])
        self.reset()

    @classmethod
    def for_encoders(
        cls,
        memory: str = DEFAULT_ENCODERS[0],
        intent: str = DEFAULT_ENCODERS[1],
        judge: JudgeBackend | None = None,
        **overrides: float,
    ) -> MemoryTracker:
        """A tracker over named sentence encoders with their thresholds (`SETTINGS`).

        Raises:
            `ValueError`: For a pair without settings (the message lists the known ones).
        """
        settings = {**settings_for(memory, intent), **overrides}
        memory_embedder = minilm_embedder(memory)
        intent_embedder = memory_embedder if intent == memory else minilm_embedder(intent)
        return cls(memory_embedder, judge, intent_embedder, **settings)

    def reset(self) -> None:
        """Forget the current dialogue."""
        self.store = GoalStore(self._dim)
        self.state = TrackerState(self.store.goals)
        self.turn = 0
        self._intent_vectors: dict[str, np.ndarray] = {}  # request clause -> intent vector
        self._records: list[GoalRecord] = []  # one per goal: its evidence from earlier turns
        self._switched: set[int] = set()  # goals a switch cue replaced on this turn

    def track(self, turns: list[tuple[str, str]]) -> TrackerState:
        """Track a whole dialogue (offline mode).

        Args:
            turns (`list[tuple[str, str]]`): `(speaker, utterance)` per turn, in order.

        Returns:
            `TrackerState`: The final goal table and the per-turn records.
        """
        self.reset()
        start = time.perf_counter()
        clauses = [_clauses(utterance) for _, utterance in turns]
        flat = [clause for turn in clauses for clause in turn]
        vectors = self._embed(flat)  # the whole dialogue's clauses in one encoder call
        if self.embed_intent is not self.embed:
            requests = [
                clause
                for (speaker, _), turn in zip(turns, clauses, strict=True)
                if speaker.upper() == "USER"
                for clause in turn
                if cues.is_request(clause)
            ]
            if requests:
                self._intent_vectors = dict(zip(requests, self.embed_intent(requests), strict=True))
        share = (time.perf_counter() - start) / max(1, len(turns))
        offset = 0
        for (speaker, utterance), turn in zip(turns, clauses, strict=True):
            self._step(speaker, utterance, turn, vectors[offset : offset + len(turn)], share)
            offset += len(turn)
        return self.state

    def step(self, speaker: str, utterance: str) -> list[TrackedGoal]:
        """Process one turn (online mode) and return the goal table after it."""
        start = time.perf_counter()
        clauses = _clauses(utterance)
        vectors = self._embed(clauses)
        return self._step(speaker, utterance, clauses, vectors, time.perf_counter() - start)

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self.embed(texts) if texts else np.zeros((0, self._dim), np.float32)

    def _step(
        self,
        speaker: str,
        utterance: str,
        clauses: list[str],
        vectors: np.ndarray,
        embed_seconds: float,
    ) -> list[TrackedGoal]:
        start = time.perf_counter() - embed_seconds  # the turn's share of the encoder time
        self.turn += 1
        speaker = speaker.upper()
        before = {g.id: g.status for g in self.store.goals}
        known = len(self.store.goals)
        self._switched = set()
        touched: dict[int, list[str]] = {}
        carried: list[int] = []
        for clause, vector in zip(clauses, vectors, strict=True):
            if carried and _reports_done(clause, speaker):
                targets = carried  # "Your confirmation number is …" closes what was just said
            else:
                targets = self._process_clause(clause, vector, speaker)
            if not targets and not domain_cues(clause):
                targets = carried  # "Please reserve that one." refers to the last goal named
            for index in targets:
                touched.setdefault(index, []).append(clause)
            carried = targets or carried
        self._update(touched, speaker)
        if self.judge is not None:
            self._audit(touched, speaker, utterance)
        context = TurnContext(
            turn=self.turn,
            speaker=speaker,
            closing=speaker == "USER" and bool(cues.CLOSING.search(utterance)),
            others_touched=bool(touched),
            opened={i: self.store.goals[i].domain for i in range(known, len(self.store.goals))},
            switched=frozenset(self._switched),
        )
        self._decide(touched, clauses, context)
        self._record(speaker, utterance, before)
        self.state.seconds_per_turn.append(time.perf_counter() - start)
        return self.store.goals

    # ------------------------------------------------------------------ stages

    def _process_clause(self, clause: str, vector: np.ndarray, speaker: str) -> list[int]:
        named = domain_cues(clause)
        neighbours = self.store.search(vector, self.top_k, self.threshold)
        request = speaker == "USER" and cues.is_request(clause)
        intent = self._recognise(clause, vector, named) if request else None
        if intent is not None:
            match = self._existing(clause, intent, neighbours)
            if match is not None and cues.SWITCH.search(clause):
                self._switched.add(match)  # replaced: the judge or the status model decides
                if self.judge is not None:
                    self.store.goals[match].set_status("abandoned", self.turn)
                match = None
            if match is None:
                return [self._insert(clause, vector, intent, neighbours)]
            return [match]
        return self._attribute(named, neighbours)

    def _recognise(self, clause: str, vector: np.ndarray, named: set[str]) -> IntentEntry | None:
        if self.embed_intent is not self.embed:  # batched per dialogue by `track`
            vector = self._intent_vectors.get(clause)
            if vector is None:
                vector = self.embed_intent([clause])[0]
        sims = self._exemplars @ vector
        best: dict[int, float] = {}
        for owner, sim in zip(self._exemplar_owner, sims, strict=True):
            best[int(owner)] = max(best.get(int(owner), -1.0), float(sim))
        actions = action_cues(clause)
        scored = []
        for index, sim in best.items():
            entry = self.catalog[index]
            if named and entry.domain not in named:
                continue
            transactional_cue = bool(actions & {"book", "buy", "transfer", "add", "rent"})
            sim += 0.03 if entry.transactional == transactional_cue else 0.0
            scored.append((sim, index))
        if not scored:
            return None
        sim, index = max(scored)
        # Without a domain word, only a confident intent makes a new goal: follow-up details
        # ("I'm looking at Saturday") must not open goals of their own.
        needed = self.intent_threshold if named else self.unnamed_intent_threshold
        return self.catalog[index] if sim >= needed else None

    def _existing(
        self, clause: str, intent: IntentEntry, neighbours: list[tuple[int, float]]
    ) -> int | None:
        if self.judge is not None and neighbours:
            texts = [(clause, self.store.goals[i].content) for i, _ in neighbours]
            for (index, _), same in zip(
                neighbours, judge_same_goal(self.judge, texts), strict=True
            ):
                if same:
                    return index
            return None
        same_intent = [
            i
            for i, g in enumerate(self.store.goals)
            if (g.domain, g.intent) == (intent.domain, intent.intent) and g.status != "abandoned"
        ]
        ranked = [i for i, _ in neighbours if i in same_intent]
        match = ranked[0] if ranked else (same_intent[-1] if same_intent else None)
        if cues.SWITCH.search(clause):
            return match  # the caller abandons it for the new goal
        if cues.NEW_GOAL.search(clause):
            return None  # "I also need …", "another ride": a goal of its own
        if match is not None:
            return match
        # "I'd like a morning flight." adds to the flight already asked for, whatever intent
        # the clause reads as on its own
        match = self._in_domain(intent.domain, ("open", "pending"))
        if match is None and cues.REFERENCE.search(clause):
            # "Can you purchase those tickets?" acts on what an earlier goal found
            match = self._in_domain(intent.domain, ("open", "pending", "completed"))
            if match is None and neighbours:
                match = neighbours[0][0]
        return match

    def _in_domain(self, domain: str, statuses: tuple[str, ...]) -> int | None:
        """The most recent goal of ``domain`` whose status is one of ``statuses``."""
        for index in range(len(self.store.goals) - 1, -1, -1):
            goal = self.store.goals[index]
            if goal.domain == domain and goal.status in statuses:
                return index
        return None

    def _insert(
        self, clause: str, vector: np.ndarray, intent: IntentEntry, neighbours: list
    ) -> int:
        goal = self.store.insert(
            clause, intent.domain, intent.intent, intent.descriptions[0], vector, self.turn
        )
        goal.slot_values.update(cues.slot_cues(clause, intent.slots))
        related = [self.store.goals[i] for i, _ in neighbours]
        if self.judge is not None and related:
            listing = "\n".join(f"- {g.id}: {g.content}" for g in related)
            answer = self.judge.complete([RELATION_PROMPT.format(new=clause, earlier=listing)])[0]
            relations = parse_relations(answer, [g.id for g in related])
        else:
            relations = {}
            for rank, g in enumerate(related):
                if rank == 0 and cues.DEPENDENCY.search(clause):
                    relations[g.id] = "dependency"
                elif g.domain == goal.domain:
                    relations[g.id] = "link"
        goal.dependencies = [i for i, r in relations.items() if r == "dependency"]
        goal.links = [i for i, r in relations.items() if r == "link"]
        self._records.append(GoalRecord(self.turn, self.turn, self.turn))
        return len(self.store.goals) - 1

    def _attribute(self, named: set[str], neighbours: list[tuple[int, float]]) -> list[int]:
        goals, near = self.store.goals, [i for i, _ in neighbours]
        targets = []
        for domain in named:
            in_domain = [i for i, g in enumerate(goals) if g.domain == domain]
            ranked = [i for i in near if i in in_domain]
            if ranked or in_domain:
                targets.append(ranked[0] if ranked else in_domain[-1])
        if not targets and near:
            targets.append(near[0])
        return targets

    def _update(self, touched: dict[int, list[str]], speaker: str) -> None:
        pairs = [(i, clause) for i, clauses in touched.items() for clause in clauses]
        verdicts: list[str | None] = [None] * len(pairs)
        if self.judge is not None and pairs:
            prompts = [
                STATUS_PROMPT.format(
                    goal=self.store.goals[i].content,
                    status=self.store.goals[i].status,
                    speaker=speaker,
                    utterance=clause,
                )
                for i, clause in pairs
            ]
            verdicts = [parse_status(a) for a in self.judge.complete(prompts)]
        for (index, clause), verdict in zip(pairs, verdicts, strict=True):
            goal = self.store.goals[index]
            entry = next(
                (e for e in self.catalog if (e.domain, e.intent) == (goal.domain, goal.intent)),
                None,
            )
            if entry is not None:
                goal.slot_values.update(cues.slot_cues(clause, entry.slots))
            if self.judge is not None:
                self._transition(goal, verdict or cues.classify_status(clause, speaker), speaker)
            elif goal.status == "open" and self.turn > goal.first_turn:
                goal.set_status("pending", self.turn)  # mentioned again: in progress

    def _decide(
        self, touched: dict[int, list[str]], clauses: list[str], context: TurnContext
    ) -> None:
        """Every goal's status features for this turn; the status model decides undecided
        goals (without a judge). A decided goal stays decided: the lifecycle never leaves
        `completed`, `failed` or `abandoned` in the ATOD annotations. The evidence about a goal
        is the clauses attributed to it and those that name its domain ("No need to buy the
        jazz tickets yet" speaks of the concert even when it opened nothing)."""
        named = [(clause, domain_cues(clause)) for clause in clauses]
        for index, goal in enumerate(self.store.goals):
            record = self._records[index]
            own = touched.get(index, [])
            evidence = own + [c for c, domains in named if goal.domain in domains and c not in own]
            # decided goals get features too (`atod fit` labels their turns from gold, which
            # may still hold them undecided); for them "pending" is what it would have been
            pending = goal.status == "pending" or (
                goal.status in TERMINAL and self.turn > goal.first_turn
            )
            x = goal_features(
                record,
                evidence,
                bool(own),
                context,
                goal.domain,
                (goal.domain, goal.intent) in self._informational,
                "pending" if pending else "open",
                index,
            )
            self.state.features.append((index, self.turn, x))
            if self.judge is None and goal.status not in TERMINAL:
                decision = self.status_model.decide(x)
                if decision != "stay":
                    goal.set_status(decision, self.turn)
            remember(record, x, context)

    def _transition(self, goal: TrackedGoal, new: str | None, speaker: str) -> None:
        if goal.status in ("completed", "failed"):
            return  # decided goals stay decided
        if goal.status == "abandoned":
            if speaker == "USER" and new in ("pending", "completed"):
                goal.set_status("pending", self.turn)  # the user picked it up again
            return
        if new in (None, "open", "pending"):
            new = "pending" if self.turn > goal.first_turn else goal.status
        goal.set_status(new, self.turn)

    def _audit(self, touched: dict[int, list[str]], speaker: str, utterance: str) -> None:
        if speaker != "USER" or not cues.CLOSING.search(utterance):
            return
        for goal in self.store.active():
            if goal.status == "pending" and (goal.domain, goal.intent) in self._informational:
                goal.set_status("completed", self.turn)

    def _record(self, speaker: str, utterance: str, before: dict[str, str]) -> None:
        goals = self.store.goals
        self.state.turns.append(
            {
                "turn_id": self.turn,
                "speaker": speaker,
                "utterance": utterance,
                "all_goals": [
                    {
                        "goal_id": g.id,
                        "goal_content": g.content,
                        "status": g.status,
                        "status_changed": before.get(g.id, "not_mentioned") != g.status,
                    }
                    for g in goals
                ],
                "goal_status_changes": [
                    {"goal_id": g.id, "new_status": g.status, "turn": self.turn}
                    for g in goals
                    if before.get(g.id, "not_mentioned") != g.status
                ],
            }
        )


def settings_for(memory: str, intent: str) -> dict[str, float]:
    """The thresholds of an encoder pair; ``ValueError`` lists the known pairs."""
    if (memory, intent) not in SETTINGS:
        known = ", ".join(f"{m}+{i}" for m, i in SETTINGS)
        raise ValueError(f"no tracker settings for encoders {memory}+{intent}; known: {known}")
    return dict(SETTINGS[memory, intent])


def _clauses(utterance: str) -> list[str]:
    return cues.split_clauses(utterance) or ([utterance] if utterance.strip() else [])


def _reports_done(clause: str, speaker: str) -> bool:
    """A completion report that names no domain ("Your confirmation number is BT78294.")."""
    return (
        not domain_cues(clause)
        and not cues.is_request(clause)
        and cues.classify_status(clause, speaker) == "completed"
    )
