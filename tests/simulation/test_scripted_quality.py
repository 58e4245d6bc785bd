"""Quality of the scripted conversations: grammatical openings, faithful recovery, acceptance.

The scripted user must withhold values without garbling its objective; the scripted
assistant must not call a successful write "found nothing", and after a refusal it must
offer the workflow's alternative. Seven scenarios the validator used to reject (both seeds)
are checked with the rule checks; the slow test runs the whole validator (MiniLM) on all
hand-written scenarios x seeds 0 and 1 and expects every conversation to be accepted.
"""

from __future__ import annotations

import re

import pytest

from mads_bench.catalog import domain_of, load_all_scenarios
from mads_bench.pre_act import parse_step
from mads_bench.text import normalise
from simulation.agents import ScriptedUser
from simulation.agents.objective import vague_objective
from simulation.agents.text import (
    asks_confirmation,
    declines_with_alternatives,
    render_value,
    reports_completion,
    slot_label,
    value_in,
)
from simulation.environment import simulate
from simulation.validator import NO_EMBEDDINGS, validate_trajectories

SCENARIOS = {s.id: s for s in load_all_scenarios(include_mock=True)}
DOUBLED = re.compile(r"\b(?:the|a|an|my|his|her|your|our|their)\s+(?:the|a|an|my)\b", re.I)
FORMERLY_REJECTED = (
    "online_shopping-sofa-new-address-unhappy",
    "restaurant_booking-thai-lunch-unhappy",
    "home_services-burst-pipe-unhappy",
    "calendar-cancel-dentist-normal",
    "calendar-accept-qbr-unhappy",
    "calendar-room-swap-debrief-unhappy",
    "restaurant_booking-kinbo-waitlist-unhappy",
)


def says(trajectory) -> list[str]:
    steps = [parse_step(m.content) for m in trajectory.messages if m.role == "assistant"]
    return [step.action.text for step in steps if step.action.type == "say"]


def said_literally(value, text: str) -> bool:
    pattern = r"(?<![\w.-])" + re.escape(render_value(value)) + r"(?![\w-]|\.\d)"
    return re.search(pattern, text, re.IGNORECASE) is not None


def test_vague_objective_rules() -> None:
    card = "Pay off the full balance of my Visa credit card from my checking account."
    # a noun phrase before "of" goes with its determiner; a modifier before a noun goes alone
    held = {"payment_amount": "full balance", "pay_from": "checking"}
    assert vague_objective(card, held) == "Pay off my Visa credit card from my account."
    # the object of a preposition goes with the preposition, punctuation kept
    gym = "Cancel my upcoming scheduled payment to Harbor Gym; I have left the gym."
    assert vague_objective(gym, {"payee_name": "Harbor Gym"}) == (
        "Cancel my upcoming scheduled payment; I have left the gym."
    )
    # after a word of the slot's own label: "booking H4DDAM" -> "my booking"
    move = "Move booking H4DDAM (two passengers) to 5 June."
    assert (
        vague_objective(move, {"booking_ref": "H4DDAM"})
        == "Move my booking (two passengers) to 5 June."
    )
    # a bare noun phrase of its own becomes "my <label>", absorbing the determiner
    assert vague_objective("Apply the VIP123 to my order.", {"promo_code": "VIP123"}) == (
        "Apply my promo code to my order."
    )
    # nothing withheld occurs: unchanged
    assert vague_objective("Buy two blue mugs.", {"quantity": 2}) == "Buy two blue mugs."


@pytest.mark.parametrize("seed", [0, 1])
def test_openings_are_grammatical_for_every_scenario(seed: int) -> None:
    # every hand-written scenario (mock too): no doubled determiner, no slot-name artefact,
    # and no withheld value that occurs literally in the objective is said in the opening
    problems = []
    for scenario in SCENARIOS.values():
        user = ScriptedUser(scenario, seed=seed, domain=domain_of(scenario))
        opening = user.respond([]).content
        lowered = opening.casefold()
        held = user.withheld | {
            n
            for b in scenario.behaviors_of("incremental_constraint_revelation")
            for n in b.reveal_order
        }
        if DOUBLED.search(opening):
            problems.append((scenario.id, DOUBLED.search(opening).group()))
        for name in scenario.slots:
            if "_" in name and name in opening:
                problems.append((scenario.id, f"raw slot name {name}"))
        for name in held:
            artefact = f"my {slot_label(name)}".casefold()
            if artefact in lowered and artefact not in scenario.objective.casefold():
                problems.append((scenario.id, artefact))
            value = scenario.slots[name]
            if said_literally(value, scenario.objective) and said_literally(value, opening):
                problems.append((scenario.id, f"withheld {name} said"))
    assert problems == []


def test_successful_write_is_not_reported_as_empty() -> None:
    trajectory = simulate(SCENARIOS["calendar-cancel-dentist-normal"], seed=0)
    # cancel_calendar_event answers {"notified": []}: that is a success, not "found nothing"
    assert not any("found nothing" in text for text in says(trajectory))
    event = next(e for e in trajectory.final_state["events"] if e["event_id"] == "E-0009")
    assert event["status"] == "cancelled" and reports_completion(says(trajectory)[-1])


def test_refusal_is_explained_and_the_alternative_offered() -> None:
    trajectory = simulate(SCENARIOS["restaurant_booking-kinbo-waitlist-unhappy"], seed=0)
    texts = says(trajectory)
    offer = next(t for t in texts if "Saturday waitlist" in t)
    # one say explains the rule and offers the next table (21:00), asking before booking
    assert offer.startswith("I'm sorry, I could not join the waitlist: The Saturday waitlist")
    # (the time said as people say it: "21:00", "9 pm", "9:00 pm")
    said = normalise(offer, numbers="canonical")
    assert re.search(
        r"Instead, I can (?:create|make|arrange) (?:the|your|this) (?:reservation|booking)", offer
    )
    assert value_in("21:00", said)
    assert asks_confirmation(offer)
    booked = [
        r
        for r in trajectory.final_state["reservations"]
        if r["guest_name"] == "Theo Papadopoulos" and r["time"] == "21:00"
    ]
    assert len(booked) == 1 and booked[0]["status"] == "confirmed"
    # the summary repeats the refusal and does not claim the waitlist was joined
    assert "the request to join the waitlist was refused" in texts[-1]
    assert declines_with_alternatives(texts[-1])
    assert reports_completion(texts[-1])
    assert "here is what i did" not in texts[-1].casefold()
    room = simulate(SCENARIOS["calendar-room-swap-debrief-unhappy"], seed=1)
    # Summit refused, the smaller HQ room R-102 (Glacier) from the workflow is offered and
    # booked; the offer names the room as the look-up did
    assert any("Summit is reserved" in t and "Glacier" in t for t in says(room))
    event = next(e for e in room.final_state["events"] if e["event_id"] == "E-0016")
    assert event["room_id"] == "R-102"


@pytest.mark.parametrize("seed", [0, 1])
def test_formerly_rejected_scenarios_pass_the_rule_checks(seed: int) -> None:
    runs = [simulate(SCENARIOS[sid], seed=seed) for sid in FORMERLY_REJECTED]
    out = validate_trajectories(runs, SCENARIOS, embedder=NO_EMBEDDINGS)
    # every check passes (embedding checks cannot fire here; the slow test runs MiniLM)
    failed = {t.scenario_id: t.verdict["checks"] for t in out if not t.verdict["passed"]}
    assert failed == {}


@pytest.mark.slow
def test_all_hand_written_scenarios_accepted_on_two_seeds(minilm_path) -> None:
    from mads_bench.models import load_sentence_encoder
    from simulation.validator import Embedder

    embedder = Embedder(load_sentence_encoder(str(minilm_path)))
    runs = [simulate(s, seed=seed) for seed in (0, 1) for s in load_all_scenarios()]
    out = list(validate_trajectories(runs, SCENARIOS, embedder=embedder))
    rejected = {t.id: t.verdict["checks"] for t in out if not t.verdict["passed"]}
    # 90 scenarios x 2 seeds, all accepted
    assert len(out) == 180 and rejected == {}


def test_think_says_only_what_a_policy_could_know():
    # no gold step index, no appeal to the scenario file, no "workflow" bookkeeping
    import re

    from mads_bench.catalog import load_all_scenarios
    from mads_bench.pre_act import parse_step

    leaks = re.compile(r"step \d+ of \d+|task context|fallback|workflow steps|gold", re.I)
    found = []
    for scenario in load_all_scenarios(include_mock=True):
        for message in simulate(scenario, seed=0).messages:
            if message.role == "assistant":
                think = parse_step(message.content, strict=False).think or ""
                if leaks.search(think):
                    found.append((scenario.id, think))
    assert found == []


def test_repetitions_of_a_scenario_are_worded_differently_but_each_is_seeded():
    import random

    from mads_bench.catalog import load_all_scenarios
    from simulation.agents.phrasing import PHRASES, pick
    from simulation.agents.text import is_affirmative

    identical = 0
    for scenario in load_all_scenarios():
        runs = [simulate(scenario, seed=0, repetition=r) for r in range(3)]
        texts = [tuple(m.content for m in t.messages) for t in runs]
        identical += len(set(texts)) == 1
        # each conversation is still reproducible from its seed, and still succeeds
        assert simulate(scenario, seed=0, repetition=1).messages == runs[1].messages
        assert all(t.end_reason == "done" for t in runs), scenario.id
    assert identical == 0
    # every way of agreeing is read as a yes by the assistant
    assert all(is_affirmative(p) for p in PHRASES["agree"])
    assert all(is_affirmative(p.format(value="May 1st")) for p in PHRASES["agree_value"])
    # with any second sentence too (drawn by pick)
    rng = random.Random(0)
    assert all(is_affirmative(pick("agree", rng)) for _ in range(200))


def test_every_realisation_keeps_the_cue_the_other_side_reads():
    # the scripted user reacts to cues: a report must read as done, a question as asking to
    # confirm, a decline as declining with an alternative; any realisation may be drawn
    from simulation.agents.text import declines_with_alternatives
    from simulation.agents.wording import assistant_wording

    ASSISTANT = {act: phrases.phrases for act, phrases in assistant_wording().acts.items()}

    fill = {"facts": "status booked", "tool": "book table", "change": " or change the time",
            "message": "Tables are full.", "slot": "time", "value": "19:00"}  # fmt: skip
    for act in ("did", "found"):
        assert all(reports_completion(t.format(**fill)) for t in ASSISTANT[act]), act
    fill.update(lead="I can now", action="book table", args="time 19:00")
    for act in ("stale", "empty_offer", "resubmit"):
        assert all(asks_confirmation(t.format(**fill)) for t in ASSISTANT[act]), act
    # a confirmation ends with one of its questions, each a confirmation cue
    assert all("{question}" in t for t in ASSISTANT["confirm"])
    assert all(asks_confirmation(q) for q in ASSISTANT["confirm_question"])
    # an outcome report that opens with an SGD success line still reads as done
    from simulation.agents.phrasebank import load_phrasebank

    assert all(reports_completion(t) for t in load_phrasebank()["success"])
    declines = [*ASSISTANT["refused_decline"], *ASSISTANT["empty_offer"]]
    assert all(declines_with_alternatives(t.format(**fill)) for t in declines)
    fallback = "I can offer the blue mug instead."
    assert all(
        declines_with_alternatives(f"{lead} {fallback}") for lead in ASSISTANT["decline_lead"]
    )


def test_a_forgotten_value_is_held_back_and_dates_are_said_naturally():
    from mads_bench.text import normalise
    from simulation.agents.text import value_in
    from simulation.runner import conversation_seed

    forgotten = natural = 0
    for scenario in load_all_scenarios():
        dates = [v for v in scenario.slots.values() if re.fullmatch(r"\d{4}-\d\d-\d\d", str(v))]
        for repetition in range(3):
            trajectory = simulate(scenario, seed=0, repetition=repetition)
            opening = next(m.content for m in trajectory.messages if m.role == "user")
            said = normalise(opening, numbers="canonical")
            user = ScriptedUser(
                scenario,
                seed=conversation_seed(0, scenario.id, repetition),
                domain=domain_of(scenario),
            )
            for name in user.deferred:
                forgotten += 1
                # not in the opening (the assistant asks when it needs it)
                assert not value_in(scenario.slots[name], said), (trajectory.id, name)
            # a date given in the opening, in words rather than as 2026-05-01
            natural += any(value_in(d, said) and d not in opening for d in dates)
            assert trajectory.end_reason == "done"
    assert forgotten >= 20 and natural >= 20, (forgotten, natural)
