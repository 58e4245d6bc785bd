"""The LLM hooks through `simulation.backends` (a `fake:` backend stands for a real LLM)."""

from __future__ import annotations

import re

import pytest

from simulation.atod_generation import GenerationConfig, generate


def _faithful(conversation):
    # rewrite the line with a prefix, keeping it (and so its values) intact
    line = re.search(r"Line: (.*)", conversation[-1]["content"], re.S)
    if line:
        return "Well, " + line.group(1)
    values = re.search(r"Values: (.*)\nSentence:", conversation[-1]["content"], re.S)
    return "As a user, I need this: " + values.group(1).replace(" = ", " ")


@pytest.fixture(scope="module")
def fake_runs(sgd_dir, sgd_corpus):
    from simulation.backends import register_backend
    from simulation.backends.fake_backend import FakeBackend

    @register_backend("fake-faithful")
    def _factory(spec, **options):
        return FakeBackend("fake:", replies=_faithful)

    def run(**options):
        return generate(GenerationConfig(sgd_dir, **options), corpus=sgd_corpus)

    return run


def test_faithful_rewrites_are_used(fake_runs):
    result = fake_runs(num_dialogues=3, seed=1, backend="fake-faithful:")
    turns = [t for r in result.records for t in r["turns"]]
    # every turn was rewritten (all values kept), and the labels still verify
    assert all(t["utterance"].startswith("Well, ") for t in turns)
    assert result.llm_rejections == 0 and result.rejected == []
    assert result.records[0]["metadata"]["backend"] == "fake-faithful:"


def test_unfaithful_rewrites_fall_back_to_templates(fake_runs):
    scripted = fake_runs(num_dialogues=3, seed=1)
    lossy = fake_runs(num_dialogues=3, seed=1, backend="fake:Okay.")
    # "Okay." drops every value: turns that carry values keep their template text
    for a, b in zip(scripted.records, lossy.records, strict=True):
        for ta, tb in zip(a["turns"], b["turns"], strict=True):
            assert tb["utterance"] in (ta["utterance"], "Okay.")
    assert lossy.llm_rejections > 0
    # the labels do not depend on the text
    for a, b in zip(scripted.records, lossy.records, strict=True):
        assert [g["status_history"] for g in a["goal_list"]] == [
            g["status_history"] for g in b["goal_list"]
        ]


def test_judge_fail_rejects(fake_runs):
    result = fake_runs(num_dialogues=2, seed=1, judge="fake:FAIL", max_retries=2)
    # a judge that always answers FAIL rejects both dialogues after two attempts each
    assert result.records == [] and len(result.rejected) == 2
    assert result.rejected[0]["problems"] == ["judge: FAIL"]
    passed = fake_runs(num_dialogues=2, seed=1, judge="fake:PASS")
    assert len(passed.records) == 2
