"""`mads-bench sage run / compare / bench`, the `evaluate` module; clear errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.sage import DialogueAct, TurnLabel, Verdict, read_jsonl, write_jsonl
from mads_bench.cli import main
from tests.evaluators.sage.conftest import SCHEMA, HashEncoder, turn

REPO = Path(__file__).resolve().parents[3]


def write_inputs(tmp_path):
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    clean = turn()
    premature = turn(
        turn_id="3",
        user="Sino sounds good.",
        state_after={"restaurant_name": "Sino"},
        user_acts=[DialogueAct(act="AFFIRM")],
        agent="Your table is booked!",
        agent_acts=[DialogueAct(act="NOTIFY_SUCCESS")],
    )
    write_jsonl(tmp_path / "turns.jsonl", [clean, premature])
    write_jsonl(
        tmp_path / "labels.jsonl",
        [
            TurnLabel(dialogue_id="d1", turn_id="2", label="acceptable"),
            TurnLabel(dialogue_id="d1", turn_id="3", label="failure", failure_class="PC"),
        ],
    )


def test_run_with_labels(tmp_path, capsys, minilm_path):
    write_inputs(tmp_path)
    code = main(
        [
            "sage",
            "run",
            "--turns",
            str(tmp_path / "turns.jsonl"),
            "--schema",
            str(tmp_path / "schema.json"),
            "--out",
            str(tmp_path / "v.jsonl"),
            "--labels",
            str(tmp_path / "labels.jsonl"),
            "--report",
            str(tmp_path / "r.json"),
        ]
    )
    assert code == 0
    verdicts = read_jsonl(tmp_path / "v.jsonl", Verdict)
    # one verdict per turn, in order: the clean turn passes, the premature one fails as PC
    assert [v.verdict for v in verdicts] == ["acceptable", "failure"]
    assert verdicts[1].failure_classes == ["PC"]
    report = json.loads((tmp_path / "r.json").read_text())
    # both turns right: F1 1.0
    assert report["f1"] == 1.0
    assert "F1 1.000" in capsys.readouterr().out


def test_compare(tmp_path, capsys, minilm_path):
    write_inputs(tmp_path)
    for name, extra in (("a", []), ("b", ["--text-only"])):
        main(
            [
                "sage",
                "run",
                "--turns",
                str(tmp_path / "turns.jsonl"),
                "--schema",
                str(tmp_path / "schema.json"),
                "--out",
                str(tmp_path / f"{name}.jsonl"),
                *extra,
            ]
        )
    code = main(
        [
            "sage",
            "compare",
            "--labels",
            str(tmp_path / "labels.jsonl"),
            "--a",
            str(tmp_path / "a.jsonl"),
            "--b",
            str(tmp_path / "a.jsonl"),
        ]
    )
    # an evaluator compared with itself: ΔF1 = 0, p = 1
    assert code == 0 and "ΔF1 (A − B) = +0.000" in capsys.readouterr().out


def test_errors(tmp_path, capsys):
    write_inputs(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        (tmp_path / "turns.jsonl").read_text().splitlines()[0]
        + "\n"
        + json.dumps({"dialogue_id": "d", "turn_id": "1"})
        + "\n"
    )
    code = main(
        [
            "sage",
            "run",
            "--turns",
            str(bad),
            "--schema",
            str(tmp_path / "schema.json"),
            "--out",
            str(tmp_path / "v.jsonl"),
        ]
    )
    # exit 2 and the message names the file, the line and the missing field
    assert code == 2 and "bad.jsonl:2: service: Field required" in capsys.readouterr().err
    code = main(
        [
            "sage",
            "run",
            "--turns",
            str(tmp_path / "turns.jsonl"),
            "--schema",
            str(tmp_path / "schema.json"),
            "--out",
            str(tmp_path / "v.jsonl"),
            "--config",
            "llm",
        ]
    )
    # SAGE-LLM without --judge SPEC is a clear error
    assert code == 2 and "judge backend" in capsys.readouterr().err


def test_bench_writes_slice(tmp_path, sgd_dev, capsys):
    code = main(
        [
            "sage",
            "bench",
            "--sgd",
            str(sgd_dev),
            "--n",
            "12",
            "--seed",
            "0",
            "--out",
            str(tmp_path / "slice"),
        ]
    )
    assert code == 0
    labels = read_jsonl(tmp_path / "slice" / "labels.jsonl", TurnLabel)
    # 12 turns, 6 injected; the text-only twin has no acts
    assert len(labels) == 12 and sum(lb.label == "failure" for lb in labels) == 6
    text_only = (tmp_path / "slice" / "turns.text_only.jsonl").read_text().splitlines()
    assert json.loads(text_only[0])["user_acts"] is None


def test_evaluate_module(tmp_path):
    import evaluate

    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    premature = turn(
        turn_id="3",
        user="Sino sounds good.",
        state_after={"restaurant_name": "Sino"},
        user_acts=[DialogueAct(act="AFFIRM")],
        agent_acts=[DialogueAct(act="NOTIFY_SUCCESS")],
    )
    sage = evaluate.load(str(REPO / "evaluators" / "sage"))
    out = sage.compute(
        predictions=[turn().model_dump_json(), premature.model_dump_json()],
        references=["acceptable", "failure:PC"],
        schema=str(tmp_path / "schema.json"),
        resamples=100,
        encoder=HashEncoder(),
    )
    # both turns right; the PC turn is counted in its class
    assert out["f1"] == 1.0 and out["per_class"]["PC"]["recall"] == 1.0
    # a reference that is not a label is refused with its index
    with pytest.raises(ValueError, match=r"references\[1\]"):
        sage.compute(
            predictions=[turn().model_dump_json()] * 2,
            references=["acceptable", "ok"],
            schema=str(tmp_path / "schema.json"),
            encoder=HashEncoder(),
        )
