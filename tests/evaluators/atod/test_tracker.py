"""The memory tracker: dual store, offline pipeline on stripped dialogues, judge hook."""

from __future__ import annotations

import numpy as np
import pytest

from evaluators.atod.cues import classify_status, split_clauses
from evaluators.atod.memory import GoalStore
from evaluators.atod.predictions import prediction_dialogue
from evaluators.atod.tracker import MemoryTracker
from mads_bench.atod_data import load_dialogues, strip_gold


@pytest.fixture(scope="module")
def tracker() -> MemoryTracker:
    return MemoryTracker()


@pytest.fixture(scope="module")
def default_tracker() -> MemoryTracker:
    """What `atod track` runs: static-encoder memory, MiniLM intents."""
    return MemoryTracker.for_encoders()


def test_goal_store_search_threshold():
    store = GoalStore(dim=2)
    store.insert("hotel", "Hotels", "ReserveHotel", "r", np.array([1.0, 0.0]), turn=1)
    store.insert("flight", "Flights", "ReserveOnewayFlight", "r", np.array([0.0, 3.0]), turn=1)
    # cosine 0.8 with the first goal, 0.6 with the second (the vector is normalised first)
    assert store.search(np.array([4.0, 3.0]), k=5, threshold=0.4) == [(0, 0.8), (1, 0.6)]
    # the threshold and k both cut
    assert store.search(np.array([4.0, 3.0]), k=5, threshold=0.7) == [(0, 0.8)]
    assert store.search(np.array([4.0, 3.0]), k=1, threshold=0.0) == [(0, 0.8)]


def test_status_cues():
    # the system reports success / failure; the user abandons or accepts
    assert classify_status("Your reservation is confirmed.", "SYSTEM") == "completed"
    assert classify_status("Unfortunately there are no available rooms.", "SYSTEM") == "failed"
    assert classify_status("Never mind the concert tickets.", "USER") == "abandoned"
    assert classify_status("Please book the 9:30 bus.", "USER") == "completed"
    # no cue -> None (the caller keeps or advances the status)
    assert classify_status("It is sunny in Boston.", "SYSTEM") is None
    assert split_clauses("Hi. Ok") == []


def test_tracker_sees_only_speaker_and_utterance(sample_path, tracker):
    dialogue = load_dialogues(sample_path)[0]
    turns = strip_gold(dialogue)
    # the input is plain (speaker, utterance) tuples: no goal_list, statuses or metadata
    assert all(isinstance(t, tuple) and len(t) == 2 for t in turns)
    state = tracker.track(turns)
    # the two goals of the first sample dialogue, recognised from text alone
    assert {(g.domain, g.intent) for g in state.goals} == {
        ("Hotels", "BookHouse"),
        ("Banks", "CheckBalance"),
    }
    # opened at turn 1 by the user, then worked on, then completed (gold: at turn 9, when the
    # user accepts; the status model already closes it at 7, when the user picks the suite)
    history = state.goals[0].history
    assert history[:3] == [(0, "not_mentioned"), (1, "open"), (2, "pending")]
    assert history[-1][1] == "completed" and 7 <= history[-1][0] <= 9
    # one record per turn, as in the ATOD format
    pred = prediction_dialogue(dialogue, state)
    assert len(pred.turns) == 12 and pred.goal_list[0].status_history[-1].status == "completed"


def test_online_mode_exposes_state_after_each_turn(tracker):
    tracker.reset()
    goals = tracker.step("USER", "I need to book a one-way flight to Denver on May 3rd.")
    # after the first turn: one open flight goal with its date slot cue
    assert [(g.domain, g.status) for g in goals] == [("Flights", "open")]
    assert "May 3rd" in goals[0].slot_values.values()
    goals = tracker.step("SYSTEM", "I've booked your flight; the confirmation number is F-1.")
    assert goals[0].status == "completed" and goals[0].completion_turn == 2


def test_judge_hook_is_used_for_status():
    class FailEverything:
        def __init__(self):
            self.prompts = []

        def complete(self, prompts):
            self.prompts.extend(prompts)
            return ['{"status": "failed"}'] * len(prompts)

    judge = FailEverything()
    tracker = MemoryTracker(judge=judge)
    state = tracker.track(
        [("USER", "I need to book a hotel in Paris."), ("SYSTEM", "Let me check hotels in Paris.")]
    )
    # the system turn's clause went to the judge, whose verdict replaced the offline cue
    assert any("Let me check hotels in Paris." in p for p in judge.prompts)
    assert state.goals[0].status == "failed"


def test_intent_encoder_reads_only_request_clauses(sample_path):
    """With a separate intent encoder, only user request clauses (and the catalogue) reach it,
    in one call per dialogue; the memory encoder embeds every clause."""
    from evaluators.atod.matching import minilm_embedder

    seen: list[list[str]] = []
    minilm = minilm_embedder("minilm")

    def intent(texts):
        seen.append(list(texts))
        return minilm(texts)

    tracker = MemoryTracker(minilm_embedder("minilm-static"), intent_embedder=intent)
    seen.clear()  # the catalogue's exemplars
    dialogue = load_dialogues(sample_path)[0]
    state = tracker.track(strip_gold(dialogue))
    assert len(seen) == 1 and seen[0]
    users = " ".join(t.utterance for t in dialogue.turns if t.speaker == "USER")
    assert all(clause in users for clause in seen[0])
    assert {(g.domain, g.intent) for g in state.goals} == {
        ("Hotels", "BookHouse"),
        ("Banks", "CheckBalance"),
    }


def test_for_encoders_names_the_known_pairs():
    with pytest.raises(ValueError, match="minilm-static\\+minilm"):
        MemoryTracker.for_encoders("bogus", "minilm")


def test_deferral_and_empty_results_cues():
    # deferring a purchase drops the goal; "not finding any" is a failed search
    assert classify_status("No need to buy the jazz tickets yet, I'll think about it.", "USER") == (
        "abandoned"
    )
    assert classify_status("I'm not ready to book the SUV.", "USER") == "abandoned"
    assert classify_status("I'm not finding any exact matches for that.", "SYSTEM") == "failed"


def test_follow_up_joins_the_domain_goal_and_also_opens_a_new_one(default_tracker):
    turns = [
        ("USER", "I need to book a one-way flight from Boston to Denver on May 3rd."),
        ("SYSTEM", "Sure, what time of day would you like to fly?"),
        # names the domain with a request cue, but adds to the flight already asked for
        ("USER", "I'd like a morning flight, preferably with JetBlue."),
        ("SYSTEM", "I found a JetBlue flight at 8:15 AM."),
        # "also" + "another": a second goal of the same intent
        ("USER", "I also need to book another one-way flight from Denver to Austin on May 9th."),
    ]
    state = default_tracker.track(turns)
    flights = [g for g in state.goals if g.domain == "Flights"]
    assert len(flights) == 2
    assert [g.first_turn for g in flights] == [1, 5]


def test_references_and_unnamed_confirmations_stay_with_their_goal(default_tracker):
    turns = [
        ("USER", "I want to find a jazz concert in Chicago on October 12th."),
        ("SYSTEM", "I found the Marcus Johnson Quartet at the Green Mill at 8 PM."),
        ("USER", "Thanks for the information, that's helpful."),
        ("SYSTEM", "You're welcome, anything else?"),
        # an intent of its own, but "those" points back at what the search found
        ("USER", "Actually, can you buy those concert tickets for me?"),
        # a bare confirmation number closes the goal the clause before it talked about
        ("SYSTEM", "I've booked your tickets for the concert. Your confirmation number is JZ-114."),
    ]
    state = default_tracker.track(turns)
    assert len(state.goals) == 1
    assert state.goals[0].status == "completed"
