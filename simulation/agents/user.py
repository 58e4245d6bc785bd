"""The scripted user: plays a persona, knows the objective and slots, acts out behaviors.

Deterministic for a (scenario, seed): the randomness (which realisation of each act, the
order and phrasing of slot values: :mod:`simulation.agents.phrasing`; which adversarial
phrase) comes from ``random.Random(f"{seed}:{scenario.id}:{turn}")``, so repetitions of a
scenario are worded differently. What it does each turn, in order:

1. opening (turn 0): greeting, the objective, and every slot that is neither withheld
   (``partial_information``) nor queued (``incremental_constraint_revelation``); withheld
   values that appear literally in the objective are left out of it grammatically
   (:func:`simulation.agents.objective.vague_objective`). In some conversations (seeded) one
   more value that the objective does not name is forgotten until the assistant asks for
   it, as people do; dates and times are said the way people say them ("May 1st", "7 pm");
2. goal revision: announced in the first message at or after user turn ``after_user_turn``
   (0-based message index), or earlier when the assistant asks to confirm an action or asks
   for a revised slot — a user who is about to change their mind does so before committing;
3. confirms when asked "shall I ...?"; otherwise answers the slots the assistant asks for
   (withheld ones are revealed only then); says ``[DONE]`` with a closing line once it has
   been told what it asked for (the outcome facts of
   :mod:`simulation.validator.outcome_facts`, which it knows as a simulator knows its task:
   from the gold workflow replayed with its seed) or when the assistant declines with
   alternatives. A reply that claims completion without those facts gets a follow-up ("I
   still need the balance."); it never ends on a non-answer, so an assistant that never
   answers meets the runner's turn cap or loop rule; repeats itself after the runner's
   could-not-process notice;
4. incremental revelation: one more queued slot per turn, in ``reveal_order``;
5. adversarial tone: frustration/scepticism phrases, more and stronger with the intensity.

Every applied behavior is recorded in ``injections``.
"""

from __future__ import annotations

import random
from typing import Any

from mads_bench.catalog import Domain, load_personas
from mads_bench.data_model import InjectionRecord, Message, Scenario
from mads_bench.text import normalise, split_sentences
from simulation.agents.objective import vague_objective
from simulation.agents.phrasing import (
    PHRASES,
    Fact,
    answer_sentence,
    facts_sentence,
    objective_sentence,
    pick,
)
from simulation.agents.settings import SETTINGS
from simulation.agents.slot_forms import slot_forms, slot_kind
from simulation.agents.speech import spoken_date_or_time
from simulation.agents.style import StyleProfile
from simulation.agents.text import (
    DONE_TOKEN,
    NOT_PROCESSED_NOTICE,
    asks_confirmation,
    declines_with_alternatives,
    is_affirmative,
    mentioned_slots,
    reports_completion,
    same_value,
    slot_label,
    spoken_value,
    value_in,
)
from simulation.agents.wording import user_wording, word_lists

FILLER = (*PHRASES["give"], *PHRASES["another"])
_DETAILS = word_lists().detail_kinds  # slot kinds a request may leave for the details after it


class ScriptedUser:
    """Rule-based simulated user (see the module docstring for the rules).

    Args:
        scenario: the scenario to play.
        seed: conversation seed (phrase choice only).
        domain: the scenario's loaded domain pack (for the gold replay).

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> mock = load_domain("mock")
        >>> user = ScriptedUser(mock.scenarios[0], seed=0, domain=mock)
        >>> print(user.respond([]).content)
        Hello, here's my problem: I need to cancel order O1. For reference, my order ID's O1.
    """

    spec = "scripted"

    def __init__(self, scenario: Scenario, seed: int = 0, *, domain: Domain) -> None:
        self.scenario, self.seed = scenario, seed
        self.style = StyleProfile.from_persona(load_personas()[scenario.persona])
        self.slots: dict[str, Any] = dict(scenario.slots)
        partial = scenario.behaviors_of("partial_information")
        self.withheld = {s for b in partial for s in b.withheld}
        incremental = scenario.behaviors_of("incremental_constraint_revelation")
        self.queue = [s for b in incremental for s in b.reveal_order]
        revisions = scenario.behaviors_of("goal_revision")
        self.revision = revisions[0] if revisions else None
        tones = scenario.behaviors_of("adversarial_tone")
        self.tone = tones[0].intensity if tones else None
        self.deferred = self._defer(random.Random(f"{seed}:{scenario.id}:defer"))
        self.given: set[str] = set()
        self.turn = 0
        # what a good conversation yields (imported here: the validator reads the agents' text)
        from simulation.validator.state import replay_workflow

        self.expected = replay_workflow(scenario, seed, domain)
        self.injections: list[InjectionRecord] = []

    def _defer(self, rng: random.Random) -> set[str]:
        """Now and then one value the opening does not mention, as people forget one: it is
        given when the assistant asks. Never a value the objective names, nor one that a
        behavior already holds back or revises."""
        revised = {n for b in self.scenario.behaviors_of("goal_revision") for n in b.revised_slots}
        objective = normalise(self.scenario.objective, numbers="canonical")
        # only a value a call takes as it is: the assistant will ask for it when it needs it
        arguments = [v for call in self.scenario.gold_workflow for v in call.arguments.values()]
        candidates = [
            n
            for n, value in self.slots.items()
            if n not in self.withheld | set(self.queue) | revised
            and not isinstance(value, (dict, list))
            and not value_in(value, objective)
            and any(same_value(value, argument) for argument in arguments)
        ]
        opening = [n for n in self.slots if n not in self.withheld and n not in self.queue]
        if len(opening) < 2 or not candidates or rng.random() >= SETTINGS.deferred_value_share:
            return set()
        return {rng.choice(candidates)}

    def _record(self, kind: str, detail: str) -> None:
        self.injections.append(
            InjectionRecord(kind=kind, turn_index=self.turn, seed=self.seed, detail=detail)
        )

    def _facts(self, names: list[str], rng: random.Random | None = None) -> list[Fact]:
        self.given.update(names)
        return [
            Fact(slot_label(n), self._value(n, rng), slot_forms(n, self.slots[n], "user"))
            for n in names
        ]

    def _value(self, name: str, rng: random.Random | None) -> str:
        """How the user says a slot's value: a date or a time as people say them ("May 1st",
        "7 pm"), drawn per turn; the rest as :func:`spoken_value` writes it."""
        value = self.slots[name]
        if rng is not None and isinstance(value, str):
            return spoken_date_or_time(spoken_value(value), rng)
        return spoken_value(value)

    def respond(self, view: list[Message]) -> Message:
        """The next user message, given the user-facing exchanges so far."""
        rng = random.Random(f"{self.seed}:{self.scenario.id}:{self.turn}")
        done = False
        if self.turn == 0:
            sentences, facts = [self._objective_sentence(rng)], self._opening_facts(rng)
        else:
            sentences, facts, done = self._reply(view, rng)
        if not done and self.turn > 0 and self.queue:
            facts += self._reveal_next(rng)
        if self.tone:
            if self.tone != "mild" or rng.random() < SETTINGS.mild_tone_share or self.turn == 0:
                phrase, closer = rng.sample(user_wording().tone[self.tone], 2)
                if self.tone == "severe":
                    sentences = [phrase.upper(), *sentences, closer]
                else:
                    sentences = [phrase, *sentences]
                self._record("adversarial_tone", f"{self.tone}: {phrase}")
        if self.style.layout == "prose":  # values in a sentence, worded per seed
            sentences, lines = [*sentences, facts_sentence(facts, rng)], []
        else:  # the persona writes key: value lines or lists, in no fixed order
            lines = [f"{f.label}: {f.value}" for f in rng.sample(facts, len(facts))]
        values = {spoken_value(v) for v in self.slots.values()}
        protected = tuple(
            {slot_label(n) for n in self.slots}
            | values
            | {v.rstrip(".!?") for v in values}  # a sentence value said inside a sentence
            | {text for fact in facts for text in (fact.label, fact.value)}
        )
        text = self.style.apply(
            [s for s in sentences if s], lines, opening=self.turn == 0, closing=done,
            turn=self.turn, filler=FILLER, rng=rng, protected=protected,
        )  # fmt: skip
        if done:
            text = f"{text} {DONE_TOKEN}"
        self.turn += 1
        return Message(role="user", content=text, turn_index=self.turn - 1)

    def _objective_sentence(self, rng: random.Random) -> str:
        held = {name: self.slots[name] for name in self.withheld | set(self.queue)}
        # now and then the request leaves out one detail the facts after it give anyway
        # ("book a table at Maison Lune" ... "for May 23rd"), so repetitions word it apart
        objective = normalise(self.scenario.objective, numbers="canonical")
        named = [  # a when, where, for whom or how many; never the verb, an id or an amount
            n for n, v in self.slots.items()
            if n not in held and n not in self.deferred and slot_kind(n, v) in _DETAILS
            and value_in(v, objective)
        ]  # fmt: skip
        if named and rng.random() < SETTINGS.vague_objective_share:
            for name in rng.sample(named, min(len(named), rng.choice((1, 2)))):
                held[name] = self.slots[name]
        return objective_sentence(vague_objective(self.scenario.objective.strip(), held), rng)

    def _opening_facts(self, rng: random.Random) -> list[Fact]:
        held = self.withheld | set(self.queue) | self.deferred
        names = [n for n in self.slots if n not in held]
        if self.withheld:
            self._record("partial_information", f"withheld {sorted(self.withheld)}")
        if self.queue:
            self._record("incremental_constraint_revelation", f"held back {self.queue}")
        return self._facts(names, rng)

    def _reveal_next(self, rng: random.Random) -> list[Fact]:
        while self.queue and self.queue[0] in self.given:
            self.queue.pop(0)
        if not self.queue:
            return []
        name = self.queue.pop(0)
        self._record("incremental_constraint_revelation", f"revealed {name}")
        return self._facts([name], rng)

    def _reply(self, view: list[Message], rng: random.Random) -> tuple[list[str], list[Fact], bool]:
        last = view[-1].content if view and view[-1].role == "assistant" else ""
        prose = self.style.layout == "prose"  # sentences, not key: value lines or lists
        if last == NOT_PROCESSED_NOTICE:
            previous = [m.content for m in view if m.role == "user"]
            return [f"I said: {previous[-1]}" if previous else pick("help", rng)], [], False
        # a report that ends "Anything else?" asks nothing of its facts: only its questions
        question = last
        if reports_completion(last):
            question = " ".join(s for s in split_sentences(last, ends=".!?") if "?" in s)
        asked = mentioned_slots(question, list(self.slots)) if "?" in question else []
        revision = self.revision
        if (
            revision
            and self.turn >= 1
            and (
                self.turn >= revision.after_user_turn
                or asks_confirmation(last)
                or set(asked) & set(revision.revised_slots)
            )
        ):
            self.revision = None
            self.slots.update(revision.revised_slots)
            self._record("goal_revision", f"revised {sorted(revision.revised_slots)}")
            change = pick("change_of_plan", rng)
            if revision.revised_objective:
                change = f"{change} {revision.revised_objective}"
            rest = [n for n in asked if n not in revision.revised_slots]
            return [change], self._facts([*revision.revised_slots, *rest], rng), False
        if asks_confirmation(last):
            heard = normalise(last, numbers="canonical")
            echoes = [
                n for n, v in self.slots.items()
                if not isinstance(v, (bool, list, dict)) and value_in(v, heard)
            ]  # fmt: skip
            if echoes and prose and rng.random() < SETTINGS.agree_with_value_share:
                value = self._value(rng.choice(echoes), rng)
                text = rng.choice(PHRASES["agree_value"]).format(value=value)
                if is_affirmative(text):  # "Yes, no longer needed is right." is not a yes
                    return [text], [], False
            return [pick("agree", rng)], [], False
        if asked:
            for name in asked:
                if name in self.withheld and name not in self.given:
                    self._record("partial_information", f"revealed {name} when asked")
            facts = self._facts(asked, rng)
            value = self.slots[asked[0]]
            if (
                len(asked) == 1
                and prose
                and not isinstance(value, (bool, dict))
                and rng.random() < SETTINGS.lone_answer_share
            ):  # one value on its own, as people answer ("It's 503-555-0142.")
                return [answer_sentence(facts[0].value, rng, facts[0].forms)], [], False
            return [pick("give", rng)], facts, False
        if declines_with_alternatives(last):
            return [pick("thanks_declined", rng)], [], True
        outcome = self._outcome(view)
        missing = outcome[1] if outcome is not None else None
        if reports_completion(last) or (missing == [] and bool(outcome[0])):
            if missing:  # told it is done, not what was asked for
                return [pick("still_need", rng).format(what=missing[0])], [], False
            if missing is None:  # the goal was blocked: only a decline answers it
                return [pick("unclear_outcome", rng)], [], False
            # "... Anything else?" is answered with a no
            closing = "no_more" if last.rstrip().endswith("?") else "thanks_done"
            return [pick(closing, rng)], [], True
        pending = [n for n in self.slots if n not in self.given and n not in self.withheld]
        if "?" in last and pending:
            return [pick("another", rng)], self._facts(pending[:1], rng), False
        if missing:
            return [pick("still_need", rng).format(what=missing[0])], [], False
        return [pick("what_else", rng)], [], False

    def _outcome(self, view: list[Message]) -> tuple[list[Any], list[str]] | None:
        """The outcome facts, and the labels of those the assistant has not told yet (what it
        asked for); None when the goal is blocked."""
        from simulation.validator.outcome_facts import outcome_facts, untold

        if self.scenario.impossible or self.expected.blocked:
            return None
        said = " ".join(m.content for m in view if m.role == "assistant")
        users = normalise(
            " ".join(m.content for m in view if m.role == "user"), numbers="canonical"
        )
        facts = outcome_facts(self.scenario, self.expected, users)
        return facts, [fact.label for fact in untold(facts, said)]
