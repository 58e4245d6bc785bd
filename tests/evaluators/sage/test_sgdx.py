"""Tests of the SGD-X robustness run: positional name mapping, record rewriting, agreement.

The variant fixture paraphrases the conftest restaurant schema the way SGD-X does (service
``X`` → ``X1``, every slot and intent renamed, order kept).
"""

from __future__ import annotations

import copy
import json

import pytest

from evaluators.sage import DialogueAct, OfflineGroundingVerifier, TurnLabel, Verdict
from evaluators.sage.sgdx import (
    build_name_map,
    load_variant_schemas,
    rename_record,
    run_sgdx,
    stable_share,
    unchanged_share,
)
from tests.evaluators.sage.conftest import SCHEMA, HashEncoder, turn

NEW_SLOTS = ["venue_name", "town", "booking_time", "group_size", "cost_level", "contact_number"]


def _variant() -> list[dict]:
    variant = copy.deepcopy(SCHEMA)
    service = variant[0]
    service["service_name"] = "Restaurants_91"
    old = [s["name"] for s in service["slots"]]
    rename = dict(zip(old, NEW_SLOTS, strict=True))
    for slot in service["slots"]:
        slot["name"] = rename[slot["name"]]
        slot["description"] = "paraphrased " + slot["description"].lower()
    for intent, name in zip(service["intents"], ["SearchEateries", "BookTable"], strict=True):
        intent["name"] = name
        intent["required_slots"] = [rename[s] for s in intent["required_slots"]]
        intent["optional_slots"] = {rename[k]: v for k, v in intent["optional_slots"].items()}
    return variant


def _verdict(turn_id: str, verdict: str) -> Verdict:
    return Verdict(dialogue_id="d", turn_id=turn_id, verdict=verdict, margin=1.0)


def test_name_map_is_positional():
    names = build_name_map(SCHEMA, _variant(), "v9")
    # service, intents and slots map by position
    assert names.services == {"Restaurants_9": "Restaurants_91"}
    assert names.intents[("Restaurants_9", "ReserveRestaurant")] == "BookTable"
    assert names.slots[("Restaurants_9", "time")] == "booking_time"
    assert names.slots[("Restaurants_9", "party_size")] == "group_size"


def test_name_map_rejects_a_misaligned_variant():
    variant = _variant()
    # swapping slots 1 and 2 maps city → booking_time: FindRestaurants (needs city) breaks
    slots = variant[0]["slots"]
    slots[1], slots[2] = slots[2], slots[1]
    with pytest.raises(ValueError, match="v9: service .Restaurants_91.*SearchEateries"):
        build_name_map(SCHEMA, variant, "v9")


def test_rename_record_rewrites_names_not_texts():
    names = build_name_map(SCHEMA, _variant(), "v9")
    record = turn(
        agent_acts=[
            DialogueAct(act="CONFIRM", slot="city", values=["San Jose"]),
            DialogueAct(act="OFFER_INTENT", slot="intent", values=["ReserveRestaurant"]),
            DialogueAct(act="INFORM_COUNT", slot="count", values=["3"]),
        ]
    )
    out = rename_record(record, names)
    # service/intent/state keys renamed, values and texts untouched
    assert (out.service, out.intent) == ("Restaurants_91", "BookTable")
    assert out.state_before == {"venue_name": "Sino"}
    assert out.state_after == {"venue_name": "Sino", "town": "San Jose", "booking_time": "7 pm"}
    assert out.user == record.user and out.agent == record.agent
    # act slots renamed; intent names in OFFER_INTENT renamed; `count` (not in schema) kept
    assert [(a.slot, a.values) for a in out.agent_acts] == [
        ("town", ["San Jose"]),
        ("intent", ["BookTable"]),
        ("count", ["3"]),
    ]
    # text-only records stay text-only
    assert rename_record(record.without_acts(), names).user_acts is None


def test_unchanged_share_by_hand():
    base = [_verdict("1", "failure"), _verdict("2", "acceptable"), _verdict("3", "undecided")]
    other = [_verdict("3", "failure"), _verdict("1", "failure"), _verdict("2", "acceptable")]
    # turns 1 and 2 agree, turn 3 went undecided → failure: 2 of 3, whatever the order
    assert unchanged_share(base, other) == pytest.approx(2 / 3)
    # a third set where only turn 2 agrees with both: stable under all = 1 of 3
    third = [_verdict("1", "acceptable"), _verdict("2", "acceptable"), _verdict("3", "undecided")]
    assert stable_share({"v0": base, "v1": other, "v2": third}) == pytest.approx(1 / 3)
    # different turn sets are an error
    with pytest.raises(ValueError, match="different turns"):
        unchanged_share(base, other[:2])


def test_run_sgdx_on_the_fixture():
    records = [turn(), turn(turn_id="3", agent="Done, your table at Sino is booked.")]
    labels = [
        TurnLabel(dialogue_id="d1", turn_id="2", label="acceptable"),
        TurnLabel(dialogue_id="d1", turn_id="3", label="failure", failure_class="PC"),
    ]
    verifier = OfflineGroundingVerifier(encoder=HashEncoder())
    rows, verdicts = run_sgdx(
        records, labels, SCHEMA, {"v9": _variant()}, True, verifier, tagger=None
    )
    # one row per schema, v0 agrees with itself, verdicts keep the original turn keys
    assert [r["variant"] for r in rows] == ["v0", "v9"]
    assert rows[0]["unchanged"] == 1.0
    assert [v.turn_id for v in verdicts["v9"]] == ["2", "3"]


def test_real_sgdx_variants_line_up(sgd_dev):
    # every shipped SGD-X dev variant passes the positional checks against dev/schema.json
    original = json.loads((sgd_dev / "schema.json").read_text())
    variants = load_variant_schemas(sgd_dev.parent / "sgd_x", "dev")
    assert sorted(variants) == ["v1", "v2", "v3", "v4", "v5"]
    for name, schema in variants.items():
        names = build_name_map(original, schema, name)
        assert len(names.services) == len(original)
    # a known pair from v1: Alarm_1.alarm_time → Alarm_11.alert_time
    v1 = build_name_map(original, variants["v1"], "v1")
    assert v1.slots[("Alarm_1", "alarm_time")] == "alert_time"


@pytest.mark.slow
def test_cli_sgdx(tmp_path, sgd_dev, capsys):
    from mads_bench.cli import main

    out = tmp_path / "sgdx.json"
    code = main(["sage", "sgdx", "--sgd", str(sgd_dev), "--n", "12", "--out", str(out)])
    table = json.loads(out.read_text())
    rows = table["conditions"]["text_only"]["rows"]
    # exit 0, one row per schema (v0..v5), v0 agrees with itself, the table is printed
    assert code == 0
    assert [r["variant"] for r in rows] == ["v0", "v1", "v2", "v3", "v4", "v5"]
    assert rows[0]["unchanged"] == 1.0
    assert "unchanged vs v0" in capsys.readouterr().out
