"""`atod generate` on settings that cannot work: one `error:` line naming the flag, exit 2."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.cli_helpers import error_line, run


@pytest.fixture
def single_domain_first(tiny_sgd, tmp_path):
    """An SGD folder whose first file is single-domain, as SGD train's first ~42 files are."""
    folder = tmp_path / "sgd"
    folder.mkdir()
    shutil.copy(tiny_sgd / "schema.json", folder / "schema.json")
    dialogues = json.loads((tiny_sgd / "dialogues_001.json").read_text())
    single = [d for d in dialogues if len(d["services"]) == 1]
    (folder / "dialogues_001.json").write_text(json.dumps(single))
    shutil.copy(tiny_sgd / "dialogues_001.json", folder / "dialogues_002.json")
    return folder


def generate(sgd, out, *flags: str) -> list[str]:
    return ["atod", "generate", "--sgd", str(sgd), "--out", str(out), *flags]


def test_max_files_without_goal_sequences(single_domain_first, tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, err = run(generate(single_domain_first, out, "--max-files", "1"), capsys)
    # was an IndexError traceback: now one line naming the flag and what to change
    assert code == 2 and stdout == ""
    assert error_line(err) == (
        "error: --max-files 1: no dialogue with two or more services among the 1 SGD "
        f"dialogues in 1 files of {single_domain_first}, so there is no goal sequence to "
        "build dialogues from; read more files"
    )
    assert not out.exists()


def test_max_files_that_suffice_give_a_result(single_domain_first, tmp_path, capsys):
    out = tmp_path / "out"
    flags = ["--max-files", "2", "--num", "3", "--complex-share", "0"]
    code, _, err = run(generate(single_domain_first, out, *flags), capsys)
    # the second file has multi-domain dialogues: three medium dialogues are written
    assert code == 0, err
    assert len(json.loads((out / "dialogues.json").read_text())) == 3


def test_graph_too_small_for_complex_dialogues(tiny_sgd, tmp_path, capsys):
    code, _, err = run(generate(tiny_sgd, tmp_path / "out", "--num", "4"), capsys)
    # six goals cannot make a 7-goal complex dialogue: the share is the flag to change
    assert code == 2
    assert error_line(err) == (
        "error: --complex-share 0.35: complex dialogues need 7 or more connected goals, but the "
        f"co-occurrence graph of the 5 SGD dialogues in 1 files of {tiny_sgd} connects at "
        "most 6; set the complex share to 0"
    )


def test_too_many_dialogues_for_the_graph(tiny_sgd, tmp_path, capsys):
    flags = ["--num", "200", "--complex-share", "0"]
    code, _, err = run(generate(tiny_sgd, tmp_path / "out", *flags), capsys)
    # fewer distinct goal sets than dialogues asked for: --num is named
    assert code == 2
    line = error_line(err)
    assert line.startswith("error: --num 200: could not sample a new walk of 2-6 goals")
    assert line.endswith("; ask for fewer dialogues")


def test_bad_sgd_folder_and_files(tiny_sgd, tmp_path, capsys):
    folder = tmp_path / "sgd"
    folder.mkdir()
    shutil.copy(tiny_sgd / "schema.json", folder / "schema.json")
    (folder / "dialogues_001.json").write_text("[{broken")
    code, _, err = run(generate(folder, tmp_path / "out"), capsys)
    # a corrupt SGD file is named with the line and column
    assert code == 2
    assert error_line(err).startswith(f"error: {folder / 'dialogues_001.json'}: line 1 column 3")
    (folder / "dialogues_001.json").write_text(json.dumps([{"turns": 3}]))
    code, _, err = run(generate(folder, tmp_path / "out"), capsys)
    # a record that is not an SGD dialogue: file and index
    assert code == 2
    assert error_line(err).startswith(
        f"error: {folder / 'dialogues_001.json'}: [0]: not an SGD dialogue"
    )


@pytest.mark.parametrize("where", ["same", "parent"])
def test_out_must_not_hold_the_sgd_input(tiny_sgd, tmp_path, capsys, where):
    folder = tmp_path / "data" / "sgd"
    shutil.copytree(tiny_sgd, folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    out = folder if where == "same" else folder.parent
    code, _, err = run(generate(folder, out, "--num", "2", "--complex-share", "0"), capsys)
    # refused before any work; the input files are byte for byte what they were
    assert code == 2
    relation = "is also the input --sgd" if where == "same" else f"holds the input --sgd {folder}"
    assert error_line(err) == f"error: --out {out} {relation}; choose another path"
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_backend_spec_is_checked_first(tiny_sgd, tmp_path, capsys):
    code, _, err = run(generate(tiny_sgd, tmp_path / "out", "--backend", "nope:x"), capsys)
    # the flag and the registry's message, before SGD is read
    assert code == 2
    assert error_line(err).startswith("error: --backend: Unknown backend spec 'nope:x'")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--num", "0"], "argument --num: must be >= 1, got 0"),
        (["--max-files", "0"], "argument --max-files: must be >= 1, got 0"),
        (["--max-files", "-2"], "argument --max-files: must be >= 1, got -2"),
        (["--seed", "-1"], "argument --seed: must be >= 0, got -1"),
        (["--complex-share", "1.5"], "argument --complex-share: must be in [0, 1], got 1.5"),
        (["--complex-share", "nan"], "argument --complex-share: must be a finite number"),
    ],
)
def test_numeric_flags_checked_when_parsed(tiny_sgd, tmp_path, capsys, flags, message):
    out = tmp_path / "out"
    code, _, err = run(generate(tiny_sgd, out, *flags), capsys)
    assert code == 2 and f"error: {message}" in err.strip().splitlines()[-1]
    assert "Traceback" not in err and not out.exists()


def test_json_report_alone_on_stdout(tiny_sgd, tmp_path, capsys):
    flags = ["--num", "2", "--complex-share", "0", "--json"]
    code, out, err = run(generate(tiny_sgd, tmp_path / "out", *flags), capsys)
    # stdout is the run report; the summary line is on stderr
    assert code == 0 and json.loads(out)["generated"] == 2
    assert "wrote 2 dialogues" in err
