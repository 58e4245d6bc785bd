"""Run manifests: a resumed output is continued only under the settings that wrote it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.predict import predict_steps
from mads_bench.catalog import load_domain
from mads_bench.cli import main
from mads_bench.manifest import (
    ManifestMismatchError,
    check_manifest,
    manifest_path,
    model_fingerprint,
    start_output,
    write_manifest,
)
from simulation.agents.prompts import assistant_system_prompt
from simulation.backends import FakeBackend
from simulation.simulate_run import simulate_run
from simulation.validator.aggregate import NO_EMBEDDINGS
from simulation.validator.validate_run import validate_run
from tests.cli_helpers import error_line, run

SIMULATE = ["simulate", "--domain", "mock", "--no-progress"]


def test_a_changed_setting_is_named_and_a_missing_manifest_refused(tmp_path):
    out = tmp_path / "t.jsonl"
    check_manifest(out, {"seed": 0})  # nothing there yet: nothing to contradict
    out.write_text("{}\n")
    with pytest.raises(ManifestMismatchError, match="has no manifest"):
        check_manifest(out, {"seed": 0})
    write_manifest(out, {"seed": 0, "assistant": "scripted"})
    check_manifest(out, {"seed": 0, "assistant": "scripted"})
    with pytest.raises(ManifestMismatchError, match="with assistant scripted, not fake:x"):
        check_manifest(out, {"seed": 0, "assistant": "fake:x"})
    with pytest.raises(ManifestMismatchError, match="with seed 0, which this run does not set"):
        check_manifest(out, {"assistant": "scripted"})
    manifest_path(out).write_text("[1, 2]")
    with pytest.raises(ManifestMismatchError, match="not a run manifest"):
        check_manifest(out, {"seed": 0})


def test_a_resumed_output_keeps_the_manifest_of_the_run_that_started_it(tmp_path):
    out = tmp_path / "t.jsonl"
    start_output(out, {"seed": 0}, resume=False)
    first = manifest_path(out).read_text()
    out.write_text("{}\n")
    start_output(out, {"seed": 0}, resume=True)
    assert manifest_path(out).read_text() == first
    # an empty output is started afresh: a stale manifest is replaced
    out.write_text("")
    start_output(out, {"seed": 1}, resume=True)
    assert json.loads(manifest_path(out).read_text())["settings"] == {"seed": 1}


def test_the_fingerprint_tells_retrained_weights_from_a_copy(tmp_path):
    model = tmp_path / "adapter"
    model.mkdir()
    (model / "adapter_config.json").write_text('{"r": 8}')
    (model / "adapter_model.safetensors").write_bytes(bytes(range(256)) * 64)
    before = model_fingerprint(model)
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in model.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    assert model_fingerprint(copy) == before
    (model / "adapter_model.safetensors").write_bytes(bytes(reversed(range(256))) * 64)
    assert model_fingerprint(model) != before  # same size, new weights


def test_simulate_resume_refuses_another_assistant_or_seed_and_keeps_the_file(tmp_path, capsys):
    out = tmp_path / "run"
    assert run([*SIMULATE, "--out", out], capsys)[0] == 0
    stored = (out / "trajectories.jsonl").read_bytes()
    for flag, value, named in (
        ("--assistant", "fake:other", "assistant scripted, not fake:other"),
        ("--seed", "1", "seed 0, not 1"),
        ("--max-turns", "3", "limits"),
        ("--style", "react", "style pre_act, not react"),
    ):
        status, _, err = run([*SIMULATE, "--out", out, "--resume", flag, value], capsys)
        assert status == 2 and named in error_line(err), (flag, err)
        assert (out / "trajectories.jsonl").read_bytes() == stored
    # other scenarios are another run too
    status, _, err = run(["simulate", "--domain", "banking", "--out", out, "--resume"], capsys)
    assert status == 2 and "with scenarios" in error_line(err)
    # the same settings with more repetitions continue the run
    status, out_text, _ = run([*SIMULATE, "--out", out, "--resume", "-k", "2"], capsys)
    assert status == 0 and "3 already there" in out_text


def test_eval_online_resume_under_another_assistant_reports_nothing(tmp_path, capsys):
    out = tmp_path / "online"
    argv = ["eval", "online", "--domain", "mock", "--out", out, "--no-progress", "--json"]
    assert run([*argv, "--assistant", "scripted"], capsys)[0] == 0
    report = (out / "report.json").read_bytes()
    # before manifests: nothing ran, and a report named tiny-lm with success 1.000 at rc 0
    status, _, err = run([*argv, "--assistant", "transformers:tiny-lm", "--resume"], capsys)
    assert status == 2
    assert "assistant scripted, not transformers:tiny-lm" in error_line(err)
    assert (out / "report.json").read_bytes() == report


def test_predictions_refuse_rows_another_model_wrote(tmp_path):
    system = assistant_system_prompt(load_domain("mock"), load_domain("mock").scenarios[0])
    prompt = [{"role": "system", "content": system}, {"role": "user", "content": "hi"}]
    rows = [{"prompt": prompt, "conversation_id": "c", "turn_index": 0, "step_index": 0,
             "domain": "mock", "gold_action_type": "say"}]  # fmt: skip
    out = tmp_path / "predictions.jsonl"
    assert predict_steps(rows, FakeBackend("fake:a"), out, progress=False)["written"] == 1
    assert predict_steps(rows, FakeBackend("fake:a"), out, progress=False)["skipped"] == 1
    with pytest.raises(ManifestMismatchError, match="model fake:a, not fake:b"):
        predict_steps(rows, FakeBackend("fake:b"), out, progress=False)
    with pytest.raises(ManifestMismatchError, match="max_new_tokens 256, not 16"):
        predict_steps(rows, FakeBackend("fake:a"), out, max_new_tokens=16, progress=False)


def test_validate_resume_refuses_another_judge_or_embedder(tmp_path):
    trajectories = tmp_path / "t.jsonl"
    simulate_run(load_domain("mock").scenarios[:1], trajectories, progress=False)
    outputs = [trajectories, tmp_path / "a.jsonl", tmp_path / "r.jsonl"]
    validate_run([outputs[0]], *outputs[1:], progress=False, embedder=NO_EMBEDDINGS)
    with pytest.raises(ManifestMismatchError, match="embeddings none, not minilm"):
        validate_run([outputs[0]], *outputs[1:], progress=False, resume=True)
    with pytest.raises(ManifestMismatchError, match="judge rules, not fake:judge"):
        validate_run([outputs[0]], *outputs[1:], progress=False, resume=True,
                     embedder=NO_EMBEDDINGS, judge=FakeBackend("fake:judge"))  # fmt: skip
    summary = validate_run([outputs[0]], *outputs[1:], progress=False, resume=True,
                           embedder=NO_EMBEDDINGS)  # fmt: skip
    assert summary["already_stored"] == 1


def test_every_resumable_output_records_its_command(tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    assert main([*SIMULATE, "--out", str(out)]) == 0
    manifest = json.loads(Path(manifest_path(out)).read_text())
    assert manifest["command"].startswith("mads-bench simulate --domain mock")
    assert manifest["settings"]["assistant"] == "scripted" and manifest["settings"]["seed"] == 0
