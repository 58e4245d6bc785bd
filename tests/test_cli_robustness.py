"""Bad and edge input over the command line: a clear one-line error or a correct result.

Each case feeds what a hostile-but-realistic user typed and asserts the outcome: exit status
2 with one ``error:`` line naming the file, field or flag (never a traceback), inputs
byte-identical afterwards, or the correct result where the input was in fact fine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mads_bench.cli import main
from tests.cli_helpers import error_line, run

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A `simulate --out DIR` folder with generated scenarios beside the trajectories."""
    out = tmp_path_factory.mktemp("run")
    status = main(
        ["simulate", "--domain", "mock", "--num-scenarios", "4", "--out", str(out), "--no-progress"]
    )
    assert status == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["scenarios.jsonl", "trajectories.jsonl", "trajectories.manifest.json"]
    return out


@pytest.fixture
def trajectories(run_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "t.jsonl"
    copy.write_bytes((run_dir / "trajectories.jsonl").read_bytes())
    return copy


def _validate(trajectories: Path, accepted: Path, rejected: Path, *extra) -> list:
    return [
        "validate",
        "--trajectories",
        trajectories,
        "--out-accepted",
        accepted,
        "--out-rejected",
        rejected,
        "--no-progress",
        *extra,
    ]


# --- outputs never destroy inputs -------------------------------------------------------


def test_validate_refuses_an_output_that_is_its_input(trajectories, tmp_path, capsys):
    before = trajectories.read_bytes()
    status, _, err = run(_validate(trajectories, trajectories, tmp_path / "r.jsonl"), capsys)
    # refused before anything is opened: the input keeps every byte
    assert status == 2 and "--out-accepted" in err and "is also the input" in err
    assert trajectories.read_bytes() == before


def test_validate_refuses_one_path_for_both_outputs(trajectories, tmp_path, capsys):
    same = tmp_path / "both.jsonl"
    status, _, err = run(_validate(trajectories, same, same), capsys)
    assert status == 2 and "--out-rejected and --out-accepted are the same path" in err
    assert not same.exists()


def test_validate_refuses_an_output_inside_its_input_folder(run_dir, capsys):
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    argv = _validate(run_dir, run_dir / "accepted.jsonl", run_dir.parent / "r.jsonl")
    status, _, err = run(argv, capsys)
    # the next run would read accepted.jsonl as input
    assert status == 2 and "is in the input folder" in err
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before


def test_build_dataset_refuses_an_output_folder_holding_its_input(trajectories, capsys):
    status, _, err = run(
        ["build-dataset", "--trajectories", trajectories, "--out", trajectories.parent], capsys
    )
    assert status == 2 and "holds the input --trajectories" in err


def test_simulate_refuses_to_append_to_its_scenario_file(run_dir, tmp_path, capsys):
    scenarios = tmp_path / "s.jsonl"
    scenarios.write_bytes((run_dir / "scenarios.jsonl").read_bytes())
    before = scenarios.read_bytes()
    argv = ["simulate", "--scenarios", scenarios, "--out", scenarios, "--resume", "--no-progress"]
    status, _, err = run(argv, capsys)
    assert status == 2 and "--out" in err and scenarios.read_bytes() == before


# --- documented flows: a simulate folder feeds validate and build-dataset -----------------


def test_a_simulate_folder_feeds_validate_and_build_dataset(run_dir, tmp_path, capsys):
    accepted, rejected = tmp_path / "a.jsonl", tmp_path / "r.jsonl"
    status, out, _ = run(_validate(run_dir, accepted, rejected), capsys)
    # the four trajectories are read, not the scenario file beside them
    assert status == 0 and "4 validated" in out
    status, out, _ = run(
        ["build-dataset", "--trajectories", run_dir, "--out", tmp_path / "ds"]
        + ["--include-unvalidated", "--held-out-domain", "none"],
        capsys,
    )
    assert status == 0 and "4 trajectories read from 1 file(s)" in out


def test_duplicate_ids_in_the_input_are_reported_as_duplicates(trajectories, tmp_path, capsys):
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_bytes(trajectories.read_bytes() * 2)
    status, out, _ = run(_validate(doubled, tmp_path / "a.jsonl", tmp_path / "r.jsonl"), capsys)
    assert status == 0
    assert "4 validated (0 already in the outputs, 4 duplicate ids skipped)" in out


# --- a silent test-set leak ---------------------------------------------------------------


@pytest.mark.parametrize("domain", ["home_service", "mock_typo"])
def test_a_held_out_domain_that_is_not_in_the_data_is_refused(
    trajectories, tmp_path, domain, capsys
):
    argv = ["build-dataset", "--trajectories", trajectories, "--out", tmp_path / "ds"]
    argv += ["--include-unvalidated", "--held-out-domain", domain]
    status, _, err = run(argv, capsys)
    assert status == 2 and f"--held-out-domain {domain}: no used trajectory" in err
    assert "domains in the data: mock" in err and not (tmp_path / "ds").exists()


# --- numbers out of range stop at parse time -------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["simulate", "--domain", "mock", "--out", "x.jsonl", "--max-turns", "0"], "--max-turns"),
        (["simulate", "--domain", "mock", "--out", "x.jsonl", "--max-turns", "-3"], "--max-turns"),
        (["simulate", "--domain", "mock", "--out", "x.jsonl", "-k", "0"], "--num-conv"),
        (["simulate", "--num-scenarios", "4", "--out", "x", "--mix", "normal=nan"], "--mix"),
        (["simulate", "--num-scenarios", "4", "--out", "x", "--mix", "normal=-1"], "--mix"),
        (["scenarios", "generate", "--domain", "mock", "--num", "0"], "--num"),
        (["sage", "bench", "--out", "x", "--n", "0"], "--n"),
        (["sage", "bench", "--out", "x", "--inject-rate", "nan"], "--inject-rate"),
        (["sage", "bench", "--out", "x", "--inject-rate", "-0.1"], "--inject-rate"),
        (["eval", "l1", "--predictions", "p.jsonl", "--limit", "-1"], "--limit"),
        (["eval", "l2", "--predictions", "p.jsonl", "--max-edit-distance", "-1"], "--max-edit"),
        (["build-dataset", "--trajectories", "t", "--out", "o", "--test-size", "2"], "--test-size"),
        (
            ["validate", "--trajectories", "t", "--out-accepted", "a", "--out-rejected", "r"]
            + ["--chunk-size", "0"],
            "--chunk-size",
        ),  # fmt: skip
    ],
)
def test_out_of_range_numbers_are_usage_errors(argv, flag, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"argument {flag}" in err and "Traceback" not in err


def test_the_default_mix_gives_a_small_run_an_impossible_scenario(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["simulate", "--num-scenarios", "6", "--out", out, "--no-progress"]
    argv += ["--max-turns", "1"]
    assert run(argv, capsys)[0] == 0
    complexities = [json.loads(line)["complexity"] for line in open(out / "scenarios.jsonl")]
    # six scenarios over six domains, stratified over the run: 2 normal, 3 unhappy, 1 impossible
    assert sorted(complexities) == ["impossible"] + ["normal"] * 2 + ["unhappy"] * 3


# --- bad files and specs: one line, not a traceback -------------------------------------------


def test_a_garbage_line_inside_a_resume_file_is_refused_and_kept(tmp_path, capsys):
    trajectories = tmp_path / "t.jsonl"
    argv = ["simulate", "--domain", "mock", "--out", trajectories, "--no-progress"]
    assert run(argv, capsys)[0] == 0
    lines = trajectories.read_text().splitlines(keepends=True)
    lines.insert(1, "this is not json\n")
    trajectories.write_text("".join(lines))
    before = trajectories.read_bytes()
    status, _, err = run([*argv, "--resume"], capsys)
    # not the last line, so not a torn write: the file is refused, and nothing is cut
    assert status == 2 and f"{trajectories}:2: not a trajectory" in err
    assert trajectories.read_bytes() == before


def test_duplicate_scenario_ids_are_refused(run_dir, tmp_path, capsys):
    scenarios = tmp_path / "dup.jsonl"
    first = (run_dir / "scenarios.jsonl").read_text().splitlines()[0]
    scenarios.write_text(f"{first}\n{first}\n")
    status, _, err = run(["scenarios", "check", scenarios], capsys)
    assert status == 2 and "dup.jsonl: [1].id: duplicate" in err and "(first at [0])" in err
    argv = ["simulate", "--scenarios", scenarios, "--out", tmp_path / "t.jsonl", "--no-progress"]
    assert run(argv, capsys)[0] == 2


@pytest.mark.parametrize("spec", ["openai:no-url", "nonsense:x", "openai:m@http://h?timeout=0"])
def test_a_malformed_backend_spec_names_the_flag(spec, tmp_path, capsys):
    argv = ["simulate", "--domain", "mock", "--out", tmp_path / "t.jsonl", "--assistant", spec]
    status, _, err = run(argv, capsys)
    assert status == 2 and f"error: --assistant {spec}" in err
    assert not (tmp_path / "t.jsonl").exists()


def test_an_unwritable_output_names_the_path(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / "t.jsonl"  # a folder that is a file
    argv = ["simulate", "--domain", "mock", "--out", out, "--no-progress"]
    status, _, err = run(argv, capsys)
    assert status == 2 and str(blocker) in err


def _predictions(tmp_path: Path, **row) -> Path:
    base = {"prediction": '<action type="say">hi</action>', "gold_action_type": "say"}
    base |= {"gold_say": "hi", "scenario_id": "s1", "turn_index": 0, "step_index": 0}
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(base | row) + "\n")
    return path


@pytest.mark.parametrize(
    ("row", "field"),
    [({"turn_index": "0"}, "turn_index"), ({"domain": ["a", "b"]}, "domain")],
)
def test_eval_rows_of_the_wrong_type_name_line_and_field(tmp_path, row, field, capsys):
    path = _predictions(tmp_path, **row)
    status, _, err = run(["eval", "l2", "--predictions", path], capsys)
    assert status == 2 and f"p.jsonl:1: {field}:" in err


def test_eval_of_an_empty_file_is_an_error_not_null_metrics(tmp_path, capsys):
    empty = tmp_path / "p.jsonl"
    empty.write_text("")
    status, out, err = run(["eval", "l1", "--predictions", empty, "--json"], capsys)
    assert status == 2 and "holds no prediction rows" in err and out == ""


def test_eval_refuses_a_report_over_its_predictions(tmp_path, capsys):
    path = _predictions(tmp_path)
    before = path.read_bytes()
    status, _, err = run(["eval", "l2", "--predictions", path, "--out", path], capsys)
    assert status == 2 and path.read_bytes() == before


# --- JSON output stays JSON ---------------------------------------------------------------------


def test_json_output_is_json_even_with_wandb_offline(tmp_path):
    path = _predictions(tmp_path)
    env = os.environ | {"WANDB_MODE": "offline", "HF_HUB_OFFLINE": "1"}
    # a fresh process: transformers prints its W&B banner to stdout when the encoder loads it
    argv = ["eval", "l1", "--predictions", str(path), "--similarity-model", "minilm", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "mads_bench", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["overall"]["n_steps"] == 1
    assert "WANDB offline mode" in done.stderr  # printed, but not where the JSON goes


# --- unexpected failures: one line by default, the traceback behind --debug ----------------------


def test_an_unexpected_error_is_one_line_and_debug_shows_it(monkeypatch, capsys):
    from mads_bench.cli import info

    def broken(_):
        raise KeyError("boom")

    monkeypatch.setattr(info, "collect", broken)
    assert main(["info"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: unexpected KeyError") and "--debug" in err
    with pytest.raises(KeyError):
        main(["--debug", "info"])


def test_a_write_past_the_file_size_limit_names_the_output(tmp_path):
    resource = pytest.importorskip("resource")  # POSIX only

    def one_kib_files() -> None:  # the OS then fails writes with EFBIG, naming no file
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    out = tmp_path / "run"
    argv = ["simulate", "--domain", "mock", "--num-scenarios", "4", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "mads_bench", *argv, "--no-progress"],
        capture_output=True,
        text=True,
        env=os.environ | {"HF_HUB_OFFLINE": "1"},
        cwd=REPO,
        preexec_fn=one_kib_files,
    )
    # one line that says which output could not be written, not a bare "File too large"
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr.strip().splitlines()[-1] == f"error: File too large while writing --out {out}"
    )


def test_a_backend_that_never_answers_stops_the_run_resumably(tmp_path, capsys):
    import socket

    with socket.socket() as probe:  # a port with nothing listening: every request fails
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = f"openai:m@http://127.0.0.1:{port}/v1?max_retries=0&timeout=2"
    out = tmp_path / "t.jsonl"
    argv = ["simulate", "--num-scenarios", "8", "--domain", "mock", "--out", out]
    argv += ["--assistant", spec, "--max-failures", "2", "--no-progress"]
    status, out_text, err = run(argv, capsys)
    # two failed conversations in a row end the run instead of trying all eight
    assert status == 1 and err.count("connection error") == 2
    assert "stopped after 2 failed conversations in a row" in err and "--resume" in err
    assert "0 conversations written" in out_text
    assert err.splitlines()[-1] == (
        f"error: partial run: 8 of 8 planned conversations are not in {out} (2 failed); "
        "rerun with --resume"
    )


def test_an_empty_model_folder_is_named_before_anything_runs(tmp_path, capsys):
    empty = tmp_path / "model"
    empty.mkdir()
    argv = ["eval", "online", "--domain", "mock", "--assistant", f"transformers:{empty}"]
    status, _, err = run([*argv, "--out", tmp_path / "o", "--no-progress"], capsys)
    # before: "error: unexpected ..." from deep inside the model loader
    assert status == 2 and f"Model folder '{empty}' holds no config.json" in error_line(err)


def test_a_huge_scenario_count_is_refused_when_parsed(tmp_path, capsys):
    # before: a MemoryError after minutes of generation
    argv = ["simulate", "--num-scenarios", str(10**12), "--out", tmp_path / "o"]
    status, _, err = run(argv, capsys)
    assert status == 2 and "--num-scenarios: must be <= 100,000" in err
