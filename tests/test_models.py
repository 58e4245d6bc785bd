"""Tests for mads_bench.models: the cache, setup idempotency, the resolver and the loaders."""

import dataclasses
import json
import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from mads_bench import models
from mads_bench.cli import describe_error
from mads_bench.cli import main as cli_main
from mads_bench.errors import MadsBenchError
from mads_bench.model_builders import folder_damage, without_bitsandbytes_kernel_warning
from mads_bench.models import (
    MARKER_FILE,
    MODEL_SPECS,
    ModelLoadError,
    ModelNotFoundError,
    ModelSpec,
    build_tiny_lm,
    cache_dir,
    is_installed,
    list_models,
    load_causal_lm,
    load_sentence_encoder,
    load_tokenizer,
    resolve_model,
    setup_models,
)

CHAT = [{"role": "user", "content": "Where is my order A-1001?"}]


@pytest.fixture
def empty_cache(tmp_path, monkeypatch) -> Path:
    """An empty model cache for this test only."""
    monkeypatch.setenv("MADS_BENCH_MODELS", str(tmp_path / "models"))
    return tmp_path / "models"


@pytest.fixture
def fake_spec(empty_cache, monkeypatch) -> dict:
    """Register a model `fake` whose build is instant and counted (can be told to fail)."""
    state = {"builds": 0, "fail": False}

    def build(target: Path, work: Path, progress: bool) -> None:
        state["builds"] += 1
        (target / "weights.bin").write_bytes(b"\0" * 1000)
        if state["fail"]:
            raise RuntimeError("interrupted")

    spec = ModelSpec("fake", "test model", "nowhere", "fake-org/fake-model", 1, build)
    monkeypatch.setitem(MODEL_SPECS, "fake", spec)
    return state


# --------------------------------------------------------------------------- cache and setup


def test_cache_dir_follows_env_var(tmp_path, monkeypatch):
    # the env var wins
    monkeypatch.setenv("MADS_BENCH_MODELS", str(tmp_path / "elsewhere"))
    assert cache_dir() == tmp_path / "elsewhere"
    # the default lives in the user's cache, outside the repository
    monkeypatch.delenv("MADS_BENCH_MODELS")
    assert cache_dir() == Path.home() / ".cache" / "mads-bench" / "models"


def test_setup_of_installed_models_does_no_work(minilm_path, tiny_lm_path, monkeypatch):
    markers = {p: (p / MARKER_FILE).stat().st_mtime_ns for p in (minilm_path, tiny_lm_path)}

    def no_build(*args: object) -> None:
        raise AssertionError("setup rebuilt a model that is installed")

    monkeypatch.setattr(models, "_build_atomically", no_build)
    for name in ("minilm", "tiny-lm"):
        monkeypatch.setitem(
            MODEL_SPECS, name, dataclasses.replace(MODEL_SPECS[name], build=no_build)
        )
    paths = setup_models(["minilm", "tiny-lm"], progress=False)
    # nothing rebuilt (no builder called): same folders, markers untouched
    assert paths == {"minilm": minilm_path, "tiny-lm": tiny_lm_path}
    assert all((p / MARKER_FILE).stat().st_mtime_ns == m for p, m in markers.items())
    marker = json.loads((tiny_lm_path / MARKER_FILE).read_text())
    assert marker["name"] == "tiny-lm" and marker["recipe"] == MODEL_SPECS["tiny-lm"].recipe


def test_setup_redoes_partial_folder_and_cleans_stale_staging(fake_spec, empty_cache):
    # an interrupted run left a folder without marker and a staging folder
    (empty_cache / "fake").mkdir(parents=True)
    (empty_cache / "fake" / "half-written.bin").write_bytes(b"x")
    (empty_cache / ".tmp-fake-deadbeef").mkdir()
    assert not is_installed("fake")

    paths = setup_models(["fake"], progress=False)
    assert paths == {"fake": empty_cache / "fake"}
    assert sorted(p.name for p in paths["fake"].iterdir()) == [MARKER_FILE, "weights.bin"]
    assert not list(empty_cache.glob(".tmp-*")) and not list(empty_cache.glob(".work-*"))
    assert is_installed("fake") and fake_spec["builds"] == 1

    # a second call builds nothing; force rebuilds
    setup_models(["fake"], progress=False)
    assert fake_spec["builds"] == 1
    setup_models(["fake"], force=True, progress=False)
    assert fake_spec["builds"] == 2 and is_installed("fake")


def test_recipe_change_marks_folder_outdated(fake_spec, empty_cache, monkeypatch):
    setup_models(["fake"], progress=False)
    newer = ModelSpec(**{**MODEL_SPECS["fake"].__dict__, "recipe": 2})
    monkeypatch.setitem(MODEL_SPECS, "fake", newer)
    # a folder from an older recipe counts as missing and is rebuilt
    assert not is_installed("fake")
    setup_models(["fake"], progress=False)
    assert fake_spec["builds"] == 2 and is_installed("fake")


def test_failed_build_leaves_no_folder(fake_spec, empty_cache):
    fake_spec["fail"] = True
    with pytest.raises(RuntimeError, match="interrupted"):
        setup_models(["fake"], progress=False)
    # neither the final folder nor staging/work folders survive
    assert not (empty_cache / "fake").exists()
    assert not list(empty_cache.glob(".tmp-*")) and not list(empty_cache.glob(".work-*"))


def test_setup_rejects_unknown_name(empty_cache):
    # the project's error (one line, exit 2 in the CLI), listing the known names
    with pytest.raises(
        ModelNotFoundError, match="known: minilm, minilm-static, mpnet, smollm2-135m, tiny-lm"
    ):
        setup_models(["no-such-model"], progress=False)


def test_marker_records_file_sizes(fake_spec, empty_cache):
    setup_models(["fake"], progress=False)
    marker = json.loads((empty_cache / "fake" / MARKER_FILE).read_text())
    # every file the build wrote, by size; the marker itself is not listed
    assert marker["files"] == {"weights.bin": 1000}


def test_setup_rebuilds_damaged_folder_and_says_so(fake_spec, empty_cache, capsys):
    setup_models(["fake"], progress=False)
    (empty_cache / "fake" / "weights.bin").write_bytes(b"\0" * 500)  # cut short after setup
    # the marker alone no longer makes it installed; the resolver names the file
    assert not is_installed("fake")
    with pytest.raises(ModelLoadError) as error:
        resolve_model("fake")
    assert str(error.value) == (
        f"Model 'fake' in {empty_cache / 'fake'} is damaged: weights.bin: 500 bytes, 1000 when "
        "the folder was built. Run `mads-bench models setup fake` to rebuild it."
    )
    # setup rebuilds it, and says why even without progress output
    setup_models(["fake"], progress=False)
    assert fake_spec["builds"] == 2 and is_installed("fake")
    assert capsys.readouterr().err == (
        f"[mads-bench models] fake: {empty_cache / 'fake'} is damaged, rebuilding it: "
        "weights.bin: 500 bytes, 1000 when the folder was built\n"
    )
    # a deleted file counts as damage too
    (empty_cache / "fake" / "weights.bin").unlink()
    assert not is_installed("fake")
    assert "weights.bin: missing" in str(pytest.raises(ModelLoadError, resolve_model, "fake").value)


@pytest.fixture
def tiny_lm_copy(tiny_lm_path, empty_cache) -> Path:
    """A copy of `tiny-lm` in this test's cache, its marker as older versions wrote it."""
    folder = empty_cache / "tiny-lm"
    shutil.copytree(tiny_lm_path, folder)
    marker = json.loads((folder / MARKER_FILE).read_text())
    marker.pop("files", None)  # written before sizes were recorded: only format checks apply
    (folder / MARKER_FILE).write_text(json.dumps(marker))
    return folder


def _truncate(path: Path, keep: float = 0.5) -> int:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return len(data)


def test_marker_without_sizes_still_catches_damage(tiny_lm_copy, tiny_lm_path):
    # an intact folder with an old marker is installed: existing caches are not rebuilt
    assert is_installed("tiny-lm") and folder_damage(tiny_lm_copy) is None
    # a weight file cut in half: its safetensors header describes more than the file holds
    size = _truncate(tiny_lm_copy / "model.safetensors")
    assert not is_installed("tiny-lm")
    assert folder_damage(tiny_lm_copy) == (
        f"model.safetensors: truncated ({size // 2} bytes, its header describes {size})"
    )
    # no weight file at all
    (tiny_lm_copy / "model.safetensors").unlink()
    assert folder_damage(tiny_lm_copy).startswith("no weight file (*.safetensors, *.bin")
    # weights intact again, but a config that is not JSON
    shutil.copy(tiny_lm_path / "model.safetensors", tiny_lm_copy)
    (tiny_lm_copy / "config.json").write_text("not json {")
    assert not is_installed("tiny-lm")
    assert folder_damage(tiny_lm_copy) == (
        "config.json: not JSON (Expecting value: line 1 column 1 (char 0))"
    )


def test_list_models(minilm_path, tiny_lm_path):
    rows = {row["name"]: row for row in list_models()}
    assert set(rows) == {"minilm", "minilm-static", "mpnet", "smollm2-135m", "tiny-lm"}
    assert rows["minilm"]["installed"] and rows["minilm"]["path"] == str(minilm_path)
    # all-MiniLM-L6-v2 is ~91 MB; tiny-lm a 13 MB model plus a 3.5 MB tokenizer
    assert 80 < rows["minilm"]["size_mb"] < 100
    assert 10 < rows["tiny-lm"]["size_mb"] < 20


# --------------------------------------------------------------------------- resolver


def test_resolve_known_names_and_local_paths(minilm_path, tiny_lm_path, tmp_path):
    assert resolve_model("minilm") == str(minilm_path)
    assert resolve_model("tiny-lm") == str(tiny_lm_path)
    # an existing path comes back unchanged, relative or not
    (tmp_path / "config.json").write_text("{}")
    assert resolve_model(str(tmp_path)) == str(tmp_path)
    # a folder with no model, adapter or sentence-transformers config is no model at all
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelNotFoundError, match="holds no config.json"):
        resolve_model(str(tmp_path / "empty"))


def test_resolve_missing_known_name_says_how_to_fix(empty_cache):
    with pytest.raises(ModelNotFoundError) as error:
        resolve_model("tiny-lm")
    assert isinstance(error.value, FileNotFoundError)
    assert "mads-bench models setup tiny-lm" in str(error.value)
    assert str(empty_cache) in str(error.value)


def test_resolve_missing_path_and_unknown_hub_id(tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        resolve_model("./no/such/model")
    with pytest.raises(ModelNotFoundError, match="local Hugging Face cache"):
        resolve_model("no-such-org/no-such-model")
    # not a valid Hub id either: still the project's error, not huggingface_hub's
    with pytest.raises(ModelNotFoundError):
        resolve_model("bad id with spaces")


def test_unknown_model_name_lists_known_names(tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ModelNotFoundError) as error:
        resolve_model("nonexistent")
    # one of the project's expected errors, listing what would have worked
    assert isinstance(error.value, MadsBenchError)
    assert (
        "'nonexistent' is neither a known name (minilm, minilm-static, mpnet, smollm2-135m, "
        "tiny-lm)" in str(error.value)
    )


def test_resolve_hub_id_from_local_hf_cache(tmp_path, monkeypatch):
    # lay out the HF cache as huggingface_hub writes it
    repo = tmp_path / "hub" / "models--some-org--some-model"
    snapshot = repo / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    assert Path(resolve_model("some-org/some-model")) == snapshot.resolve()


def test_resolve_hub_id_falls_back_to_known_stand_in(minilm_path, tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2") == str(minilm_path)


def test_resolve_auto_setup_builds_missing_known_model(fake_spec, empty_cache):
    with pytest.raises(ModelNotFoundError):
        resolve_model("fake")
    assert resolve_model("fake", auto_setup=True) == str(empty_cache / "fake")
    # the Hub id it stands in for resolves to it as well
    assert resolve_model("fake-org/fake-model") == str(empty_cache / "fake")
    assert fake_spec["builds"] == 1


# --------------------------------------------------------------------------- loaders


def test_tiny_lm_generates_with_chat_template(tiny_lm_path):
    tokenizer = load_tokenizer("tiny-lm")
    model = load_causal_lm("tiny-lm")
    # the real SmolLM2 tokenizer and its ChatML template
    assert len(tokenizer) == 49152 and tokenizer.eos_token == "<|im_end|>"
    prompt = tokenizer.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    assert "<|im_start|>user\nWhere is my order A-1001?<|im_end|>\n" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")
    # tiny: 2 layers, hidden 64, tied embeddings, float32
    assert model.config.num_hidden_layers == 2 and model.config.hidden_size == 64
    assert model.get_output_embeddings().weight is model.get_input_embeddings().weight
    assert model.dtype == torch.float32
    assert sum(p.numel() for p in model.parameters()) < 4_000_000

    inputs = tokenizer.apply_chat_template(
        CHAT, add_generation_prompt=True, return_tensors="pt", return_dict=True
    )
    output = model.generate(**inputs, max_new_tokens=5, min_new_tokens=5, do_sample=False)
    assert output.shape == (1, inputs["input_ids"].shape[1] + 5)


def test_tiny_lm_weights_are_reproducible(tiny_lm_path):
    rebuilt = build_tiny_lm(load_tokenizer("tiny-lm"), seed=0).state_dict()
    saved = load_causal_lm("tiny-lm").state_dict()
    assert rebuilt.keys() == saved.keys()
    assert all(torch.equal(rebuilt[name], saved[name]) for name in saved)
    # another seed gives other weights
    other = build_tiny_lm(load_tokenizer("tiny-lm"), seed=1).state_dict()
    assert not torch.equal(other["model.embed_tokens.weight"], saved["model.embed_tokens.weight"])


def test_minilm_static_is_minilm_distilled_into_word_pieces(minilm_static_path):
    """One row per MiniLM word piece, centred; texts that share meaning stay closer than
    texts that do not, and encoding needs no attention (a sum of rows)."""
    from safetensors.numpy import load_file

    encoder = load_sentence_encoder("minilm-static")
    assert encoder.get_embedding_dimension() == 384
    rows = next(iter(load_file(next(minilm_static_path.rglob("*.safetensors"))).values()))
    assert rows.shape == (load_tokenizer("minilm").vocab_size, 384)
    assert np.abs(rows.mean(axis=0)).max() < 1e-4  # centred
    cat, kitten, bonds = encoder.encode(
        ["The cat sleeps on the sofa.", "A kitten naps on the couch.", "Bond yields rose."],
        normalize_embeddings=True,
    )
    assert float(cat @ kitten) > float(cat @ bonds) + 0.1


def test_minilm_encodes_384d_and_is_cached(minilm_path):
    encoder = load_sentence_encoder()
    # one object per process, whether named or given by path
    assert load_sentence_encoder("minilm") is encoder
    assert load_sentence_encoder(str(minilm_path)) is encoder
    assert encoder.get_embedding_dimension() == 384
    cat, kitten, bonds = encoder.encode(
        ["The cat sleeps on the sofa.", "A kitten naps on the couch.", "Bond yields rose."],
        normalize_embeddings=True,
    )
    assert cat.shape == (384,)
    assert float(cat @ kitten) > 0.5 > float(cat @ bonds)


# --------------------------------------------------------------------------- damaged folders


@pytest.fixture
def damaged_copy(tiny_lm_path, tmp_path) -> Path:
    """A copy of `tiny-lm` outside the cache, for a test to damage."""
    return Path(shutil.copytree(tiny_lm_path, tmp_path / "my-model"))


def test_truncated_weights_are_one_load_error(damaged_copy):
    size = _truncate(damaged_copy / "model.safetensors")
    with pytest.raises(ModelLoadError) as error:
        load_causal_lm(str(damaged_copy))
    # folder, file and cause in one line, instead of safetensors' bare SafetensorError
    assert str(error.value) == (
        f"cannot load the model in {damaged_copy}: model.safetensors: truncated "
        f"({size // 2} bytes, its header describes {size}) (SafetensorError: Error while "
        "deserializing header: incomplete metadata, file not fully covered)"
    )
    assert type(error.value.__cause__).__name__ == "SafetensorError"
    # the CLI shows it as that line with exit status 2
    assert describe_error(error.value) == (str(error.value), 2)
    # the inference loader goes through the same path
    from mads_bench.adapters import load_for_inference

    with pytest.raises(ModelLoadError, match="model.safetensors: truncated"):
        load_for_inference(str(damaged_copy))


def test_unreadable_configs_are_one_load_error(damaged_copy, tiny_lm_path):
    (damaged_copy / "config.json").write_text("not json {")
    with pytest.raises(ModelLoadError) as error:
        load_causal_lm(str(damaged_copy))
    assert str(error.value).startswith(
        f"cannot load the model in {damaged_copy}: config.json: not JSON (Expecting value: "
        "line 1 column 1 (char 0)) (OSError: It looks like the config file at"
    )
    # a tokenizer file cut short: JSON's own error would name no file
    shutil.copy(tiny_lm_path / "config.json", damaged_copy)
    _truncate(damaged_copy / "tokenizer.json")
    with pytest.raises(ModelLoadError, match=r"my-model: tokenizer\.json: not JSON \(Expecting"):
        load_tokenizer(str(damaged_copy))


def test_truncated_adapter_is_one_load_error(tmp_path):
    from peft import LoraConfig, get_peft_model

    from mads_bench.adapters import load_for_inference

    adapter = tmp_path / "adapter"
    policy = get_peft_model(load_causal_lm("tiny-lm"), LoraConfig(r=4, target_modules=["q_proj"]))
    policy.save_pretrained(adapter)
    size = _truncate(adapter / "adapter_model.safetensors")
    # the adapter's own weights are named, not the (intact) base model's
    with pytest.raises(ModelLoadError) as error:
        load_for_inference(str(adapter))
    assert str(error.value).startswith(
        f"cannot load the model in {adapter}: adapter_model.safetensors: truncated "
        f"({size // 2} bytes, its header describes {size}) (SafetensorError: "
    )


def test_damaged_cache_folder_is_named_with_the_fix(tiny_lm_copy):
    _truncate(tiny_lm_copy / "model.safetensors")
    with pytest.raises(ModelLoadError) as error:
        load_causal_lm("tiny-lm")
    assert str(error.value).startswith(f"Model 'tiny-lm' in {tiny_lm_copy} is damaged: ")
    assert str(error.value).endswith("Run `mads-bench models setup tiny-lm` to rebuild it.")


def test_load_error_wraps_only_read_failures(damaged_copy):
    # a bad argument is the caller's bug, not a damaged folder: it passes through unchanged
    with pytest.raises(TypeError):
        with models.reading_model_folder(damaged_copy):
            raise TypeError("from_pretrained() got an unexpected keyword argument")


@pytest.fixture(scope="module")
def mock_dataset(tmp_path_factory) -> Path:
    """A `build-dataset` folder of the mock domain's scripted conversations."""
    from mads_bench.catalog import load_domain
    from mads_bench.datasets import build_dataset, save_dataset
    from simulation.environment import simulate

    trajectories = [simulate(scenario, seed=0) for scenario in load_domain("mock").scenarios]
    built = build_dataset(
        trajectories, include_unvalidated=True, held_out_domains=[], test_size=0.5
    )
    return save_dataset(built, tmp_path_factory.mktemp("ds") / "mock")


def test_eval_with_unknown_or_damaged_model_is_one_line(mock_dataset, damaged_copy, capsys):
    def eval_l1(model: str) -> tuple[int, str]:
        status = cli_main(
            ["eval", "l1", "--model", f"transformers:{model}", "--dataset", str(mock_dataset),
             "--predictions", str(damaged_copy.parent / f"{len(model)}.jsonl"),
             "--similarity-model", "none", "--limit", "1"]
        )  # fmt: skip
        # one error line (after the progress bar's carriage returns), nothing like a traceback
        err = capsys.readouterr().err
        (line,) = re.findall(r"error: .*", err)
        assert "Traceback" not in err
        return status, line

    # an unknown name: exit 2, and the line lists the known names
    status, line = eval_l1("nonexistent")
    assert status == 2 and line.startswith(
        "error: Model 'nonexistent' is neither a known name (minilm, minilm-static, mpnet, "
        "smollm2-135m, tiny-lm)"
    )
    # a model folder whose weights were cut short: exit 2, folder and file named
    _truncate(damaged_copy / "model.safetensors")
    status, line = eval_l1(str(damaged_copy))
    assert status == 2
    assert line.startswith(
        f"error: cannot load the model in {damaged_copy}: model.safetensors: truncated ("
    )


# --------------------------------------------------------------------------- quiet imports


def test_bitsandbytes_kernel_warning_is_dropped_for_encoders(caplog, monkeypatch):
    logger = logging.getLogger("bitsandbytes.backends.cpu.ops")
    # whatever earlier tests' libraries did to it (a dictConfig disables existing loggers)
    monkeypatch.setattr(logger, "disabled", False)
    level = caplog.at_level(logging.WARNING, logger=logger.name)
    with level, without_bitsandbytes_kernel_warning():
        logger.warning("Failed to load CPU gemm_4bit_forward from kernels-community: %s", "x")
        logger.warning("another bitsandbytes warning")
    # only the optional-kernel notice is dropped, and only inside the block
    # (records of this logger only: threads left by other tests may log meanwhile)
    messages = [r.getMessage() for r in caplog.records if r.name == logger.name]
    assert messages == ["another bitsandbytes warning"]
    assert not logger.filters


def test_encoder_and_cli_print_nothing_of_bitsandbytes(minilm_path):
    code = (
        "import sys, mads_bench.cli\n"
        "assert 'bitsandbytes' not in sys.modules, 'the CLI imports bitsandbytes'\n"
        "from mads_bench.models import load_sentence_encoder\n"
        "load_sentence_encoder('minilm').encode(['hello'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "gemm_4bit" not in result.stderr and "kernels-community" not in result.stderr


# --------------------------------------------------------------------------- slow: big models


@pytest.mark.slow
def test_mpnet_encodes_768d():
    encoder = load_sentence_encoder("mpnet", auto_setup=True)
    assert encoder.get_embedding_dimension() == 768
    assert 400 < models.folder_mb(Path(resolve_model("mpnet"))) < 460
    cat, kitten, bonds = encoder.encode(
        ["The cat sleeps on the sofa.", "A kitten naps on the couch.", "Bond yields rose."],
        normalize_embeddings=True,
    )
    assert float(cat @ kitten) > 0.5 > float(cat @ bonds)


@pytest.mark.slow
def test_smollm2_is_a_plain_safetensors_model_that_answers():
    path = Path(resolve_model("smollm2-135m", auto_setup=True))
    config = json.loads((path / "config.json").read_text())
    # dequantized: no GGUF quantization left, one float32 safetensors file
    assert "quantization_config" not in config and config["dtype"] == "float32"
    assert (path / "model.safetensors").exists() and not list(path.glob("*.gguf"))
    tokenizer = load_tokenizer("smollm2-135m")
    model = load_causal_lm("smollm2-135m")
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    inputs = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
    )
    output = model.generate(**inputs, max_new_tokens=20, do_sample=False)
    answer = tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
    assert "Paris" in answer
