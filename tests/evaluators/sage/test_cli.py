"""`mads-bench sage run / compare / bench`, the `evaluate` module; clear errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.sage import (
    DialogueAct,
    TurnLabel,
    Verdict,
    read_jsonl,
    read_turns,
    write_jsonl,
)
from mads_bench.cli import main
from tests.cli_helpers import error_line, run
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


def test_run_with_labels(tmp_path, capsys, minilm_static_path):
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


def test_compare(tmp_path, capsys, minilm_static_path):
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


SGD_TRAIN = REPO / ".." / "shared" / "data" / "sgd" / "train"


def test_train_tagger_retrains_from_sgd_train(tmp_path, capsys, minilm_static_path):
    """`sage train-tagger` rebuilds the shipped weights' recipe on a small sample of SGD train;
    the result reads acts on other SGD train turns far better than chance."""
    if not (SGD_TRAIN / "schema.json").is_file():
        pytest.skip(f"SGD train not found at {SGD_TRAIN}")
    from sklearn.metrics import roc_auc_score

    from evaluators.sage import OfflineGroundingVerifier, WorkflowSpec
    from evaluators.sage.sgd import dialogue_turns, load_dialogues
    from evaluators.sage.tagger import ActTagger, act_labels, featurize

    out = tmp_path / "t.safetensors"
    args = ["sage", "train-tagger", "--sgd-train", str(SGD_TRAIN), "--dialogues", "60"]
    assert main([*args, "--epochs", "40", "--hidden", "32", "--out", str(out)]) == 0
    tagger = ActTagger.load(out)
    assert (
        tagger.metadata["data"].startswith("SGD train")
        and "60 dialogues" in tagger.metadata["data"]
        and tagger.metadata["encoder"] == "minilm-static"
    )
    spec = WorkflowSpec.from_sgd_schema(SGD_TRAIN / "schema.json")
    held_out = [r for d in load_dialogues(SGD_TRAIN)[-15:] for r in dialogue_turns(d)]
    features = featurize(held_out, spec, OfflineGroundingVerifier().encode)
    probs, labels = tagger.predict(features), act_labels(held_out, features)
    assert roc_auc_score(labels["inform"], probs["inform"][:, 0]) > 0.8
    assert roc_auc_score(labels["request"], probs["request"][:, 0]) > 0.8
    # the output is never the input folder, and a bad --tagger is one clear line
    turns = tmp_path / "turns.jsonl"
    write_jsonl(turns, [turn().without_acts()])
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    bad = ["sage", "run", "--turns", str(turns), "--schema", str(tmp_path / "schema.json")]
    code = main([*bad, "--out", str(tmp_path / "v.jsonl"), "--tagger", str(tmp_path / "no.st")])
    assert (
        code == 2 and "--tagger:" in capsys.readouterr().err and not (tmp_path / "v.jsonl").exists()
    )


def _sage_run(tmp_path, capsys, turns, schema=None, *extra):
    """`sage run` on ``turns`` (JSONL rows as dicts) -> (status, the one error line or None)."""
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(row) + "\n" for row in turns))
    schema_path = tmp_path / "in_schema.json"
    schema_path.write_text(json.dumps(SCHEMA if schema is None else schema))
    argv = ["sage", "run", "--turns", tmp_path / "in.jsonl", "--schema", schema_path]
    status, _, err = run([*argv, "--out", tmp_path / "v.jsonl", *extra], capsys)
    assert status == 0 or not (tmp_path / "v.jsonl").exists()  # a refused run writes nothing
    return status, error_line(err) if status else None


def _with(row: dict, path: str, value) -> dict:
    """A deep copy of ``row`` with the dotted ``path`` (list indices as digits) set."""
    row = json.loads(json.dumps(row))
    *parents, last = path.split(".")
    target = row
    for key in parents:
        target = target[int(key)] if key.isdigit() else target[key]
    target[int(last) if last.isdigit() else last] = value
    return row


GOOD = json.loads(turn().model_dump_json())


@pytest.mark.parametrize(
    ("turns", "reason"),
    [
        # the same (dialogue_id, turn_id) twice would be scored twice
        ([GOOD, GOOD], "in.jsonl:2: turn_id: duplicate turn ('d1', '2') (first on line 1)"),
        # an empty file would "evaluate" nothing at exit 0
        ([], "in.jsonl: no turn records (the file is empty)"),
        # an unknown speaker
        (
            [_with(GOOD, "history.0.speaker", "robot")],
            "in.jsonl:1: history[0].speaker: Input should be 'user', 'agent', 'system', 'tool', "
            "'USER' or 'SYSTEM'",
        ),
        # a slot the service does not have, in the state and in an act
        (
            [_with(GOOD, "state_after.colour", "red")],
            "in.jsonl:1: state_after.colour: not a slot of service 'Restaurants_9'",
        ),
        (
            [_with(GOOD, "user_acts.0.slot", "colour")],
            "in.jsonl:1: user_acts[0].slot: 'colour' is not a slot of service 'Restaurants_9'",
        ),
        # an intent the service does not have, on the line it is on
        (
            [GOOD, _with(_with(GOOD, "turn_id", "3"), "intent", "Fly")],
            "in.jsonl:2: intent: 'Fly' is not an intent of service 'Restaurants_9'",
        ),
    ],
    ids=["duplicate", "empty", "speaker", "state-slot", "act-slot", "intent"],
)
def test_sage_run_refuses_bad_turns_naming_file_line_and_field(tmp_path, capsys, turns, reason):
    status, line = _sage_run(tmp_path, capsys, turns)
    assert status == 2 and line == f"error: {tmp_path / reason}"


def test_sgd_pseudo_slots_in_acts_are_not_unknown_slots(tmp_path, spec):
    # SGD's INFORM_INTENT and INFORM_COUNT name `intent` and `count`, which are no slots
    row = _with(GOOD, "user_acts.0", {"act": "INFORM_INTENT", "slot": "intent", "values": ["x"]})
    (tmp_path / "t.jsonl").write_text(json.dumps(row) + "\n")
    assert read_turns(tmp_path / "t.jsonl", spec)[0].user_acts[0].slot == "intent"


def test_sage_run_refuses_a_schema_whose_intent_names_an_absent_slot(tmp_path, capsys):
    schema = json.loads(json.dumps(SCHEMA))
    schema[0]["intents"][1]["required_slots"].append("table_number")
    status, line = _sage_run(tmp_path, capsys, [GOOD], schema)
    assert status == 2
    assert line == (
        f"error: {tmp_path / 'in_schema.json'}: [0].intents[1].required_slots: 'table_number' "
        "is not a slot of service 'Restaurants_9'"
    )


def test_schema_and_gates_files_that_are_not_json_are_named(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("")
    argv = ["sage", "run", "--turns", tmp_path / "t.jsonl", "--out", tmp_path / "v.jsonl"]
    status, _, err = run([*argv, "--schema", tmp_path / "bad.json"], capsys)
    # the schema file is named, with where it stops being JSON
    assert status == 2
    expected = f"error: {tmp_path / 'bad.json'}: line 1 column 1: not JSON (Expecting value)"
    assert error_line(err) == expected
    status, line = _sage_run(tmp_path, capsys, [GOOD], None, "--gates", tmp_path / "bad.json")
    assert status == 2
    assert line == f"error: --gates {tmp_path / 'bad.json'}: line 1 column 1: Expecting value"


@pytest.mark.parametrize("empty", ["labels", "a", "b"])
def test_sage_compare_refuses_an_empty_input(tmp_path, capsys, empty):
    files = {}
    rows = {
        "labels": TurnLabel(dialogue_id="d1", turn_id="2", label="acceptable"),
        "a": Verdict(dialogue_id="d1", turn_id="2", verdict="acceptable", margin=1.0),
        "b": Verdict(dialogue_id="d1", turn_id="2", verdict="failure", margin=1.0),
    }
    for name, row in rows.items():
        files[name] = tmp_path / f"{name}.jsonl"
        write_jsonl(files[name], [] if name == empty else [row])
    argv = ["sage", "compare", "--labels", files["labels"], "--a", files["a"], "--b", files["b"]]
    status, out, err = run(argv, capsys)
    # no ΔF1 of nothing: exit 2 naming the empty file
    what = "labels" if empty == "labels" else "verdicts"
    assert status == 2 and not out
    assert error_line(err) == f"error: {files[empty]}: no {what} (the file is empty)"
