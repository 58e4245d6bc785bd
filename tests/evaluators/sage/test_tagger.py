"""The text-only act tagger: features, training, weights on disk, and how the compiler uses it."""

from __future__ import annotations

import numpy as np
import pytest

from evaluators.sage import DialogueAct, HistoryItem, OfflineGroundingVerifier, WorkflowSpec
from evaluators.sage.cascade import SageConfig, SageEvaluator
from evaluators.sage.compiler import compile_turn
from evaluators.sage.grounding import DEFAULT_ENCODER, GATES
from evaluators.sage.symbolic import s1_decide
from evaluators.sage.tagger import (
    ActTagger,
    TurnTags,
    act_labels,
    bundled_weights,
    featurize,
    train_tagger,
)
from tests.evaluators.sage.conftest import SCHEMA, HashEncoder, turn

CITIES = ["Oakland", "Fresno", "Berkeley", "Dublin", "Napa", "Concord", "Salinas", "Vallejo"]
TIMES = ["7 pm", "6:30 pm", "noon", "8 am", "5:15 pm", "9 pm"]


def synthetic_turns(n: int, seed: int) -> list:
    """Turns that inform the city or the time, with requests and confirmations by the agent."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        kind = i % 3
        city, time = CITIES[rng.integers(len(CITIES))], TIMES[rng.integers(len(TIMES))]
        if kind == 0:
            user, acts = f"somewhere in {city} please", [("INFORM", "city")]
            agent, agent_acts = "What time would you like?", [("REQUEST", "time")]
        elif kind == 1:
            user, acts = f"make it at {time}", [("INFORM", "time")]
            agent, agent_acts = "Which city should I search in?", [("REQUEST", "city")]
        else:
            user, acts = "yes that works for me", [("AFFIRM", "")]
            agent, agent_acts = "Your table is booked, enjoy!", [("NOTIFY_SUCCESS", "")]
        out.append(
            turn(
                turn_id=str(i),
                user=user,
                agent=agent,
                user_acts=[DialogueAct(act=a, slot=s) for a, s in acts],
                agent_acts=[DialogueAct(act=a, slot=s) for a, s in agent_acts],
            )
        )
    return out


@pytest.fixture(scope="module")
def hash_encode():
    return OfflineGroundingVerifier(encoder=HashEncoder()).encode


def test_features_and_labels_line_up(spec, hash_encode):
    records = synthetic_turns(6, seed=0)
    features = featurize(records, spec, hash_encode)
    slots = list(spec.service("Restaurants_9").slots)
    assert features.index == [(t, s) for t in range(6) for s in slots]
    assert features.inform.shape == (6 * len(slots), 2 * 256 + 9)
    assert features.request.shape == (6 * len(slots), 256 + 3)
    assert features.agent.shape == (6, 257)
    labels = act_labels(records, features)
    informed = [features.index[i] for i in np.flatnonzero(labels["inform"])]
    assert informed == [(0, "city"), (1, "time"), (3, "city"), (4, "time")]
    assert labels["agent"][:3].tolist() == [[0, 0], [0, 0], [0, 1]]


def test_training_learns_held_out_turns(spec, hash_encode, tmp_path):
    tagger = train_tagger(
        synthetic_turns(120, 0), spec, hash_encode, encoder="hash", hidden=32, epochs=100
    )
    held_out = synthetic_turns(30, 1)
    tags = tagger.tag([r.without_acts() for r in held_out], spec, hash_encode)
    for record, tag in zip(held_out, tags, strict=True):
        informed = {a.slot for a in record.user_acts if a.act == "INFORM"}
        assert {s for s, p in tag.inform.items() if p >= 0.5} == informed
        requested = {a.slot for a in record.agent_acts if a.act == "REQUEST"}
        assert {s for s, p in tag.request.items() if p >= 0.5} == requested
        done = any(a.act == "NOTIFY_SUCCESS" for a in record.agent_acts)
        assert (tag.success >= 0.5) == done
    # the weights round-trip through safetensors with their metadata
    path = tmp_path / "t.safetensors"
    tagger.save(path)
    again = ActTagger.load(path)
    assert again.metadata["turns"] == "120"
    assert again.tag(held_out[:3], spec, hash_encode) == tagger.tag(held_out[:3], spec, hash_encode)


def test_load_errors_name_the_file(tmp_path, spec, hash_encode):
    with pytest.raises(FileNotFoundError, match="nope.safetensors"):
        ActTagger.load(tmp_path / "nope.safetensors")
    bad = tmp_path / "bad.safetensors"
    bad.write_text("not weights")
    with pytest.raises(ValueError, match="bad.safetensors"):
        ActTagger.load(bad)
    with pytest.raises(ValueError, match="lack"):
        ActTagger({"inform.w1": np.zeros((2, 2))})
    # weights of another encoder's width: a clear error, not a shape crash
    bundled = ActTagger.load(bundled_weights(DEFAULT_ENCODER))
    with pytest.raises(ValueError, match="expects 777 features"):
        bundled.tag([turn()], spec, hash_encode)


def test_each_calibrated_encoder_has_its_tagger_and_a_mismatch_is_refused(spec):
    """Gates and tagger follow S2's encoder; a tagger trained on other embeddings is an error
    (both encoders are 384-d, so the width check alone would not catch it)."""
    for encoder in GATES:
        tagger = ActTagger.load(bundled_weights(encoder))
        assert tagger.metadata["encoder"] == encoder
        evaluator = SageEvaluator(spec, SageConfig(verifier=OfflineGroundingVerifier(encoder)))
        assert evaluator.tagger.metadata["encoder"] == encoder
        assert evaluator.verifier.gates == GATES[encoder]
    wrong = SageConfig(
        verifier=OfflineGroundingVerifier("minilm"), tagger=str(bundled_weights("minilm-static"))
    )
    with pytest.raises(ValueError, match="trained on 'minilm-static' embeddings"):
        SageEvaluator(spec, wrong)
    # an encoder given as an object has no bundled tagger: the lexical path runs alone
    assert (
        SageEvaluator(spec, SageConfig(verifier=OfflineGroundingVerifier(HashEncoder()))).tagger
        is None
    )
    assert bundled_weights("/some/folder") is None and bundled_weights("nope") is None


def test_compiler_uses_tags_on_turns_without_acts(spec):
    record = turn(
        user="In San Jose, at 7 pm.",
        agent="What is the name of the restaurant?",
        state_before={"restaurant_name": "Sino"},
        state_after={"restaurant_name": "Sino", "city": "San Jose"},  # time is dropped
    ).without_acts()
    tags = TurnTags(
        inform={"city": 0.9, "time": 0.8, "party_size": 0.1},
        request={"restaurant_name": 0.95, "party_size": 0.7, "time": 0.2},
        confirm=0.1,
        success=0.05,
    )
    criteria = {c.criterion_id: c for c in compile_turn(spec, record, tags=tags)}
    # city is written this turn: nothing to check; time is informed and not written
    assert "IUV:tag:city" not in criteria and "IUV:tag:party_size" not in criteria
    iuv = criteria["IUV:tag:time"]
    assert iuv.args["tagged"] == 0.8 and s1_decide(iuv, record)[0] is None
    # a request for a filled slot goes to S2; an optional empty one is no wrong field
    wnf = criteria["WNF:tag:restaurant_name"]
    assert s1_decide(wnf, record)[0] is None
    assert s1_decide(criteria["WNF:tag:party_size"], record)[0] is False
    assert "WNF:tag:time" not in criteria
    assert criteria["PC"].args["tagged"] == 0.1
    # with acts the tags are ignored
    with_acts = {c.criterion_id for c in compile_turn(spec, turn(), tags=tags)}
    assert not any(":tag:" in c for c in with_acts)


def test_tagger_reading_of_a_value_the_state_holds(spec):
    """Every value u_t carries is held by s_t: a tagger reading of another slot is the same
    value read as a sibling slot, so it raises nothing; a flag reading still does."""
    record = turn(
        user="Make it 7 pm.",
        state_before={"restaurant_name": "Sino", "city": "San Jose"},
        state_after={"restaurant_name": "Sino", "city": "San Jose", "time": "7 pm"},
    ).without_acts()
    tags = TurnTags(inform={"time": 0.9, "party_size": 0.8})
    assert "IUV:tag:party_size" not in {
        c.criterion_id for c in compile_turn(spec, record, tags=tags)
    }
    # the same reading stands when u_t has a value s_t does not hold ("at 8 pm" dropped)
    dropped = record.model_copy(update={"user": "Make it 7 pm, or 8 pm."})
    assert "IUV:tag:party_size" in {c.criterion_id for c in compile_turn(spec, dropped, tags=tags)}
    flags = WorkflowSpec.from_sgd_schema(
        [
            {
                "service_name": "Restaurants_9",
                "slots": [
                    *SCHEMA[0]["slots"],
                    {
                        "name": "has_live_music",
                        "description": "Whether there is live music",
                        "is_categorical": True,
                        "possible_values": ["True", "False"],
                    },
                ],
                "intents": [
                    {**SCHEMA[0]["intents"][1], "optional_slots": {"has_live_music": "False"}}
                ],
            }
        ]
    )
    tags = TurnTags(inform={"has_live_music": 0.9})
    criteria = {c.criterion_id for c in compile_turn(flags, record, tags=tags)}
    assert "IUV:tag:has_live_music" in criteria  # the extractor never reads a flag


def test_restated_value_is_not_ignored(spec):
    record = turn(
        user="Still San Jose, yes.",
        state_before={"city": "San Jose"},
        state_after={"city": "San Jose"},
    ).without_acts()
    criteria = compile_turn(spec, record, tags=TurnTags(inform={"city": 0.9}))
    iuv = next(c for c in criteria if c.criterion_id == "IUV:tag:city")
    fires, note = s1_decide(iuv, record)
    assert fires is False and "restates" in note


@pytest.mark.parametrize("encoder", list(GATES))
def test_bundled_tagger_reads_sgd_style_turns(encoder, minilm_static_path):
    """The shipped weights on turns written here, for services SGD train never had."""
    spec = WorkflowSpec.from_sgd_schema(
        [
            {
                "service_name": "Therapists_1",
                "slots": [
                    {"name": "city", "description": "City where the therapist is located"},
                    {"name": "therapist_type", "description": "Kind of therapy offered"},
                    {"name": "appointment_date", "description": "Date of the appointment"},
                ],
                "intents": [
                    {
                        "name": "BookAppointment",
                        "is_transactional": True,
                        "required_slots": ["city", "therapist_type", "appointment_date"],
                    }
                ],
            }
        ]
    )
    base = {
        "dialogue_id": "x",
        "service": "Therapists_1",
        "intent": "BookAppointment",
        "history": [HistoryItem(speaker="agent", text="Hi, how can I help?")],
    }
    records = [
        turn(
            **base,
            turn_id="0",
            user="please find a therapist in oakland for me",
            agent="What type of therapist are you looking for?",
        ),
        turn(
            **base,
            turn_id="1",
            user="a psychologist would be good",
            agent="Your appointment is booked. Take care!",
        ),
    ]
    records = [r.without_acts() for r in records]
    verifier = OfflineGroundingVerifier(encoder)
    tags = ActTagger.load(bundled_weights(encoder)).tag(records, spec, verifier.encode)
    assert max(tags[0].inform, key=tags[0].inform.get) == "city"
    assert max(tags[0].request, key=tags[0].request.get) == "therapist_type"
    assert tags[0].success < 0.5 <= tags[1].success
    assert max(tags[1].inform, key=tags[1].inform.get) == "therapist_type"


def test_question_path_takes_the_taggers_legal_reading(spec):
    record = turn(
        agent="And when should it be?",
        state_before={"restaurant_name": "Sino"},
        state_after={"restaurant_name": "Sino", "city": "San Jose"},
    ).without_acts()
    verifier = OfflineGroundingVerifier(encoder=HashEncoder())

    def question_score(tags):
        criteria = compile_turn(spec, record, tags=tags)
        question = next(c for c in criteria if c.criterion_id == "WNF:q0")
        return verifier.scores([(question, record, spec)])[0]

    # the tagger reads a request for time, a legal next field: the question is no WNF
    score, note = question_score(TurnTags(request={"time": 0.9}))
    assert score == -1.0 and "legal" in note
    # a reading of a filled slot leaves the question to the embedding path
    score, note = question_score(TurnTags(request={"restaurant_name": 0.9}))
    assert score != -1.0
