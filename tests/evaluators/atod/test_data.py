"""Loader of the published ATOD format: typed records, JSON/JSONL, errors naming the field."""

from __future__ import annotations

import json

import pytest

from mads_bench.atod_data import load_dialogues, strip_gold, write_dialogues
from mads_bench.loading import CatalogError


def _tiny(**goal_overrides) -> dict:
    goal = {
        "id": "goal_1",
        "domain": "Hotels",
        "intent": "ReserveHotel",
        "content": "book a hotel",
        "core_content": "book hotel",
        "status": "completed",
        "dependencies": [],
        "status_history": [{"turn": 1, "status": "open"}, {"turn": 2, "status": "completed"}],
    }
    goal.update(goal_overrides)
    return {
        "dialogue_id": "d1",
        "complexity_class": "medium",
        "dialogue_index": 0,
        "metadata": {"num_goals": 1},
        "goal_list": [goal],
        "turns": [{"turn_id": 1, "speaker": "USER", "utterance": "Book a hotel please."}],
    }


def test_sample_loads_as_published(sample_path):
    dialogues = load_dialogues(sample_path)
    # three dialogues, in file order, with 2 / 5 / 5 goals and 12 / 20 / 22 turns
    assert [len(d.goal_list) for d in dialogues] == [2, 5, 5]
    assert [d.num_turns for d in dialogues] == [12, 20, 22]
    # typed goal fields, statuses lowercase
    goal = dialogues[1].goal_list[3]
    assert (goal.intent, goal.status, goal.completion_turn) == (
        "BuyEventTickets",
        "abandoned",
        None,
    )
    assert goal.status_history[-1].turn == 11


def test_jsonl_round_trip(sample_path, tmp_path):
    dialogues = load_dialogues(sample_path)
    out = tmp_path / "copy.jsonl"
    write_dialogues(dialogues, out)
    # one line per dialogue, and the same records come back
    assert len(out.read_text().splitlines()) == 3
    assert load_dialogues(out) == dialogues


def test_uppercase_status_is_normalised(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps([_tiny(status="COMPLETED")]))
    # LLM trackers often write statuses in capitals; they are read as the lowercase label
    assert load_dialogues(path)[0].goal_list[0].status == "completed"


@pytest.mark.parametrize(
    ("data", "where"),
    [
        # a status outside the six labels names dialogue, goal and field
        ([_tiny(status="done")], "[0](d1).goal_list[0].status"),
        # a missing required field
        ([{k: v for k, v in _tiny().items() if k != "turns"}], "[0](d1).turns"),
        # a dependency on a goal id that does not exist
        ([_tiny(dependencies=["goal_9"])], "[0](d1).goal_list[0].dependencies"),
    ],
)
def test_malformed_dialogue_names_file_dialogue_and_field(tmp_path, data, where):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CatalogError) as err:
        load_dialogues(path)
    assert str(err.value).startswith(f"{path}: {where}")


def test_bad_jsonl_line_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_tiny()) + "\n{not json\n")
    with pytest.raises(CatalogError) as err:
        load_dialogues(path)
    # the second line is the broken one
    assert "line 2" in str(err.value)


def test_strip_gold_keeps_only_speaker_and_utterance(sample_path):
    turns = strip_gold(load_dialogues(sample_path)[0])
    # 12 (speaker, utterance) pairs and nothing else
    assert len(turns) == 12 and all(len(t) == 2 for t in turns)
    assert turns[0][0] == "USER" and turns[0][1].startswith("Hi, I need to book a hotel")


def test_turns_only_input_takes_chat_role_names(tmp_path):
    """`atod track` input without gold: speakers in any case, and chat role names
    (assistant, agent) read as SYSTEM; anything else is a clear error."""
    from mads_bench.atod_data import TrackerInput

    path = tmp_path / "in.jsonl"
    turns = [
        {"speaker": "user", "utterance": "Book me a table."},
        {"speaker": "Assistant", "utterance": "Done."},
        {"speaker": " agent ", "utterance": "Anything else?"},
    ]
    path.write_text(json.dumps({"dialogue_id": "x", "turns": turns}) + "\n")
    (dialogue,) = load_dialogues(path, model=TrackerInput)
    assert [t.speaker for t in dialogue.turns] == ["USER", "SYSTEM", "SYSTEM"]
    turns[1]["speaker"] = "narrator"
    path.write_text(json.dumps({"dialogue_id": "x", "turns": turns}) + "\n")
    with pytest.raises(CatalogError, match=r"turns\[1\]\.speaker"):
        load_dialogues(path, model=TrackerInput)
