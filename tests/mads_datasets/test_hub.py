"""Tests of saving, loading and pushing.

The live Hugging Face Hub cannot be reached from this environment (no network, tests run
with ``HF_HUB_OFFLINE=1``), so ``push_dataset`` is tested up to the network boundary: the
``HfApi`` methods and ``DatasetDict.push_to_hub`` are replaced by recorders and the test
asserts what would be sent. Unpatched, a push in offline mode fails with a clear error.
"""

from __future__ import annotations

from pathlib import Path

import datasets
import huggingface_hub
import huggingface_hub.constants
import pytest

from mads_bench.datasets import HubError, load_mads_dataset, push_dataset, save_dataset
from mads_bench.errors import UsageError

TOKEN = "hf_testtokenNOTREAL0123456789"


@pytest.fixture(scope="module")
def saved(built, tmp_path_factory: pytest.TempPathFactory) -> Path:
    datasets.disable_progress_bars()
    return save_dataset(built, tmp_path_factory.mktemp("ds") / "mads")


def test_saved_layout_loads_back(saved: Path, built) -> None:
    # DIR/<config>/ for the three configs, plus the card
    assert sorted(p.name for p in saved.iterdir()) == ["README.md", "grpo", "sft", "trajectories"]
    grpo = load_mads_dataset(str(saved), "grpo")
    # a DatasetDict with train and test, rows as built
    assert isinstance(grpo, datasets.DatasetDict) and set(grpo) == {"train", "test"}
    assert len(grpo["test"]) == built.report.rows["grpo"]["test"]
    test = load_mads_dataset(str(saved), "sft", split="test")
    # a split gives a Dataset with the contracted columns
    assert isinstance(test, datasets.Dataset) and test.column_names[:2] == ["prompt", "completion"]
    # plain `datasets.load_from_disk` reads a config folder too
    assert len(datasets.load_from_disk(str(saved / "trajectories"))["train"]) > 0


def test_save_refuses_to_overwrite(saved: Path, built) -> None:
    # an existing output is kept unless overwrite is asked for
    with pytest.raises(FileExistsError, match="overwrite"):
        save_dataset(built, saved)


def test_load_errors(saved: Path) -> None:
    # unknown config
    with pytest.raises(ValueError, match="unknown config"):
        load_mads_dataset(str(saved), "dpo")
    # unknown split: a usage error (one line from the CLI, not "unexpected ValueError") that
    # names the splits there are
    with pytest.raises(UsageError, match="no split 'validation' \\(it has train, test\\)"):
        load_mads_dataset(str(saved), "sft", split="validation")
    # not a local folder and offline: a Hub error that says so
    with pytest.raises(HubError, match="HF_HUB_OFFLINE"):
        load_mads_dataset("someone/not-here", "sft")


def test_push_sends_card_and_configs_without_the_token(saved: Path, monkeypatch) -> None:
    calls: list[tuple] = []
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_TOKEN", TOKEN)

    def create_repo(self, repo_id, **kwargs):
        calls.append(("create_repo", repo_id, kwargs["repo_type"], kwargs["private"], self.token))
        return f"https://huggingface.co/datasets/{repo_id}"

    def upload_file(self, **kwargs):
        calls.append(("upload_file", kwargs["repo_id"], kwargs["path_in_repo"], kwargs))

    def push_to_hub(self, repo_id, **kwargs):
        calls.append(("push_to_hub", repo_id, kwargs["config_name"], kwargs, sorted(self)))

    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", create_repo)
    monkeypatch.setattr(huggingface_hub.HfApi, "upload_file", upload_file)
    monkeypatch.setattr(datasets.DatasetDict, "push_to_hub", push_to_hub)
    result = push_dataset(saved, "me/mads-bench", private=True)
    # the repo is a private dataset repo, created with the token from HF_TOKEN
    assert calls[0] == ("create_repo", "me/mads-bench", "dataset", True, TOKEN)
    # the card goes first, as README.md of the dataset repo, byte for byte the built card
    name, repo, path, kwargs = calls[1]
    assert (name, repo, path, kwargs["repo_type"]) == (
        "upload_file",
        "me/mads-bench",
        "README.md",
        "dataset",
    )
    card = kwargs["path_or_fileobj"].decode()
    assert card == (saved / "README.md").read_text() and TOKEN not in card
    # then one push_to_hub per config, each with train and test, private
    pushes = [c for c in calls if c[0] == "push_to_hub"]
    assert [c[2] for c in pushes] == ["trajectories", "sft", "grpo"]
    assert all(
        c[1] == "me/mads-bench" and c[3]["private"] and c[4] == ["test", "train"] for c in pushes
    )
    # the summary names repo and sizes and holds no token
    assert result["configs"]["sft"]["train"] > 0 and TOKEN not in repr(result)


def test_push_failure_names_the_step_and_hides_the_token(saved: Path, monkeypatch) -> None:
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")

    def refuse(self, repo_id, **kwargs):
        raise PermissionError(f"401 for token {TOKEN}")

    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", refuse)
    with pytest.raises(HubError, match="'create the repo'") as info:
        push_dataset(saved, "me/mads-bench", token=TOKEN)
    # the message keeps the reason but masks the token
    assert TOKEN not in str(info.value) and "***" in str(info.value)


def test_unpatched_push_offline_fails_clearly(saved: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # no network call is attempted; the error says why
    with pytest.raises(HubError, match="HF_HUB_OFFLINE is set"):
        push_dataset(saved, "me/mads-bench", token=TOKEN)


def test_push_needs_a_complete_folder(tmp_path: Path) -> None:
    # a folder that is not a build-dataset output is named with what it misses
    with pytest.raises(FileNotFoundError, match="not a build-dataset folder"):
        push_dataset(tmp_path, "me/mads-bench")


def test_push_without_a_token_says_how_to_get_one(saved: Path, monkeypatch) -> None:
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    # neither argument, HF_TOKEN nor login cache: a clear error before any request
    with pytest.raises(HubError, match="set HF_TOKEN"):
        push_dataset(saved, "me/mads-bench")
