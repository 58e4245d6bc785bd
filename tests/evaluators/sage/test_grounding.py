"""S2: the confidence gate, the offline verifier (batched, encoder loaded once), the NLI option."""

from __future__ import annotations

import math

import pytest

from evaluators.sage import Gate, NLIGroundingVerifier, OfflineGroundingVerifier, compile_turn
from evaluators.sage.symbolic import s1_decide
from tests.evaluators.sage.conftest import HashEncoder, turn


def test_gate():
    gate = Gate(theta=0.6, delta=0.05, low_fires=True)
    # 0.2 is 0.4 below theta: fires; margin 0.4 / max(0.6, 0.4) = 2/3
    fires, margin = gate.decide(0.2)
    assert fires is True and math.isclose(margin, 0.4 / 0.6)
    # 0.9 is 0.3 above: does not fire, margin 0.5
    assert gate.decide(0.9) == (False, pytest.approx(0.5))
    # inside the ±0.05 band: abstain
    assert gate.decide(0.62)[0] is None
    # a high-fires gate flips the direction
    assert Gate(theta=0.5, delta=0.0, low_fires=False).decide(0.8)[0] is True
    # a score exactly at theta (a lexical rule's fixed value calibration put theta on) is
    # decided as calibration counted it, not firing, in either direction
    assert gate.decide(0.6)[0] is False
    assert Gate(theta=0.9, delta=0.02, low_fires=False).decide(0.9)[0] is False
    assert Gate(theta=0.9, delta=0.02, low_fires=False).decide(0.91)[0] is None


def items_for(spec, record, failure_class):
    return [
        (c, record, spec) for c in compile_turn(spec, record) if c.failure_class == failure_class
    ]


def test_offline_uv_scores(spec):
    encoder = HashEncoder()
    verifier = OfflineGroundingVerifier(encoder=encoder)
    record = turn(state_after={"restaurant_name": "Sino", "city": "San Josee", "time": "7 pm"})
    supported, _ = verifier.scores(items_for(spec, record, "UV"))[0]
    record = turn(state_after={"restaurant_name": "Sino", "city": "Fresno", "time": "7 pm"})
    unsupported, _ = verifier.scores(items_for(spec, record, "UV"))[0]
    # a one-letter typo of a mentioned city scores far above a city never mentioned
    assert supported > 0.9 > unsupported
    # the typed time is decided lexically: 7 pm is in the user turn
    assert verifier.scores(items_for(spec, record, "UV"))[1][0] == 1.0


def test_offline_batch_encodes_once(spec):
    encoder = HashEncoder()
    verifier = OfflineGroundingVerifier(encoder=encoder)
    records = [
        turn(state_after={"restaurant_name": "Sino", "city": c, "time": "7 pm"})
        for c in ("Fresno", "Oakland", "Berkeley")
    ]
    items = [i for r in records for i in items_for(spec, r, "UV")]
    decisions = verifier.verify(items)
    # six criteria, one encoder call for the whole batch
    assert len(decisions) == 6 and encoder.calls == 1


def test_offline_pc_and_iuv(spec):
    verifier = OfflineGroundingVerifier(encoder=HashEncoder())
    done = turn(state_after={"restaurant_name": "Sino"}, agent="Your table has been booked.")
    pc = items_for(spec, done.without_acts(), "PC")
    # a lexical completion cue scores 1.0 and fires (city, time still empty)
    assert verifier.scores(pc)[0][0] == 1.0
    assert verifier.verify(pc)[0][0] is True
    iuv = items_for(spec, turn(state_after={"restaurant_name": "Sino"}).without_acts(), "IUV")
    scores = {
        c.args["value"]: s for (c, _, _), (s, _) in zip(iuv, verifier.scores(iuv), strict=True)
    }
    # "7 pm" can only fill `time`, which is empty: score 0
    assert scores["7 pm"] == 0.0
    # "San Jose" has no slot guess, so every state value is compared: "Sino" shares 3 of
    # 12 characters → ratio 2·3/12 = 0.5 (the fuzzy channel's known weakness)
    assert scores["San Jose"] == 0.5


def test_a_state_value_holds_one_user_value(spec):
    """A slot holding another of the turn's values word for word does not also hold this one:
    `time` holds "7 pm", so "San Jose" (no slot guess) has nothing left to be held by."""
    verifier = OfflineGroundingVerifier(encoder=HashEncoder())
    record = turn(state_after={"time": "7 pm"}, state_before={}).without_acts()
    iuv = items_for(spec, record, "IUV")
    by_value = {c.args["value"]: c for c, _, _ in iuv}
    assert by_value["7 pm"].args["taken"] == []  # `time` is its own match
    assert by_value["San Jose"].args["taken"] == ["time"]
    (score, note), *_ = [
        r
        for (c, _, _), r in zip(iuv, verifier.scores(iuv), strict=True)
        if c.args["value"] == "San Jose"
    ]
    assert score == 0.0 and "is filled" in note


def test_typed_values_compare_by_meaning(spec):
    """A date the user gives is held by a state date only when they are the same day: the
    embedding of two dates ("the 7th of March", "today") never stands in for that."""
    verifier = OfflineGroundingVerifier(encoder=HashEncoder())
    record = turn(
        user="Make it the 7th of March.", state_before={}, state_after={"time": "today"}
    ).without_acts()
    iuv = items_for(spec, record, "IUV")
    (score, note), *_ = verifier.scores(iuv)
    assert iuv[0][0].args["value"].endswith("7th of March") and score == 0.0
    held = record.model_copy(update={"state_after": {"time": "March 7th"}})
    assert verifier.scores(items_for(spec, held, "IUV"))[0][0] == 1.0
    # "any will do" is held by a dontcare only, not by whatever value looks most like it
    anyone = turn(
        user="Any price works.", state_before={}, state_after={"city": "San Jose"}
    ).without_acts()
    (dontcare,) = [i for i in items_for(spec, anyone, "IUV") if i[0].args["value"] == "dontcare"]
    assert verifier.scores([dontcare])[0][0] == 0.0
    held = anyone.model_copy(update={"state_after": {"price_range": "dontcare"}})
    assert s1_decide(items_for(spec, held, "IUV")[0][0], held)[0] is False


@pytest.fixture
def random_nli(tmp_path, minilm_path, minilm_static_path):
    """A random-head BERT cross-encoder with MiniLM's tokenizer (no trained weights)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    def build(id2label):
        folder = tmp_path / "-".join(id2label.values())
        torch.manual_seed(0)
        config = BertConfig(
            vocab_size=30522,
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
            num_labels=3,
            id2label=id2label,
            label2id={v: k for k, v in id2label.items()},
        )
        BertForSequenceClassification(config).save_pretrained(folder)
        AutoTokenizer.from_pretrained(minilm_path).save_pretrained(folder)
        return str(folder)

    return build


def test_nli_label_order(spec, random_nli):
    order_a = random_nli({0: "contradiction", 1: "entailment", 2: "neutral"})
    order_b = random_nli({0: "entailment", 1: "contradiction", 2: "neutral"})
    a = NLIGroundingVerifier(order_a, tau=0.0, fallback=OfflineGroundingVerifier(HashEncoder()))
    b = NLIGroundingVerifier(order_b, tau=0.0, fallback=OfflineGroundingVerifier(HashEncoder()))
    # the label indices come from config.id2label
    assert (a.entail, a.contradict) == (1, 0) and (b.entail, b.contradict) == (0, 1)
    pairs = [("I want a table in San Jose.", "The city is San Jose.")]
    # same weights, swapped labels: the margin changes sign
    assert a.margins(pairs)[0] == pytest.approx(-b.margins(pairs)[0], abs=1e-6)
    record = turn(state_after={"restaurant_name": "Sino", "city": "Fresno", "time": "7 pm"})
    items = items_for(spec, record.without_acts(), "UV") + items_for(spec, record, "IUV")
    decisions = a.verify(items)
    # the UV premise is the recent window, the hypothesis the slot description + value
    premise = " ".join([h.text for h in record.history] + [record.user])
    uv_margin = a.margins([(premise, "The city where the restaurant is located is Fresno.")])[0]
    # with tau 0 the UV criterion fires exactly when contradiction outweighs entailment
    assert decisions[0][0] is (uv_margin < 0)
    # IUV criteria go to the offline fallback (same count of decisions as items)
    assert len(decisions) == len(items)


def test_nli_needs_entailment_label(random_nli):
    folder = random_nli({0: "positive", 1: "negative", 2: "neutral"})
    # a classifier without entailment/contradiction labels is refused with its labels named
    with pytest.raises(ValueError, match="names no entailment"):
        NLIGroundingVerifier(folder)
