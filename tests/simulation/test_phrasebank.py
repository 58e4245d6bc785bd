"""The SGD phrasebank: mining rules, the shipped file's guarantees, rebuilding it."""

import json
import re
from pathlib import Path

import pytest

from mads_bench.loading import read_sgd_dialogues
from simulation.agents.phrasebank import (
    CATEGORIES,
    DOMAIN_WORDS,
    SHIPPED,
    load_phrasebank,
    mine_phrasebank,
)
from simulation.agents.text import asks_confirmation, is_affirmative, reports_completion
from simulation.validator.role_confusion import SERVICE_PHRASES

SGD_TRAIN = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "sgd" / "train"


def _turn(speaker, text, acts, spans=(), service="Restaurants_1"):
    frame = {
        "service": service,
        "actions": [{"act": a, "slot": s, "values": []} for a, s in acts],
        "slots": [{"slot": "x", "start": b, "exclusive_end": e} for b, e in spans],
    }
    return {"speaker": speaker, "utterance": text, "frames": [frame]}


def _dialogue(*turns):
    return {"dialogue_id": "d", "services": ["Restaurants_1"], "turns": list(turns)}


def test_mining_keeps_generic_templates_and_drops_domain_ones():
    dialogues = [
        _dialogue(
            _turn("USER", "Yes, that works for me.", [("AFFIRM", "")]),
            _turn("USER", "Yes, book the table.", [("AFFIRM", "")]),  # names an SGD task
            _turn("USER", "Thanks, that's all.", [("THANK_YOU", ""), ("GOODBYE", "")]),
            _turn("USER", "No, thank you.", [("NEGATE", ""), ("THANK_YOU", "")]),
            _turn("USER", "It's San Jose.", [("INFORM", "city")], [(5, 13)]),
            _turn("USER", "I want to go on March 3rd.", [("INFORM", "date")], [(16, 25)]),
            _turn("SYSTEM", "What is your city?", [("REQUEST", "city")]),
            _turn("SYSTEM", "Which city should I search in?", [("REQUEST", "city")]),
            _turn(
                "SYSTEM",
                "Please confirm the following details: a table for 2 at Bird Dog.",
                [("CONFIRM", "restaurant_name")],
                [(55, 63)],
            ),
            _turn("SYSTEM", "Can I help with anything else?", [("REQ_MORE", "")]),
            _turn("SYSTEM", "Shall I help you with anything else?", [("REQ_MORE", "")]),
            _turn("SYSTEM", "Okay, all done.", [("NOTIFY_SUCCESS", "")]),
            _turn("SYSTEM", "Your table is confirmed.", [("NOTIFY_SUCCESS", "")]),
        )
    ]
    bank = mine_phrasebank(dialogues, min_domains=1)
    assert bank == {
        "agree": ["Yes, that works for me."],
        "thanks": ["Thanks, that's all."],
        "no_thanks": ["No, thank you."],
        # "go on {value}" says what the value is: dropped
        "inform": ["It's {value}."],
        # "search in" is about places: dropped
        "ask": ["What is your {label}?"],
        # the words before the first value, up to a colon
        "confirm_lead": ["Please confirm the following details:"],
        # "Shall I ...?" would read as asking to confirm an action: dropped
        "req_more": ["Can I help with anything else?"],
        "success": ["Okay, all done."],
    }


def test_a_word_used_by_too_few_domains_is_not_generic():
    # one domain uses "splendid": with min_domains=2 the phrase goes
    dialogues = [
        _dialogue(_turn("USER", "Yes, splendid.", [("AFFIRM", "")], service="Music_1")),
        _dialogue(_turn("USER", "Yes, please.", [("AFFIRM", "")], service="Music_1")),
        _dialogue(_turn("USER", "Yes please.", [("AFFIRM", "")], service="Hotels_1")),
    ]
    # "Yes, please." and "Yes please." are one template (punctuation ignored); on a tie in
    # use the surface form is the alphabetically first
    assert mine_phrasebank(dialogues, min_domains=2)["agree"] == ["Yes please."]


@pytest.mark.skipif(not SGD_TRAIN.is_dir(), reason="SGD train not available")
def test_rebuild_from_a_few_sgd_dialogues_gives_templates_that_relexicalise():
    bank = mine_phrasebank(read_sgd_dialogues(SGD_TRAIN, limit=150), min_domains=1)
    assert all(bank[c] for c in ("agree", "thanks", "no_thanks", "req_more")), bank
    _check(bank)


def test_shipped_phrasebank_is_small_licensed_and_safe():
    document = json.loads(SHIPPED.read_text("utf-8"))
    assert SHIPPED.stat().st_size < 300_000
    assert document["license"] == "CC BY-SA 4.0" and "Schema-Guided" in document["source"]
    bank = load_phrasebank()
    assert set(bank) == set(CATEGORIES)
    assert len(bank["agree"]) >= 200 and len(bank["req_more"]) >= 200 and len(bank["ask"]) >= 20
    _check(bank)


def _check(bank):
    words = re.compile(r"[a-z]+(?:'[a-z]+)?")
    for template in (t for templates in bank.values() for t in templates):
        # no SGD task word survives, whatever the category
        assert not set(words.findall(template.casefold())) & DOMAIN_WORDS, template
    # the scripted assistant reads every agreement as a yes
    assert all(is_affirmative(t) for t in bank["agree"])
    # a user never sounds like the assistant (the validator's role-confusion rules)
    user = [*bank["agree"], *bank["thanks"], *bank["no_thanks"], *bank["inform"]]
    assert not [t for t in user if SERVICE_PHRASES.search(t)]
    # an ask names the slots and asks; "anything else?" never asks to confirm an action
    assert all("{label}" in t and t.endswith("?") for t in bank["ask"])
    assert all("{value}" in t for t in bank["inform"])
    assert not any(asks_confirmation(t) for t in bank["req_more"])
    # a confirmation lead introduces the details
    assert all(t.endswith(":") for t in bank["confirm_lead"])
    # a success line is read as a completion report
    assert all(reports_completion(t) for t in bank["success"])


@pytest.mark.slow
@pytest.mark.skipif(not SGD_TRAIN.is_dir(), reason="SGD train not available")
def test_full_rebuild_reproduces_the_shipped_file(tmp_path, minilm_path):
    # what `mads-bench build-phrasebank` does: mine SGD train, vet the user phrases
    from mads_bench.embedding import SentenceEncoder
    from mads_bench.models import load_sentence_encoder
    from simulation.agents.phrasebank import build_phrasebank
    from simulation.validator.role_confusion import assistant_like

    embedder = SentenceEncoder(load_sentence_encoder(str(minilm_path)))
    out = tmp_path / "bank.json"
    build_phrasebank(SGD_TRAIN, out, vet_user=lambda texts: assistant_like(texts, embedder))
    assert out.read_text("utf-8") == SHIPPED.read_text("utf-8")


def test_no_user_phrase_sounds_like_the_assistant(minilm_path):
    # what the scripted user may say, hand-written or mined, passes the validator's
    # role-confusion test even without the persona's own samples to lean on
    from mads_bench.embedding import SentenceEncoder
    from mads_bench.models import load_sentence_encoder
    from simulation.agents import phrasing
    from simulation.agents.wording import user_wording
    from simulation.validator.role_confusion import assistant_like

    said = [p for act in phrasing.PHRASES for p in phrasing.variants(act)]
    said += [t for tails in user_wording().tails.values() for t in tails]
    said += [o.format(objective="cancel order O1") for o in user_wording().openers]
    said += [t.format(value="C1004") for t in load_phrasebank()["inform"]]
    flags = assistant_like(said, SentenceEncoder(load_sentence_encoder(str(minilm_path))))
    assert [text for text, flagged in zip(said, flags, strict=True) if flagged] == []
