"""W's order for transactional intents (confirm before commit) and the second injector."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from evaluators.sage import DialogueAct, HistoryItem, WorkflowSpec, compile_turn
from evaluators.sage.extract import claims_success
from evaluators.sage.inject import Pools, build_slice
from evaluators.sage.inject_varied import inject_varied
from evaluators.sage.sgd import load_dialogues
from evaluators.sage.symbolic import s1_decide
from tests.evaluators.sage.conftest import turn

FULL = {"restaurant_name": "Sino", "city": "San Jose", "time": "7 pm"}
CLAIM = "Done! Your reservation at Sino for 7 pm is confirmed."


def pc_decision(spec, record):
    (pc,) = [c for c in compile_turn(spec, record) if c.failure_class == "PC"]
    return s1_decide(pc, record)


def test_success_in_the_turn_that_fills_the_last_slot_skips_the_confirmation(spec):
    # O(s) holds after the turn, but the commit is reported in the same turn the user gave the
    # last required slots: no confirmation could have been asked and affirmed
    record = turn(agent=CLAIM, agent_acts=[DialogueAct(act="NOTIFY_SUCCESS")])
    assert pc_decision(spec, record)[0] is True
    assert pc_decision(spec, record.without_acts())[0] is True  # from the text and the state


def test_the_confirm_affirm_commit_order_is_legal(spec):
    record = turn(
        history=[HistoryItem(speaker="agent", text="Please confirm: Sino, San Jose, 7 pm.")],
        user="Yes, that's right.",
        user_acts=[DialogueAct(act="AFFIRM")],
        agent="Your table is booked.",
        agent_acts=[DialogueAct(act="NOTIFY_SUCCESS")],
        state_before=FULL,
        state_after=FULL,
    )
    assert pc_decision(spec, record)[0] is False
    assert pc_decision(spec, record.without_acts())[0] is False
    # with acts, a commit the user never affirmed breaks the order too
    unaffirmed = record.model_copy(update={"user_acts": [DialogueAct(act="REQUEST", slot="x")]})
    assert pc_decision(spec, unaffirmed)[0] is True
    # asking to confirm right after the last slot is the legal next move, not a claim
    assert pc_decision(spec, turn())[0] is False


def test_success_claims_are_statements_not_confirmation_requests():
    assert claims_success("All set! Your table for 2 is booked.")
    assert claims_success("I've gone ahead and booked it.")
    assert not claims_success("Please confirm: your table for 2 is booked at 7 pm?")
    assert not claims_success("Shall I book it for you?")
    assert not claims_success("What time would you like?")


@pytest.fixture(scope="module")
def dev(sgd_dev):
    return WorkflowSpec.from_sgd_schema(sgd_dev / "schema.json"), load_dialogues(sgd_dev)[:300]


def test_varied_injector_fills_every_class_and_is_seeded(dev):
    spec, dialogues = dev
    records, labels, notes = build_slice(dialogues, spec, 80, seed=3, injector=inject_varied)
    again = build_slice(dialogues, spec, 80, seed=3, injector=inject_varied)
    assert [r.model_dump() for r in records] == [r.model_dump() for r in again[0]]
    counts = Counter(lb.failure_class for lb in labels if lb.label == "failure")
    assert set(counts) == {"IUV", "WNF", "PC", "UV"} and sum(counts.values()) == 40
    # the same turns are sampled as with the default injector
    default, _, _ = build_slice(dialogues, spec, 80, seed=3)
    assert [r.turn_id for r in records] == [r.turn_id for r in default]
    by_id = {(r.dialogue_id, r.turn_id): r for r in records}
    for note in notes:
        record = by_id[(note["dialogue_id"], note["turn_id"])]
        if note.get("class") == "PC":  # composed claims, both placements possible
            assert claims_success(record.agent), record.agent
            assert note["placement"] in ("same_turn", "before_last_slot")
        if note.get("class") == "UV":  # the written value is not what anyone said
            context = " ".join([h.text for h in record.history] + [record.user]).lower()
            assert note["value"].lower() not in context


def test_varied_pc_lands_in_the_last_slots_turn(dev):
    spec, dialogues = dev
    from evaluators.sage.sgd import dialogue_turns

    records = [r for d in dialogues for r in dialogue_turns(d)]
    pools, rng = Pools.from_records(records), random.Random(0)
    same = [
        r
        for r in records
        if spec.intent(r.service, r.intent).transactional
        and spec.filled_this_turn(r.service, r.intent, r.state_before, r.state_after)
        and spec.outcome(r.service, r.intent, r.state_after)
    ]
    injected, note = inject_varied(same[0], "PC", spec, pools, rng)
    assert note == {"placement": "same_turn"} and injected.agent_acts[0].act == "NOTIFY_SUCCESS"
    assert pc_decision(spec, injected)[0] is True


def test_support_must_cover_the_value():
    from evaluators.sage.normalize import span_support

    # a fragment of a typed value ("march", "pm") is not the value
    assert span_support("March 10th", "I want to know the weather for march 2nd.")[0] < 0.5
    assert span_support("7:30 pm", "Make it 6 pm please.")[0] < 0.5
    # the whole value, also before a full stop, is
    assert span_support("March 3rd", "What about Larkspur on March 3rd.")[0] == 1.0


def test_a_flag_takes_the_polarity_it_was_said_with(spec):
    from evaluators.sage.grounding_scores import _flag_said, _statements

    record = turn(user="Is smoking allowed there? I need a place without smoking.")
    sentences = _statements(record)
    # the user's own question does not set the flag; the statement sets it to False
    assert "Is smoking allowed there?" not in sentences
    assert _flag_said(["smoking"], sentences) is False
    assert _flag_said(["smoking"], _statements(turn(user="Smoking is fine with me."))) is True
    assert _flag_said(["smoking"], _statements(turn(user="Is smoking allowed?"))) is None


def test_requests_without_a_question_word_are_requests():
    from evaluators.sage.extract import request_sentences

    assert request_sentences("I'll also need the song name.")
    assert request_sentences("And the number of riders to call the taxi for?")
    assert not request_sentences("And the flight leaves at 5 pm.")
    assert not request_sentences("I need a moment to check.")
