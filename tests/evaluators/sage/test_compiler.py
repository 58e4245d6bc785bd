"""The compiler's evaluation plan for turns with and without dialogue acts."""

from __future__ import annotations

import pytest

from evaluators.sage import DialogueAct, HistoryItem, WorkflowSpec, compile_turn
from evaluators.sage.extract import extract_user_values
from tests.evaluators.sage.conftest import turn


def ids(criteria):
    return [c.criterion_id for c in criteria]


def test_plan_with_acts(spec):
    criteria = compile_turn(spec, turn())
    # UV per written value (city, time), IUV per user INFORM, no request, one PC
    assert ids(criteria) == ["UV:city", "UV:time", "IUV:city", "IUV:time", "PC"]
    uv = criteria[0]
    # the evidence is the minimal span: the slot's diff
    assert uv.evidence == {"state_diff": {"city": [None, "San Jose"]}}
    pc = criteria[-1].args
    # PC sees the confirm act and that O(s_t) holds
    assert pc["confirms"] is True and pc["outcome"] is True and pc["missing"] == []


def test_request_acts_and_legal_set(spec):
    record = turn(
        agent="What time?",
        agent_acts=[DialogueAct(act="REQUEST", slot="time")],
        state_after={"restaurant_name": "Sino", "city": "San Jose"},
    )
    wnf = [c for c in compile_turn(spec, record) if c.failure_class == "WNF"]
    # one WNF criterion per requested slot, with the legal next fields of s_t
    assert ids(wnf) == ["WNF:time"]
    assert wnf[0].args["next"] == ["time"]
    assert wnf[0].args["filled"] == ["city", "restaurant_name"]


def test_plan_text_only(spec):
    record = turn(
        user="In San Jose, at 7 pm. We are 4 people.", agent="What price range do you have in mind?"
    ).without_acts()
    criteria = compile_turn(spec, record)
    iuv = [c for c in criteria if c.failure_class == "IUV"]
    # extraction: the time (0.8), the count (0.7) and the capitalised city (0.6)
    assert sorted(c.args["value"] for c in iuv) == ["4", "7 pm", "San Jose"]
    wnf = [c for c in criteria if c.failure_class == "WNF"]
    # the question becomes a WNF criterion whose slot S2 must find
    assert [c.args["sentence"] for c in wnf] == ["What price range do you have in mind?"]
    assert wnf[0].args["slot"] is None
    # without acts PC does not know whether the agent confirms
    assert criteria[-1].args["confirms"] is None


def test_extraction_floor(spec):
    record = turn(user="Maybe Sino.", agent="Ok.").without_acts()
    # the single capitalised name has confidence 0.6: kept at floor 0.5, dropped at 0.7
    assert len([c for c in compile_turn(spec, record) if c.failure_class == "IUV"]) == 1
    floor_high = compile_turn(spec, record, extraction_floor=0.7)
    assert [c for c in floor_high if c.failure_class == "IUV"] == []


def test_extraction_reads_spoken_times_and_numeric_slots(spec):
    service = spec.service("Restaurants_9")
    found = {v.span: v for v in extract_user_values("At 2 in the afternoon, 3 seats.", service)}
    # an hour with a part of the day is a time, without am/pm
    assert found["2 in the afternoon"].kind == "time"
    (eleven,) = extract_user_values("Near eleven in the morning.", service)
    assert eleven.span == "eleven in the morning" and eleven.slots == ("time",)
    assert "party_size" in found["3"].slots
    # a slot whose values are all numbers takes counts, whatever its name
    buses = WorkflowSpec.from_sgd_schema(
        [
            {
                "service_name": "Buses_9",
                "slots": [
                    {
                        "name": "travelers",
                        "description": "Number of travelers",
                        "is_categorical": True,
                        "possible_values": ["1", "2", "3"],
                    }
                ],
                "intents": [],
            }
        ]
    ).service("Buses_9")
    (count,) = extract_user_values("I just need 1 ticket.", buses)
    assert count.span == "1" and count.slots == ("travelers",)


@pytest.mark.parametrize(
    ("text", "reads"),
    [
        ("Happy with any model, from Las Vegas.", True),
        ("I don't care which airline.", True),
        ("Any of my accounts works.", True),
        ("Are there any other options?", False),  # a question asks, it does not choose
        ("I don't want any subtitles.", False),  # refusing is not "any will do"
        ("Anything else I should know. By any chance is it cheap.", False),
    ],
)
def test_extraction_reads_any_will_do(spec, text, reads):
    values = extract_user_values(text, spec.service("Restaurants_9"))
    assert any(v.kind == "dontcare" and v.span == "dontcare" for v in values) is reads


def test_count_noun_picks_the_slot():
    def slot(name):
        return {
            "name": name,
            "description": name,
            "is_categorical": True,
            "possible_values": ["1", "2", "3"],
        }

    hotels = WorkflowSpec.from_sgd_schema(
        [
            {
                "service_name": "Hotels_9",
                "slots": [slot("star_rating"), slot("number_of_rooms"), slot("number_of_beds")],
                "intents": [],
            }
        ]
    ).service("Hotels_9")
    values = extract_user_values("A 1 star hotel for 1 room, at eleven in the morning.", hotels)
    # two "1"s, each for the slot its noun names: neither hides the other
    assert sorted((v.span, v.slots) for v in values if v.kind == "count") == [
        ("1", ("number_of_rooms",)),
        ("1", ("star_rating",)),
    ]
    assert "eleven in the morning" not in {v.span for v in values}  # no time slot here
    # a count whose noun names no slot may fill any count slot
    (people,) = extract_user_values("We are 2 people.", hotels)
    assert people.slots == ("star_rating", "number_of_rooms", "number_of_beds")


def test_bare_number_answering_how_many(spec):
    service = spec.service("Restaurants_9")
    # after "How many …?" a bare number is a count; otherwise it is no value
    (count,) = extract_user_values("I want four.", service, asked="How many people?")
    assert count.span == "four" and count.slots == ("party_size",)
    assert extract_user_values("I want four.", service) == []
    record = turn(
        user="Just three will do.",
        history=[HistoryItem(speaker="agent", text="How many people will be there?")],
        state_after={"restaurant_name": "Sino"},
    ).without_acts()
    assert [c.args["value"] for c in compile_turn(spec, record) if c.failure_class == "IUV"] == [
        "three"
    ]


def test_what_about_offers_a_value(spec):
    service = spec.service("Restaurants_9")
    # "What about …?" / "How about …?" offer a value; other questions ask about one
    assert [v.span for v in extract_user_values("What about in Union City?", service)] == [
        "Union City"
    ]
    assert [v.span for v in extract_user_values("How about Sino instead?", service)] == ["Sino"]
    assert extract_user_values("What is the phone number of Sino?", service) == []
