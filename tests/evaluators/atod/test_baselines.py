"""Prompt-only and RAG baselines with `fake:` judges returning fixed goal tables."""

from __future__ import annotations

import json

from evaluators.atod.baselines import parse_table, track_with_judge
from evaluators.atod.report import score_dialogues
from mads_bench.atod_data import load_dialogues, write_dialogues
from simulation.backends import FakeBackend
from tests.evaluators.atod.toy import toy_dialogue

HOTEL = {"id": "goal_1", "domain": "Hotels", "intent": "ReserveHotel"}
HOTEL["description"] = "book a hotel in Paris"
WEATHER = {"id": "goal_2", "domain": "Weather", "intent": "GetWeather"}
WEATHER["description"] = "check the weather"


def table(*goals: tuple[dict, str]) -> str:
    return json.dumps({"goals": [{**g, "status": s} for g, s in goals]})


def by_latest_turn(conversation: list[dict]) -> str:
    """A fixed table per latest utterance; turn 3 gets an unreadable answer."""
    prompt = conversation[-1]["content"]
    if "Latest turn (USER): I need a hotel" in prompt:
        return table((HOTEL, "open"))
    if "Latest turn (SYSTEM): Booking" in prompt:
        return "Here you go: " + table((HOTEL, "pending"))
    if "Latest turn (USER): Also check" in prompt:
        return "sorry, I cannot"
    bogus = {"id": "goal_9", "description": "x", "status": "done"}  # unknown status: dropped
    return json.dumps(
        {"goals": [{**HOTEL, "status": "completed"}, {**WEATHER, "status": "completed"}, bogus]}
    )


def test_parse_table_drops_bad_rows():
    # a row without a string id or with an unknown status is dropped; no "goals" -> None
    rows = parse_table('{"goals": [{"id": "g", "status": "Pending"}, {"id": 1}, "x"]}')
    assert [(r["id"], r["status"], r["description"]) for r in rows] == [("g", "pending", "g")]
    assert parse_table('{"table": []}') is None and parse_table("no") is None


def test_prompt_only_predictions(tmp_path, keyword_embedder):
    gold = [toy_dialogue()]
    judge = FakeBackend(replies=by_latest_turn)
    pred = track_with_judge(gold, judge, method="prompt-only")[0]
    hotel, weather = pred.goal_list
    # hotel: open@1, pending@2, (turn 3 unreadable: kept), completed@4
    assert [(e.turn, e.status) for e in hotel.status_history] == [
        (0, "not_mentioned"),
        (1, "open"),
        (2, "pending"),
        (4, "completed"),
    ]
    assert hotel.completion_turn == 4 and weather.first_mentioned_turn == 4
    assert pred.metadata["unparsed_turns"] == 1 and len(pred.turns) == 4
    # the turn-3 prompt carries the full history and the previous table
    third = judge.calls[2][-1]["content"]
    assert "USER: I need a hotel in Paris." in third and '"status": "pending"' in third
    # readable by the ATOD loader; scored against gold: both goals found, statuses right
    write_dialogues([pred], tmp_path / "p.jsonl")
    again = load_dialogues(tmp_path / "p.jsonl")
    report = score_dialogues(again, gold, mode="strict", embedder=keyword_embedder)
    assert report["goal_detection_f1"] == 1.0 and report["conditional_status_accuracy"] == 1.0


def test_rag_retrieves_top_k_and_batches(keyword_embedder):
    short = toy_dialogue("short")
    short = short.model_copy(update={"turns": short.turns[:2]})
    judge = FakeBackend(replies=by_latest_turn)
    preds = track_with_judge(
        [toy_dialogue(), short], judge, method="rag", top_k=1, embedder=keyword_embedder
    )
    # lock-step turns: 2 dialogues at turns 1-2, then only the long one
    assert [s["batch"] for s in judge.settings] == [2, 2, 1, 1]
    prompts = [c[-1]["content"] for c in judge.calls]
    # turn 1 has nothing to retrieve; turn 4 ("hotel") retrieves only turn 1 (top-1, ties
    # broken by time), not the weather turn
    assert "Retrieved earlier turns: (none)" in prompts[0]
    assert "turn 1 USER: I need a hotel in Paris." in prompts[5]
    assert "turn 3" not in prompts[5] and "turn 2" not in prompts[5]
    # the short dialogue ends with the pending hotel
    assert [(g.id, g.status) for g in preds[1].goal_list] == [("goal_1", "pending")]
