"""Running a model over a split: predictions file, resume, ReAct restyling, eval CLI."""

import json

import pytest

from evaluators.predict import predict_steps, row_key
from mads_bench.catalog import load_domain
from mads_bench.cli import main
from mads_bench.datasets import build_dataset, load_mads_dataset, save_dataset
from simulation.backends import FakeBackend
from simulation.environment import simulate
from tests.recipes.wandb_offline import read_offline_run

SAY = '<think>I answer.</think>\n<action type="say">Done.</action>'


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory):
    # scripted conversations of the mock domain, split by scenario
    trajectories = [
        simulate(s, seed=seed) for s in load_domain("mock").scenarios for seed in (0, 1)
    ]
    built = build_dataset(
        trajectories, include_unvalidated=True, held_out_domains=[], test_size=0.5
    )
    return save_dataset(built, tmp_path_factory.mktemp("ds") / "mock")


def test_predictions_carry_gold_and_resume(dataset_dir, tmp_path):
    rows = load_mads_dataset(str(dataset_dir), "grpo", split="test")
    out = tmp_path / "pred.jsonl"
    backend = FakeBackend(replies=lambda conversation: SAY)
    # first a partial run, then a resumed full run: nothing duplicated, nothing dropped
    first = predict_steps(rows.select(range(3)), backend, out, batch_size=2, progress=False)
    assert first == {"written": 3, "skipped": 0}
    with out.open("a") as handle:
        handle.write('{"torn": ')  # an interrupted write
    second = predict_steps(rows, backend, out, batch_size=2, progress=False)
    assert second == {"written": len(rows) - 3, "skipped": 3}
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(row_key(r) for r in written) == sorted(row_key(r) for r in rows)
    tool_rows = [r for r in written if r["gold_action_type"] == "tool"]
    # required parameters come from the domain's tool specs
    spec = load_domain("mock").tools[tool_rows[0]["gold_tool_name"]]
    assert tool_rows[0]["required_params"] == spec.required
    assert all(r["prediction"] == SAY and r["style"] == "pre_act" for r in written)


def test_sampled_predictions_draw_a_seed_per_batch_and_record_the_temperature(
    dataset_dir, tmp_path
):
    from mads_bench.manifest import ManifestMismatchError

    rows = load_mads_dataset(str(dataset_dir), "grpo", split="test").select(range(4))
    greedy = FakeBackend(replies=lambda conversation: SAY)
    predict_steps(rows, greedy, tmp_path / "greedy.jsonl", batch_size=2, seed=3, progress=False)
    assert [s["temperature"] for s in greedy.settings] == [0.0, 0.0]
    assert [s["seed"] for s in greedy.settings] == [3, 3]

    def sample(seed: int, name: str) -> list[int]:
        backend = FakeBackend(replies=lambda conversation: SAY)
        out = tmp_path / f"{name}.jsonl"
        predict_steps(rows, backend, out, batch_size=2, temperature=0.7, seed=seed, progress=False)
        assert [s["temperature"] for s in backend.settings] == [0.7, 0.7]
        return [s["seed"] for s in backend.settings]

    first = sample(0, "sampled_0")
    assert first[0] != first[1]  # the batches do not repeat each other's draws
    assert sample(0, "again") == first  # a seed fixes the draws
    assert sample(1, "sampled_1") != first
    # a sampled file is not continued greedily, nor at another temperature
    for temperature in (0.0, 1.0):
        with pytest.raises(ManifestMismatchError):
            predict_steps(rows, greedy, tmp_path / "sampled_0.jsonl", temperature=temperature,
                          progress=False)  # fmt: skip
    with pytest.raises(ValueError, match="temperature"):
        predict_steps(rows, greedy, tmp_path / "bad.jsonl", temperature=-1.0, progress=False)


def test_react_prompting_drops_the_plan(dataset_dir, tmp_path):
    rows = load_mads_dataset(str(dataset_dir), "grpo", split="test").select(range(2))
    backend = FakeBackend(replies=lambda conversation: SAY)
    predict_steps(rows, backend, tmp_path / "p.jsonl", style="react", progress=False)
    systems = [conversation[0]["content"] for conversation in backend.calls]
    assert systems and all("<plan>" not in s and "<think>" in s for s in systems)


def test_eval_cli_runs_and_scores(dataset_dir, tmp_path, capsys, monkeypatch):
    # an oracle that answers every prompt with its gold step (from the sft config)
    sft = load_mads_dataset(str(dataset_dir), "sft", split="test")
    gold = {json.dumps(r["prompt"]): r["completion"][0]["content"] for r in sft}
    oracle = FakeBackend(replies=lambda conversation: gold[json.dumps(conversation)])
    monkeypatch.setattr("simulation.backends.get_backend", lambda spec: oracle)
    pred = tmp_path / "pred.jsonl"
    args = ["--model", "fake:", "--dataset", str(dataset_dir), "--predictions", str(pred)]
    assert main(["eval", "l1", *args, "--similarity-model", "none", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["overall"]
    assert report["action_recall_macro"] == 1.0 and report["param_exact_match"] == 1.0
    assert report["n_steps"] == len(sft)
    assert main(["eval", "l2", "--predictions", str(pred), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["overall"]["success_rate"] == 1.0
    # an always-say model fails every conversation that opens with a tool step
    always_say = FakeBackend(replies=lambda conversation: SAY)
    monkeypatch.setattr("simulation.backends.get_backend", lambda spec: always_say)
    pred2 = tmp_path / "say.jsonl"
    args = ["--model", "fake:", "--dataset", str(dataset_dir), "--predictions", str(pred2)]
    assert main(["eval", "l1", *args, "--similarity-model", "none", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["overall"]
    assert report["action_recall_say"] == 1.0 and report["action_recall_tool"] == 0.0
    assert main(["eval", "l2", "--predictions", str(pred2), "--json"]) == 0
    firsts = {}
    for row in sorted(map(json.loads, pred2.read_text().splitlines()), key=row_key):
        firsts.setdefault(row["conversation_id"], row["gold_action_type"])
    opens_with_say = sum(kind == "say" for kind in firsts.values()) / len(firsts)
    l2 = json.loads(capsys.readouterr().out)["overall"]
    assert l2["success_rate"] <= opens_with_say
    # --model without --dataset is a usage error
    assert main(["eval", "l1", "--model", "fake:", "--predictions", str(pred)]) == 2
    # sampled steps: the temperature reaches the backend; a negative one is refused
    pred3 = tmp_path / "sampled.jsonl"
    args = ["--model", "fake:", "--dataset", str(dataset_dir), "--predictions", str(pred3)]
    sampled = ["--temperature", "0.7", "--seed", "2", "--similarity-model", "none", "--json"]
    assert main(["eval", "l1", *args, *sampled]) == 0
    assert {s["temperature"] for s in always_say.settings[-2:]} == {0.7}
    capsys.readouterr()
    assert main(["eval", "l1", *args, "--temperature", "-1"]) == 2
    assert "--temperature" in capsys.readouterr().err


def test_eval_logs_the_report_to_wandb_offline(dataset_dir, tmp_path, capsys, monkeypatch):
    # W&B runs offline here (no network); the run's summary holds the report's figures
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    import wandb

    wandb.teardown()  # forget settings an earlier test of this process may have fixed
    backend = FakeBackend(replies=lambda conversation: SAY)
    rows = load_mads_dataset(str(dataset_dir), "grpo", split="test")
    pred = tmp_path / "pred.jsonl"
    predict_steps(rows, backend, pred, progress=False)
    assert main(["eval", "l2", "--predictions", str(pred), "--wandb-project", "mads-test"]) == 0
    # teardown waits for the wandb service to write everything; after finish() alone the run
    # file was once read with an empty history under -n 2 (a recipe's run is a subprocess,
    # whose exit does the same)
    wandb.teardown()
    [logged] = read_offline_run(tmp_path).history
    assert logged["l2/overall/n_conversations"] == len({row_key(r)[0] for r in rows})
    assert "l2/by_domain/mock/success_rate" in logged


def test_constrained_predictions_are_not_mixed_with_free_ones(dataset_dir, tmp_path):
    from mads_bench.manifest import ManifestMismatchError, read_manifest

    rows = load_mads_dataset(str(dataset_dir), "grpo", split="test").select(range(2))
    free = FakeBackend(replies=lambda conversation: SAY)
    constrained = FakeBackend(replies=lambda conversation: SAY)
    constrained.constrain_tool_names = True  # what `transformers:` backends carry
    out = tmp_path / "constrained.jsonl"
    predict_steps(rows.select(range(1)), constrained, out, progress=False)
    assert read_manifest(out)["settings"]["constrain_tool_names"] is True
    with pytest.raises(ManifestMismatchError):  # a free decoder does not continue the file
        predict_steps(rows, free, out, progress=False)
    predict_steps(rows, free, tmp_path / "free.jsonl", progress=False)
    assert "constrain_tool_names" not in read_manifest(tmp_path / "free.jsonl")["settings"]


def test_eval_cli_constrains_tool_names_of_transformers_models_only(
    dataset_dir, tmp_path, capsys, monkeypatch
):
    built = []

    def backend(spec, **options):
        built.append(options)
        return FakeBackend(replies=lambda conversation: SAY)

    monkeypatch.setattr("simulation.backends.get_backend", backend)
    pred = tmp_path / "pred.jsonl"
    args = ["--dataset", str(dataset_dir), "--predictions", str(pred), "--constrain-tool-names"]
    assert main(["eval", "l2", "--model", "transformers:tiny-lm", *args, "--json"]) == 0
    assert built == [{"constrain_tool_names": True}]
    capsys.readouterr()
    assert main(["eval", "l2", "--model", "fake:", *args]) == 2
    assert "--constrain-tool-names works with transformers:" in capsys.readouterr().err


def test_a_set_precision_is_recorded_and_bf16_where_native_files_keep_their_manifest(
    dataset_dir, tmp_path
):
    from mads_bench.manifest import ManifestMismatchError, read_manifest

    rows = load_mads_dataset(str(dataset_dir), "grpo", split="test").select(range(2))
    auto = FakeBackend(replies=lambda conversation: SAY)
    auto.dtype = "auto"
    predict_steps(rows.select(range(1)), auto, tmp_path / "auto.jsonl", progress=False)
    assert "dtype" not in read_manifest(tmp_path / "auto.jsonl")["settings"]
    exact = FakeBackend(replies=lambda conversation: SAY)
    exact.dtype = "float32"
    with pytest.raises(ManifestMismatchError):  # bf16 steps are not continued in float32
        predict_steps(rows, exact, tmp_path / "auto.jsonl", progress=False)
    predict_steps(rows, exact, tmp_path / "f32.jsonl", progress=False)
    assert read_manifest(tmp_path / "f32.jsonl")["settings"]["dtype"] == "float32"


def test_drafted_predictions_are_the_undrafted_ones_and_reach_the_decoder(
    dataset_dir, tmp_path, tiny_lm_path, monkeypatch
):
    from mads_bench.decoding import DecodeEngine
    from simulation.backends import get_backend

    rows = load_mads_dataset(str(dataset_dir), "grpo", split="test").select(range(4))
    settings = {"batch_size": 2, "max_new_tokens": 12, "progress": False}
    drafted = []
    submit = DecodeEngine.submit

    def spy(self, prompt, **options):
        drafted.append(list(options.get("draft", ())))
        return submit(self, prompt, **options)

    monkeypatch.setattr(DecodeEngine, "submit", spy)

    def run(out, drafts=None):
        backend = get_backend("transformers:tiny-lm", dtype="float32")
        predict_steps(rows, backend, tmp_path / out, drafts=drafts, **settings)
        lines = (tmp_path / out).read_text().splitlines()
        return [json.loads(line)["prediction"] for line in lines], backend

    plain, backend = run("plain.jsonl")
    assert drafted == [[]] * len(rows)
    drafted.clear()
    again, backend = run("drafted.jsonl", drafts=tmp_path / "plain.jsonl")
    tokenize = backend._tokenizer
    assert again == plain  # (the engine's own tests check that right drafts save the steps)
    assert sorted(drafted) == sorted(tokenize(p, add_special_tokens=False).input_ids for p in plain)
    wrong = tmp_path / "wrong.jsonl"  # every draft wrong from its first character
    wrong.write_text("".join(
        json.dumps({**json.loads(line), "prediction": "~" + json.loads(line)["prediction"]}) + "\n"
        for line in (tmp_path / "plain.jsonl").read_text().splitlines()
    ))  # fmt: skip
    misled, backend = run("misled.jsonl", drafts=wrong)
    assert misled == plain and backend.decode_engine.accepted == 0
    with pytest.raises(FileNotFoundError):
        predict_steps(rows, FakeBackend(replies=lambda c: SAY), tmp_path / "x.jsonl",
                      drafts=tmp_path / "missing.jsonl", progress=False)  # fmt: skip


def test_eval_cli_passes_drafts_and_refuses_a_missing_or_overwritten_one(
    dataset_dir, tmp_path, capsys, monkeypatch
):
    drafted = []

    def fake_predict(rows, backend, out, **options):
        drafted.append(options["drafts"])
        out.write_text("")
        return {"written": 0, "skipped": 0}

    monkeypatch.setattr("evaluators.predict.predict_steps", fake_predict)
    monkeypatch.setattr(
        "simulation.backends.get_backend", lambda spec: FakeBackend(replies=lambda c: SAY)
    )
    drafts = tmp_path / "sft.jsonl"
    args = ["eval", "l2", "--model", "fake:", "--dataset", str(dataset_dir), "--json"]
    pred = ["--predictions", str(tmp_path / "p.jsonl")]
    assert main([*args, *pred, "--drafts", str(drafts)]) == 2  # not there
    assert f"--drafts: {drafts}: no such file" in capsys.readouterr().err
    drafts.write_text("")
    assert main([*args, "--predictions", str(drafts), "--drafts", str(drafts)]) == 2
    assert "--drafts" in capsys.readouterr().err  # the output would overwrite its input
    main([*args, *pred, "--drafts", str(drafts)])  # (scoring the fake's empty file fails)
    assert drafted == [drafts]
