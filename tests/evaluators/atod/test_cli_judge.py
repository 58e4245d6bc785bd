"""`atod track --method/--judge` and `atod score --judge [--judge-metrics]` with `fake:`."""

from __future__ import annotations

import json

import pytest

from mads_bench.cli import main
from tests.evaluators.atod.conftest import KeywordEmbedder

TABLE = (
    '{"goals": [{"id": "goal_1", "domain": "Hotels", "intent": "ReserveHotel", '
    '"description": "book a hotel", "status": "open"}]}'
)
ALL_KEYS = '{"match": 1, "grounded": 1, "beneficial": 1, "relevance": 5, "coherence": 4}'


@pytest.fixture(autouse=True)
def no_minilm(monkeypatch):
    """The keyword embedder instead of MiniLM: these tests check the wiring, not matching."""
    import evaluators.atod.matching as matching

    monkeypatch.setattr(matching, "minilm_embedder", lambda model="minilm": KeywordEmbedder())


def test_track_prompt_only_then_score(sample_path, tmp_path, capsys):
    out = tmp_path / "pred.jsonl"
    args = ["atod", "track", "--input", str(sample_path), "--out", str(out)]
    assert main([*args, "--method", "prompt-only", "--judge", f"fake:{TABLE}"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    # one prediction per dialogue, each with the judge's single open goal
    assert [[g["status"] for g in r["goal_list"]] for r in rows] == [["open"]] * 3
    assert main(["atod", "score", "--pred", str(out), "--gold", str(sample_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_dialogues"] == 3


def test_baseline_without_judge_exits_2(sample_path, tmp_path, capsys):
    args = ["atod", "track", "--input", str(sample_path), "--out", str(tmp_path / "p.jsonl")]
    assert main([*args, "--method", "rag"]) == 2
    # the error names the missing flag
    assert "needs --judge" in capsys.readouterr().err


def test_memory_tracker_gets_the_judge(sample_path, tmp_path, monkeypatch):
    import evaluators.atod.tracker as tracker_module

    seen = []

    class Recording:
        @classmethod
        def for_encoders(cls, memory, intent, judge=None):
            seen.append(judge)
            return cls()

        def track(self, turns):
            record = {"turn_id": 1, "speaker": "USER", "utterance": turns[0][1]}
            record["goal_status_changes"] = []
            return tracker_module.TrackerState([], [record])

    monkeypatch.setattr(tracker_module, "MemoryTracker", Recording)
    args = ["atod", "track", "--input", str(sample_path), "--out", str(tmp_path / "p.jsonl")]
    assert main([*args, "--judge", "fake:yes", "--limit", "1"]) == 0
    # the spec was resolved through the registry and handed to the tracker
    assert seen[0].spec == "fake:yes" and seen[0].complete(["q"]) == ["yes"]


def test_score_judge_vetoes_matches(sample_path, capsys):
    args = ["atod", "score", "--pred", str(sample_path), "--gold", str(sample_path)]
    # strict mode: a judge answering "no" vetoes every pair -> F1 0; "yes" keeps them -> 1
    assert main([*args, "--mode", "strict", "--json", "--judge", "fake:no"]) == 0
    assert json.loads(capsys.readouterr().out)["goal_detection_f1"] == 0.0
    assert main([*args, "--mode", "strict", "--json", "--judge", "fake:yes"]) == 0
    assert json.loads(capsys.readouterr().out)["goal_detection_f1"] == 1.0


def test_score_judge_metrics(sample_path, capsys):
    args = ["atod", "score", "--pred", str(sample_path), "--gold", str(sample_path)]
    assert main([*args, "--json", "--judge", f"fake:{ALL_KEYS}", "--judge-metrics"]) == 0
    report = json.loads(capsys.readouterr().out)
    # every probe answered 1 / 5 / 4: MRA 1, relevance 5/5 = 1, coherence 4, nothing missing
    assert report["mra"] == 1.0 and report["turn_relevance"] == 1.0 and report["coherence"] == 4
    assert report["mra_missing"] == 0 and report["judge"].startswith("fake:")
    assert set(report["correlations_with_dgcr"]) >= {"mra", "pe", "turn_relevance", "coherence"}
    # markdown output gets the judge table; --judge-metrics without --judge is an error
    assert main([*args, "--judge", f"fake:{ALL_KEYS}", "--judge-metrics"]) == 0
    assert "### Judge metrics" in capsys.readouterr().out
    assert main([*args, "--judge-metrics"]) == 2
