"""`atod track` and `atod score` on hostile input: one `error:` line, exit 2, inputs untouched."""

from __future__ import annotations

import json
import sys

import pytest

from tests.cli_helpers import error_line, run
from tests.evaluators.atod.conftest import KeywordEmbedder

EMPTY_TABLE = 'fake:{"goals": []}'


@pytest.fixture(autouse=True)
def no_minilm(monkeypatch):
    """The keyword embedder instead of MiniLM: these tests check the CLI, not matching."""
    import evaluators.atod.matching as matching

    monkeypatch.setattr(matching, "minilm_embedder", lambda model="minilm": KeywordEmbedder())


def track(path, out, *extra: str) -> list[str]:
    # the prompt-only baseline with a scripted judge: no model, the same loading and writing
    return ["atod", "track", "--dialogues", str(path), "--out", str(out), *extra]


def turns_only(sample_path) -> list[dict]:
    """The shared sample reduced to what a tracker reads: ids and (speaker, utterance)."""
    rows = json.loads(sample_path.read_text())
    return [
        {
            "dialogue_id": d["dialogue_id"],
            "turns": [{"speaker": t["speaker"], "utterance": t["utterance"]} for t in d["turns"]],
        }
        for d in rows
    ]


# --- track: what a tracker input needs ---------------------------------------------------


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_track_accepts_turns_only_dialogues(sample_path, tmp_path, capsys, suffix):
    rows = turns_only(sample_path)
    path = tmp_path / f"turns{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        path.write_text(json.dumps(rows))
    out = tmp_path / "pred.jsonl"
    code, _, err = run(track(path, out, "--method", "prompt-only", "--judge", EMPTY_TABLE), capsys)
    # no complexity_class or goal_list needed: exit 0, one prediction per dialogue
    assert code == 0, err
    predictions = [json.loads(line) for line in out.read_text().splitlines()]
    assert [p["dialogue_id"] for p in predictions] == [r["dialogue_id"] for r in rows]
    # no label was given, so none is invented
    assert all("complexity_class" not in p for p in predictions)
    # turns numbered by position: 12, 20 and 22 turns as in the sample
    assert [len(p["turns"]) for p in predictions] == [12, 20, 22]
    # and the predictions score against the published gold (its labels group them)
    code, out_json, err = run(
        ["atod", "score", "--pred", str(out), "--gold", str(sample_path), "--json"], capsys
    )
    assert code == 0, err
    report = json.loads(out_json)
    assert report["n_dialogues"] == 3 and report["missing_predictions"] == []
    assert report["by_complexity"]["medium"]["n_dialogues"] == 3


def test_track_reads_only_speaker_and_utterance_in_turn_order(tmp_path, capsys, monkeypatch):
    import evaluators.atod.tracker as tracker_module

    seen = []

    class Recording:
        @classmethod
        def for_encoders(cls, memory, intent, judge=None):
            return cls()

        def track(self, turns):
            seen.append(turns)
            record = {"turn_id": 1, "speaker": "USER", "utterance": turns[0][1]}
            return tracker_module.TrackerState([], [{**record, "goal_status_changes": []}])

    monkeypatch.setattr(tracker_module, "MemoryTracker", Recording)
    path = tmp_path / "d.json"
    turns = [
        {"turn_id": 2, "speaker": "system", "utterance": "Booked.", "all_goals": "not read"},
        {"turn_id": 1, "speaker": "user", "utterance": "Book a hotel."},
    ]
    # gold keys that are malformed are carried along, not validated: the tracker ignores them
    path.write_text(json.dumps([{"dialogue_id": "d", "goal_list": "junk", "turns": turns}]))
    code, _, err = run(track(path, tmp_path / "p.json"), capsys)
    assert code == 0, err
    # (speaker, utterance) pairs only, sorted by turn_id, speakers upper-cased
    assert seen == [[("USER", "Book a hotel."), ("SYSTEM", "Booked.")]]


def _turn(**fields):
    return {"speaker": "USER", "utterance": "Book a hotel.", **fields}


@pytest.mark.parametrize(
    ("data", "where"),
    [
        # no turns at all
        ([{"dialogue_id": "a"}], "[0](a).turns: Field required"),
        # turns of the wrong type
        ([{"dialogue_id": "a", "turns": "hi"}], "[0](a).turns: Input should be a valid list"),
        # an empty dialogue
        ([{"dialogue_id": "a", "turns": []}], "[0](a).turns: List should have at least 1 item"),
        # a turn without its utterance
        (
            [{"dialogue_id": "a", "turns": [{"speaker": "USER"}]}],
            "[0](a).turns[0].utterance: Field required",
        ),
        # an utterance that is not text
        (
            [{"dialogue_id": "a", "turns": [_turn(utterance=5)]}],
            "[0](a).turns[0].utterance: Input should be a valid string",
        ),
        # a speaker outside USER / SYSTEM
        (
            [{"dialogue_id": "a", "turns": [_turn(speaker="BOT")]}],
            "[0](a).turns[0].speaker: Input should be 'USER' or 'SYSTEM'",
        ),
        # no id: the dialogue is named by its index
        ([{"turns": [_turn()]}], "[0].dialogue_id: Field required"),
        # the second dialogue is the broken one
        (
            [{"dialogue_id": "a", "turns": [_turn()]}, {"dialogue_id": "b", "turns": [7]}],
            "[1](b).turns[0]: Input should be a valid dictionary",
        ),
        # turn ids on some turns only: the order would be ambiguous
        (
            [{"dialogue_id": "a", "turns": [_turn(turn_id=1), _turn()]}],
            "[0](a).turns: turns[1] has no turn_id; give every turn one, or none",
        ),
        # two dialogues with one id cannot both be paired with gold
        (
            [{"dialogue_id": "a", "turns": [_turn()]}] * 2,
            "[1](a).dialogue_id: duplicate dialogue id",
        ),
        # not an array of dialogues
        (5, "expected a JSON array of dialogues, got int"),
    ],
)
def test_track_malformed_input_is_one_line(tmp_path, capsys, data, where):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "p.jsonl"
    code, out_text, err = run(track(path, out), capsys)
    # exit 2; one line naming the file, the dialogue and the field; nothing written
    assert code == 2 and out_text == ""
    assert error_line(err).startswith(f"error: {path}: {where}")
    assert not out.exists()


def test_track_bad_jsonl_line_and_json_holding_jsonl(tmp_path, capsys):
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text(json.dumps({"dialogue_id": "a", "turns": [_turn()]}) + "\n{oops\n")
    code, _, err = run(track(jsonl, tmp_path / "p.jsonl"), capsys)
    # the broken line is named
    assert code == 2
    assert error_line(err).startswith(f"error: {jsonl}: line 2 column 2: ")
    # JSONL saved as .json: the hint says how to name it
    wrong = tmp_path / "lines.json"
    wrong.write_text(jsonl.read_text().splitlines()[0] + "\n" + jsonl.read_text().splitlines()[0])
    code, _, err = run(track(wrong, tmp_path / "p.jsonl"), capsys)
    assert code == 2
    assert error_line(err) == (
        f"error: {wrong}: line 2 column 1: Extra data "
        "(a .json file holds one array; name a JSONL file .jsonl)"
    )


@pytest.mark.parametrize("content", ["", "[]", "\n\n"])
def test_track_empty_file(tmp_path, capsys, content):
    path = tmp_path / "empty.json"
    path.write_text(content)
    code, _, err = run(track(path, tmp_path / "p.jsonl"), capsys)
    # nothing to track is an error, not an empty prediction file
    assert code == 2
    assert error_line(err) == f"error: --dialogues {path}: no dialogues in the file"


def test_track_unreadable_inputs(tmp_path, capsys):
    missing = tmp_path / "missing.json"
    code, _, err = run(track(missing, tmp_path / "p.jsonl"), capsys)
    assert code == 2
    assert error_line(err) == f"error: {missing}: cannot read file (No such file or directory)"
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = run(track(binary, tmp_path / "p.jsonl"), capsys)
    # not text: the byte is named, no UnicodeDecodeError
    assert code == 2 and error_line(err) == f"error: {binary}: byte 0: not UTF-8 text"


# --- track: outputs ------------------------------------------------------------------------


def test_track_refuses_to_overwrite_its_input(sample_path, tmp_path, capsys):
    path = tmp_path / "dialogues.json"
    path.write_bytes(sample_path.read_bytes())
    before = path.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(path)
    # the same path, another spelling of it, and a symlink to it
    for out in (path, tmp_path / "." / "dialogues.json", link):
        code, _, err = run(track(path, out), capsys)
        assert code == 2
        assert error_line(err) == (
            f"error: --out {out} is also the input --dialogues; choose another path"
        )
    # the input is byte for byte what it was
    assert path.read_bytes() == before


def test_track_refuses_a_folder_as_out(sample_path, tmp_path, capsys):
    folder = tmp_path / "out"
    folder.mkdir()
    code, _, err = run(track(sample_path, folder), capsys)
    assert code == 2
    assert error_line(err) == f"error: --out {folder} is a folder; give a .jsonl or .json file"


def test_track_replaces_out_atomically(sample_path, tmp_path, capsys, monkeypatch):
    import mads_bench.files as files

    out = tmp_path / "pred.jsonl"
    out.write_text("previous run\n")

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    # a write that fails half-way (here: at the rename) keeps the previous file whole
    monkeypatch.setattr(files.os, "replace", fail)
    code, _, err = run(
        track(sample_path, out, "--method", "prompt-only", "--judge", EMPTY_TABLE), capsys
    )
    assert code == 2
    assert error_line(err) == f"error: No space left on device while writing --out {out}"
    assert out.read_text() == "previous run\n"
    assert [p.name for p in tmp_path.iterdir()] == ["pred.jsonl"]


# --- numeric flags ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--limit", "0"], "argument --limit: must be >= 1, got 0"),
        (["--limit", "-3"], "argument --limit: must be >= 1, got -3"),
        (["--limit", "two"], "argument --limit: expected a whole number, got 'two'"),
        (["--top-k", "0"], "argument --top-k: must be >= 1, got 0"),
    ],
)
def test_track_numeric_flags_checked_when_parsed(sample_path, tmp_path, capsys, flags, message):
    out = tmp_path / "p.jsonl"
    code, _, err = run(track(sample_path, out, *flags), capsys)
    # argparse's usage, then one error line; no work done
    assert code == 2 and err.strip().splitlines()[-1].endswith(f"error: {message}")
    assert "Traceback" not in err and not out.exists()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1.5", "must be in [0, 1], got 1.5"),
        ("-0.1", "must be in [0, 1], got -0.1"),
        ("nan", "must be a finite number, got 'nan'"),
        ("inf", "must be a finite number, got 'inf'"),
    ],
)
def test_score_threshold_in_unit_interval(sample_path, capsys, value, message):
    argv = ["atod", "score", "--pred", str(sample_path), "--gold", str(sample_path)]
    code, out, err = run([*argv, "--threshold", value], capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines()[-1].endswith(f"error: argument --threshold: {message}")


# --- score -----------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--pred", "--gold"])
@pytest.mark.parametrize("content", ["", "[]"])
def test_score_empty_file_is_an_error(sample_path, tmp_path, capsys, flag, content):
    empty = tmp_path / "empty.jsonl"
    empty.write_text(content)
    files = {"--pred": sample_path, "--gold": sample_path, flag: empty}
    argv = ["atod", "score", "--pred", str(files["--pred"]), "--gold", str(files["--gold"])]
    code, out, err = run([*argv, "--json"], capsys)
    # not exit 0 with null metrics: one line naming the flag and the file
    assert code == 2 and out == ""
    assert error_line(err) == f"error: {flag} {empty}: no dialogues in the file"


def test_score_gold_without_a_single_goal_is_an_error(sample_path, tmp_path, capsys):
    gold = tmp_path / "gold.json"
    dialogues = json.loads(sample_path.read_text())
    for dialogue in dialogues:
        dialogue["goal_list"] = []
    gold.write_text(json.dumps(dialogues))
    argv = ["atod", "score", "--pred", str(sample_path), "--gold", str(gold)]
    code, out, err = run(argv, capsys)
    # not a table of 0.00 and n/a: one line naming the flag, the file and the empty field
    assert code == 2 and out == ""
    assert error_line(err) == (
        f"error: --gold {gold}: goal_list is empty in all 3 dialogues; no gold goal to score "
        "against"
    )


def test_score_json_stdout_is_only_json(sample_path, capsys, monkeypatch):
    import evaluators.atod.report as report_module

    real = report_module.score_dialogues

    def noisy(*args, **kwargs):
        # what transformers / wandb do on import: a banner on stdout
        print("wandb: Tracking run with wandb version 0.0 (offline)")
        return real(*args, **kwargs)

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setattr(report_module, "score_dialogues", noisy)
    argv = ["atod", "score", "--pred", str(sample_path), "--gold", str(sample_path), "--json"]
    code, out, err = run(argv, capsys)
    # stdout parses as one JSON document; the banner went to stderr
    assert code == 0
    assert json.loads(out)["goal_detection_f1"] == 1.0
    assert "wandb: Tracking run" in err and "wandb" not in out


@pytest.mark.slow  # a fresh interpreter imports transformers and loads MiniLM (~15 s)
def test_score_json_with_wandb_offline_in_a_real_process(sample_path):
    import os
    import subprocess

    env = {**os.environ, "WANDB_MODE": "offline", "HF_HUB_OFFLINE": "1"}
    argv = ["atod", "score", "--pred", str(sample_path), "--gold", str(sample_path), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "mads_bench", *argv], env=env, capture_output=True, text=True
    )
    # exit 0 and stdout is exactly the JSON report
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["n_dialogues"] == 3


def test_score_predictions_not_in_gold(sample_path, tmp_path, capsys):
    pred = tmp_path / "pred.jsonl"
    row = json.loads(sample_path.read_text())[0]
    pred.write_text(json.dumps({**row, "dialogue_id": "elsewhere"}) + "\n")
    argv = ["atod", "score", "--pred", str(pred), "--gold", str(sample_path)]
    code, _, err = run(argv, capsys)
    assert code == 2
    assert error_line(err) == (
        f"error: --pred {pred}: predictions for dialogues not in the gold file (1): ['elsewhere']"
    )


def test_score_gold_must_be_gold(sample_path, tmp_path, capsys):
    gold = tmp_path / "turns.json"
    gold.write_text(json.dumps(turns_only(sample_path)))
    argv = ["atod", "score", "--pred", str(sample_path), "--gold", str(gold)]
    code, _, err = run(argv, capsys)
    # turns-only dialogues are tracker input, not gold: the missing label is named
    assert code == 2
    dialogue = turns_only(sample_path)[0]["dialogue_id"]
    assert error_line(err).startswith(f"error: {gold}: [0]({dialogue}).complexity_class: ")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--judge-metrics"], "error: --judge-metrics needs --judge SPEC"),
        (["--per-dialogue"], "error: --per-dialogue needs --json (the rows are only in the JSON "),
        (["--judge", "nope:x"], "error: --judge: Unknown backend spec 'nope:x'"),
    ],
)
def test_score_flag_combinations(sample_path, capsys, flags, message):
    argv = ["atod", "score", "--pred", str(sample_path), "--gold", str(sample_path), *flags]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and error_line(err).startswith(message)
