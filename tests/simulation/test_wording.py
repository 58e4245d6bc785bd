"""The agents' wording as data: the phrase files load, validate, and refuse a misread phrase."""

from __future__ import annotations

import json
import shutil

import pytest

from mads_bench.loading import CatalogError
from simulation.agents import wording
from simulation.agents.settings import SETTINGS
from simulation.agents.text import asks_confirmation, is_affirmative


def test_every_file_loads_with_its_cues_checked():
    user, assistant = wording.user_wording(), wording.assistant_wording()
    # the cues are declared in the data, and every phrase of the act carries them
    assert user.acts["agree"].cues == ("yes",)
    assert all(is_affirmative(p) for p in user.acts["agree"].phrases)
    assert "confirmation" in assistant.acts["stale"].cues
    assert all(asks_confirmation(p) for p in assistant.acts["confirm_question"].phrases)
    # the acts the phrasebank adds to, by category
    assert user.acts["agree"].mined_from == ("agree",)
    assert assistant.acts["req_more"].phrases == () and assistant.acts["req_more"].mined_from
    assert set(wording.slot_form_data().kinds.values()) <= set(wording.slot_form_data().forms)
    assert "{done_token}" in wording.prompt_text().user_rules
    assert wording.cue_lexicon().pattern("decline").search("Sorry, that cannot be moved.")
    # the closed word lists of the phrasebank's mining and the style rules
    assert "book" in wording.word_lists().domain_words
    assert {"your", "the"} <= wording.word_lists().ask_before


@pytest.fixture
def copied(tmp_path, monkeypatch):
    """The data files in a scratch folder the loaders read from (caches cleared)."""
    for path in wording.HERE.glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    monkeypatch.setattr(wording, "HERE", tmp_path)
    loaders = (
        wording.user_wording,
        wording.assistant_wording,
        wording.slot_form_data,
        wording.word_lists,
    )
    for loader in loaders:
        loader.cache_clear()
    yield tmp_path
    for loader in loaders:
        loader.cache_clear()


def _edit(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_a_phrase_the_other_agent_would_misread_is_refused(copied):
    # "No, leave it." among the ways of agreeing: the assistant would read it as a no
    _edit(copied / "user_phrases.json", lambda d: d["acts"]["agree"]["phrases"].append("No."))
    with pytest.raises(CatalogError, match=r"acts\.agree\.phrases\[15\]: 'No\.' fails its cue yes"):
        wording.user_wording()


def test_a_malformed_file_names_the_field(copied):
    # a misspelt key is refused, not ignored
    _edit(copied / "assistant_phrases.json", lambda d: d["acts"]["did"].update(cue=["x"]))
    with pytest.raises(CatalogError, match=r"assistant_phrases\.json: acts\.did\.cue: Extra"):
        wording.assistant_wording()
    # a slot name mapped to a kind without forms
    _edit(copied / "slot_forms.json", lambda d: d["kinds"].update(zip_code="postcode"))
    with pytest.raises(CatalogError, match=r"kinds without forms: \['postcode'\]"):
        wording.slot_form_data()
    # a missing word list is named
    _edit(copied / "word_lists.json", lambda d: d.pop("ask_before"))
    with pytest.raises(CatalogError, match=r"word_lists\.json: ask_before: Field required"):
        wording.word_lists()


def test_the_probabilities_are_named_settings():
    # the two shares the issue found under one name (NATURAL_SHARE) with two values
    assert (SETTINGS.user_slot_form_share, SETTINGS.assistant_slot_form_share) == (0.5, 0.75)
    fields = SETTINGS.__dataclass_fields__
    assert len(fields) == 18 and all(0 < getattr(SETTINGS, name) < 1 for name in fields)
