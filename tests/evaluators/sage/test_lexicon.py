"""The value lexicon learned from SGD train, and how the extractor reads it in lower case."""

from __future__ import annotations

import json

import pytest

from evaluators.sage import WorkflowSpec
from evaluators.sage.extract import extract_user_values
from evaluators.sage.lexicon import LEXICON_FILE, Lexicon, build_lexicon, bundled_lexicon
from mads_bench.cli import main
from tests.evaluators.sage.test_cli import SGD_TRAIN

SCHEMA = [
    {
        "service_name": "Buses_9",
        "description": "Bus tickets",
        "slots": [
            {"name": "from_city", "description": "Leaving from", "is_categorical": False},
            {"name": "leaving_date", "description": "Day of travel", "is_categorical": False},
            {
                "name": "fare_type",
                "description": "Fare",
                "is_categorical": True,
                "possible_values": ["economy", "flexible"],
            },
            {"name": "notes", "description": "Anything else", "is_categorical": False},
        ],
        "intents": [],
    }
]


def _user(dialogue_id: str, *turns: tuple[str, list[tuple[str, str]]]) -> dict:
    """An SGD dialogue of user turns; each marks the (slot, said value) spans it supplies."""
    out = []
    for text, spans in turns:
        slots = []
        for slot, value in spans:
            start = text.index(value)
            slots.append({"slot": slot, "start": start, "exclusive_end": start + len(value)})
        actions = [{"act": "INFORM", "slot": s, "values": [v]} for s, v in spans]
        out.append(
            {
                "speaker": "USER",
                "utterance": text,
                "frames": [{"service": "Buses_9", "slots": slots, "actions": actions}],
            }
        )
    return {"dialogue_id": dialogue_id, "turns": out}


@pytest.fixture
def bus_spec():
    return WorkflowSpec.from_sgd_schema(SCHEMA)


def test_build_keeps_values_that_are_values_wherever_said(bus_spec):
    dialogues = [
        _user(
            "1",
            ("leaving from sacramento", [("from_city", "sacramento")]),
            ("the day after tomorrow", [("leaving_date", "day after tomorrow")]),
            ("economy please", [("fare_type", "economy")]),
        ),
        _user(
            "2",
            (
                "from sacramento on friday",
                [("from_city", "sacramento"), ("leaving_date", "friday")],
            ),
            ("economy", [("fare_type", "economy")]),
            ("i need food on board", [("notes", "food")]),
        ),
        _user("3", ("is there food?", []), ("what food do they serve", []), ("food", [])),
        _user("4", ("from fresno", [("from_city", "fresno")]), ("after that", [])),
        _user("5", ("i need food", [("notes", "food")]), ("tickets for 2", [("notes", "2")])),
    ]
    lexicon = build_lexicon(dialogues, bus_spec)
    # "sacramento": two dialogues, a value every time it is said; "fresno": one dialogue only;
    # dates and numbers are read by pattern; "economy" is a categorical value; "food" is a
    # value in 2 of its 5 turns (precision 0.4 < 0.6)
    assert lexicon.values == {"sacramento": ("from_city",)}
    assert set(build_lexicon(dialogues, bus_spec, min_precision=0.4).values) == {
        "sacramento",
        "food",
    }
    assert set(build_lexicon(dialogues, bus_spec, min_dialogues=1).values) == {
        "sacramento",
        "fresno",
    }


def test_find_slots_and_file_round_trip(tmp_path):
    lexicon = Lexicon(
        {"new york": ("city",), "york": ("city",), "drama": ("genre",), "london uk": ("city",)}
    )
    assert lexicon.find("from new york to london uk") == ["new york", "london uk"]
    assert lexicon.find("a melodrama in yorkshire") == []  # whole words only
    # a learned slot carries over to the slots of the same kind of another service
    slots = ["city_of_event", "event_name", "date"]
    assert lexicon.slots_for("new york", slots) == ("city_of_event",)
    assert lexicon.slots_for("drama", slots) == ()
    assert lexicon.slots_for("unknown", slots) == ()
    path = tmp_path / "lexicon.json"
    lexicon.save(path)
    assert Lexicon.load(path) == lexicon
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="lexicon.json: not a value lexicon"):
        Lexicon.load(path)


def test_extractor_reads_known_values_in_lower_case(bus_spec):
    service = bus_spec.service("Buses_9")
    lexicon = Lexicon({"sacramento": ("origin_city",), "drama": ("genre",)})
    values = extract_user_values("it is sacramento", service, lexicon=lexicon)
    assert [(v.span, v.kind, v.slots) for v in values] == [("sacramento", "known", ("from_city",))]
    # a value of a kind the service has no slot for, and a question about a value, read nothing
    assert extract_user_values("a drama film", service, lexicon=lexicon) == []
    assert extract_user_values("Is it sacramento?", service, lexicon=lexicon) == []
    # the capitalised name keeps its reading; the lexicon adds no second one
    spans = [v.span for v in extract_user_values("From Sacramento.", service, lexicon=lexicon)]
    assert spans == ["Sacramento"]


def test_bundled_lexicon_is_learned_from_sgd_train():
    lexicon = bundled_lexicon()
    assert {"sacramento", "las vegas", "drama"} <= set(lexicon.values)
    # slot words that are rarely a value stayed out
    assert not {"food", "appointment", "house", "little"} & set(lexicon.values)


def test_build_lexicon_command_rebuilds_the_shipped_file(tmp_path, capsys):
    if not (SGD_TRAIN / "schema.json").is_file():
        pytest.skip(f"SGD train not found at {SGD_TRAIN}")
    out = tmp_path / "lexicon.json"
    assert main(["sage", "build-lexicon", "--sgd-train", str(SGD_TRAIN), "--out", str(out)]) == 0
    assert out.read_bytes() == LEXICON_FILE.read_bytes()
    assert "1134 values" in capsys.readouterr().out
    # a folder without SGD data is one clear line
    code = main(["sage", "build-lexicon", "--sgd-train", str(tmp_path), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "schema.json" in err and "Traceback" not in err
    json.loads(out.read_text())  # the earlier output is untouched
