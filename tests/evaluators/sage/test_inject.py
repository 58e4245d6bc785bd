"""SGD turn records and benchmark slices with injected failures (real SGD dev data)."""

from __future__ import annotations

from collections import Counter

import pytest

from evaluators.sage import WorkflowSpec
from evaluators.sage.calibration import criterion_is_positive, fit_gate
from evaluators.sage.compiler import compile_turn
from evaluators.sage.grounding import Gate
from evaluators.sage.inject import build_slice, partition
from evaluators.sage.normalize import span_support
from evaluators.sage.sgd import dialogue_turns, load_dialogues


@pytest.fixture(scope="module")
def dev(sgd_dev):
    """The dev schema and the first 300 dev dialogues (enough for 40-turn slices, fast)."""
    return WorkflowSpec.from_sgd_schema(sgd_dev / "schema.json"), load_dialogues(sgd_dev)[:300]


def test_sgd_turn_records(dev):
    _, dialogues = dev
    first = list(dialogue_turns(dialogues[0]))
    # dialogue 1_00000: the third user turn confirms; SGD's state adds the date "today"
    record = first[2]
    assert (record.dialogue_id, record.turn_id, record.intent) == (
        "1_00000",
        "4",
        "ReserveRestaurant",
    )
    assert record.state_diff() == {"date": (None, "today")}
    # the earlier surface form is kept when SGD lists several ("11:30 am" is also listed)
    assert record.state_after["time"] == "half past 11 in the morning"
    assert [a.act for a in record.agent_acts] == ["INFORM", "NOTIFY_SUCCESS"]


def test_slice_is_seeded_and_half_injected(dev):
    spec, dialogues = dev
    records, labels, injections = build_slice(dialogues, spec, n=40, seed=3)
    again = build_slice(dialogues, spec, n=40, seed=3)
    # same seed → the same slice, turn for turn
    assert records == again[0] and labels == again[1]
    # 40 turns, 20 injected, 5 of each class, one turn per dialogue, bench partition only
    assert len(records) == 40 and sum(lb.label == "failure" for lb in labels) == 20
    assert Counter(lb.failure_class for lb in labels if lb.failure_class) == {
        "IUV": 5,
        "WNF": 5,
        "PC": 5,
        "UV": 5,
    }
    assert len({r.dialogue_id for r in records}) == 40
    assert {partition(r.dialogue_id) for r in records} == {"bench"}
    # a different seed gives a different slice
    assert build_slice(dialogues, spec, n=40, seed=4)[0] != records


def test_operators_mutate_state_and_response(dev):
    spec, dialogues = dev
    records, labels, injections = build_slice(dialogues, spec, n=40, seed=3)
    for record, label, note in zip(records, labels, injections, strict=True):
        if label.failure_class == "IUV":
            # the user INFORMed the value, but s_t no longer holds it
            assert record.state_after.get(note["slot"]) != note["value"]
        elif label.failure_class == "WNF":
            # the agent now requests a slot outside Next(W, s_t)
            nexts = spec.next_fields(record.service, record.intent, record.state_after)
            assert record.agent_acts[0].slot == note["slot"] not in nexts
        elif label.failure_class == "PC":
            # a success notification while the outcome predicate is false
            assert record.agent_acts[0].act == "NOTIFY_SUCCESS"
            intent = spec.intent(record.service, record.intent)
            assert not (
                intent.transactional
                and spec.outcome(record.service, record.intent, record.state_after)
            )
        elif label.failure_class == "UV":
            # the written value occurs nowhere in h_<t ∪ u_t
            context = [h.text for h in record.history] + [record.user]
            assert record.state_after[note["slot"]] == note["value"]
            assert max(span_support(note["value"], t)[0] for t in context) < 0.5


def test_calibration_labels_and_fit(dev):
    spec, dialogues = dev
    records, _, injections = build_slice(dialogues, spec, n=40, seed=3, split="calibration")
    # the calibration partition is disjoint from the bench partition
    assert {partition(r.dialogue_id) for r in records} == {"calibration"}
    uv = next(i for i, n in enumerate(injections) if n.get("class") == "UV")
    criteria = compile_turn(spec, records[uv])
    positives = [c.criterion_id for c in criteria if criterion_is_positive(c, injections[uv])]
    # exactly the UV criterion of the injected slot is positive
    assert positives == [f"UV:{injections[uv]['slot']}"]
    # threshold at the best-F1 cut, smallest band that does not lose accuracy
    gate = fit_gate([0.1, 0.2, 0.3, 0.8, 0.9], [True, True, True, False, False], True)
    assert gate.theta == 0.8 and gate.delta == 0.02 and gate.low_fires is True
    # an atom of scores at theta is decided (not firing), and never counts as abstained
    atoms = fit_gate(
        [0.1, 0.2, 0.9, 0.9, 0.9, 0.95], [True, True, False, False, False, False], True
    )
    assert atoms.theta == 0.9 and Gate(atoms.theta, atoms.delta).decide(0.9)[0] is False
