"""Unit tests of `mads_bench.training`: QLoRA config, completion-only loss, adapters, data
subsets, secret redaction, model cards and Hub publishing up to the network boundary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from datasets import Dataset
from trl import ModelConfig, SFTConfig

from mads_bench.training import (
    build_peft_config,
    build_quantization_config,
    load_model_and_tokenizer,
    load_trainable_adapter,
    load_training_splits,
    prepare_upload_folder,
    push_checkpoint,
    redact_secrets,
    render_model_card,
    select_conversations,
    take_hub_settings,
)
from mads_bench.training.tracking import redact_argv

FAKE_TOKEN = "hf_FAKEtoken0123456789abcdefXYZ"


def _qlora_args(**extra) -> ModelConfig:
    return ModelConfig(
        model_name_or_path="tiny-lm", load_in_4bit=True, use_bnb_nested_quant=True,
        use_peft=True, lora_r=4, lora_alpha=8, lora_target_modules=["q_proj", "v_proj"], **extra,
    )  # fmt: skip


def _cpu_args(tmp_path: Path, **extra) -> SFTConfig:
    return SFTConfig(
        output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, report_to="none", **extra
    )


def test_quantization_config_is_nf4_double_quant_float32_on_cpu() -> None:
    config = build_quantization_config(_qlora_args(), use_cpu=True)
    # NF4 with nested (double) quantisation, computing in float32 on CPU
    assert config.load_in_4bit and config.bnb_4bit_quant_type == "nf4"
    assert config.bnb_4bit_use_double_quant is True
    assert config.bnb_4bit_compute_dtype == torch.float32
    # no quantisation switch -> plain LoRA (None)
    assert build_quantization_config(ModelConfig(model_name_or_path="x"), use_cpu=True) is None
    # 8-bit switch -> an 8-bit config, no 4-bit settings
    eight = ModelConfig(model_name_or_path="x", load_in_8bit=True)
    assert build_quantization_config(eight, use_cpu=True).load_in_8bit is True


def test_completion_only_loss_masks_the_prompt(tiny_dataset: Path, tmp_path: Path) -> None:
    from trl import SFTTrainer, get_peft_config

    model_args = _qlora_args()
    args = _cpu_args(tmp_path, completion_only_loss=True, max_length=512)
    model, tokenizer = load_model_and_tokenizer(model_args, args)
    # the base model is really 4-bit: its projections are bitsandbytes Linear4bit layers
    assert type(model.model.layers[0].self_attn.q_proj).__name__ == "Linear4bit"
    train, _, _ = load_training_splits(str(tiny_dataset), "sft")
    train = train.select_columns(["prompt", "completion"]).select(range(1))
    trainer = SFTTrainer(
        model=model, args=args, train_dataset=train, processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
    )  # fmt: skip
    row = trainer.train_dataset[0]  # TRL folds the completion mask into the labels (-100)
    prompt_ids = tokenizer.apply_chat_template(
        train[0]["prompt"], tokenize=True, add_generation_prompt=True, return_dict=True
    )["input_ids"]
    labels, n_prompt = row["labels"], len(prompt_ids)
    # the prompt (chat template + generation prompt) carries no loss, the completion does
    assert labels[:n_prompt] == [-100] * n_prompt
    assert labels[n_prompt:] == row["input_ids"][n_prompt:] and len(labels) > n_prompt
    # the loss-carrying tokens decode to the Pre-Act completion
    text = tokenizer.decode(labels[n_prompt:])
    assert text.startswith("<think>Decide the next step.</think>")


def test_lora_top_layers_adapts_only_the_last_layers(tmp_path: Path) -> None:
    from peft import get_peft_model

    model, _ = load_model_and_tokenizer(_qlora_args(), _cpu_args(tmp_path))
    # tiny-lm has 2 decoder layers: top 1 puts LoRA on layer 1 only
    config = build_peft_config(_qlora_args(), model, top_layers=1)
    assert config.layers_to_transform == [1]
    adapted = {n.split(".layers.")[1].split(".")[0] for n, _ in
               get_peft_model(model, config).named_parameters() if "lora_A" in n}  # fmt: skip
    assert adapted == {"1"}
    # no limit, or a limit at or above the depth: every layer; no peft: no config
    assert build_peft_config(_qlora_args(), model).layers_to_transform is None
    assert build_peft_config(_qlora_args(), model, top_layers=8).layers_to_transform is None
    assert build_peft_config(ModelConfig(model_name_or_path="tiny-lm"), model, top_layers=1) is None
    with pytest.raises(ValueError, match="at least 1, got 0"):
        build_peft_config(_qlora_args(), model, top_layers=0)


def test_sft_adapter_loads_trainable_for_grpo(tmp_path: Path) -> None:
    from peft import LoraConfig, get_peft_model

    model_args = _qlora_args()
    args = _cpu_args(tmp_path)
    model, _ = load_model_and_tokenizer(model_args, args)
    peft_model = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "v_proj"]))
    for name, param in peft_model.named_parameters():
        if "lora_B" in name:
            torch.nn.init.constant_(param, 0.5)  # a non-zero, recognisable "trained" adapter
    peft_model.save_pretrained(tmp_path / "sft")
    fresh, _ = load_model_and_tokenizer(model_args, args)
    policy = load_trainable_adapter(fresh, tmp_path / "sft")
    trainable = {n: p for n, p in policy.named_parameters() if p.requires_grad}
    # the SFT adapter's LoRA matrices (2 layers x 2 modules x A/B) are the trainable weights
    assert len(trainable) == 8 and all("lora_" in n for n in trainable)
    assert all(torch.all(p == 0.5) for n, p in trainable.items() if "lora_B" in n)
    with pytest.raises(FileNotFoundError, match="adapter_config.json"):
        load_trainable_adapter(fresh, tmp_path)


def test_select_conversations_keeps_whole_conversations() -> None:
    rows = Dataset.from_dict({"conversation_id": ["a", "a", "b", "c", "c", "d"], "i": range(6)})
    subset = select_conversations(rows, 2, seed=0)
    ids = subset["conversation_id"]
    # two conversations, every one of their steps, original order kept
    assert len(set(ids)) == 2 and all(ids.count(c) == rows["conversation_id"].count(c) for c in ids)
    assert subset["i"] == sorted(subset["i"])
    # same seed -> same subset; None or more than available -> everything
    assert select_conversations(rows, 2, seed=0)["i"] == subset["i"]
    assert len(select_conversations(rows, None, seed=0)) == 6
    assert len(select_conversations(rows, 10, seed=0)) == 6


def test_load_training_splits_records_the_revision(tiny_dataset: Path) -> None:
    train, test, record = load_training_splits(str(tiny_dataset), "grpo", max_train_samples=3)
    # 8 train rows cut to 3, the 4 test rows untouched
    assert len(train) == 3 and len(test) == 4
    assert record["num_rows"] == {"train": 8, "test": 4} and record["num_train_used"] == 3
    assert record["revision"] == f"local:{record['fingerprint']}"
    with pytest.raises(ValueError, match="no split 'dev'"):
        load_training_splits(str(tiny_dataset), "grpo", train_split="dev")


def test_secrets_are_redacted_everywhere() -> None:
    # by key, by shape inside strings, and on the command line W&B records
    assert redact_secrets({"hub_token": "abc", "x": f"url?t={FAKE_TOKEN}"}) == {
        "hub_token": "<redacted>",
        "x": "url?t=<redacted>",
    }
    assert redact_argv(["--hub_token", "abc", "--lr", "1"]) == [
        "--hub_token", "<redacted>", "--lr", "1",
    ]  # fmt: skip


def test_take_hub_settings_moves_the_token_out(tmp_path: Path) -> None:
    args = _cpu_args(tmp_path, push_to_hub=True, hub_token=FAKE_TOKEN, hub_model_id="me/m")
    hub = take_hub_settings(args)
    # the trainer will neither push nor hold the token; the settings keep it, hidden in repr
    assert args.push_to_hub is False and args.hub_token is None
    assert hub.token == FAKE_TOKEN and hub.repo_id == "me/m" and FAKE_TOKEN not in repr(hub)


def test_model_card_lists_setup_and_results() -> None:
    card = render_model_card(
        stage="grpo",
        base_model="HuggingFaceTB/SmolLM2-135M-Instruct",
        dataset={"source": "me/mads", "config": "grpo", "revision": "abc123"},
        hyperparameters={"learning_rate": 1e-5, "load_in_4bit": True},
        rewards=[("action_type_reward", 1.0), ("tool_name_reward", 0.0)],
        eval_results={"l1": {"action_type_recall": 0.75}, "l2": {"mean": 0.5}},
    )
    # front matter names the base model and the Hub dataset; QLoRA tag from load_in_4bit
    assert "base_model: HuggingFaceTB/SmolLM2-135M-Instruct" in card
    assert "- me/mads" in card and "- qlora" in card
    # hyperparameters, reward weights and flattened L-1/L-2 numbers are tabulated
    assert "| learning_rate | `1e-05` |" in card
    assert "| `tool_name_reward` | 0 |" in card
    assert "| l1.action_type_recall | 0.75 |" in card and "| l2.mean | 0.5 |" in card


class _FakeHfApi:
    """Stands in for `huggingface_hub.HfApi` at the network boundary: records the calls and
    what the upload folder holds at upload time (the live Hub cannot be reached here)."""

    calls: list = []

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id, kwargs))
        return f"https://huggingface.co/{repo_id}"

    def upload_folder(self, *, repo_id, folder_path, **kwargs):
        files = {p.relative_to(folder_path).as_posix() for p in Path(folder_path).rglob("*")}
        self.calls.append(("upload_folder", repo_id, {"files": files, **kwargs}))

        class Info:
            commit_url = f"https://huggingface.co/{repo_id}/commit/0"

        return Info()


@pytest.mark.parametrize("merged", [False, True])
def test_push_adapter_or_merged_checkpoint(merged: bool, tmp_path: Path, monkeypatch) -> None:
    """Pushes an adapter and a merged model through `HfApi` with its upload monkeypatched:
    the live Hub cannot exist in this offline environment, so the test stops at that call."""
    import huggingface_hub
    from peft import LoraConfig, get_peft_model

    from mads_bench.models import load_causal_lm

    monkeypatch.setattr(huggingface_hub, "HfApi", _FakeHfApi)
    _FakeHfApi.calls = []
    out = tmp_path / "run"
    get_peft_model(
        load_causal_lm("tiny-lm"), LoraConfig(r=4, target_modules=["q_proj"])
    ).save_pretrained(out)
    (out / "training_args.bin").write_bytes(b"pickle")
    (out / "checkpoint-1").mkdir()
    card = render_model_card(stage="sft", base_model="tiny-lm", dataset={}, hyperparameters={})
    folder = prepare_upload_folder(out, card=card, base_model="tiny-lm", merged=merged)
    url = push_checkpoint(folder, "me/tiny-sft", token=FAKE_TOKEN)
    (_, repo, create), (_, _, upload) = _FakeHfApi.calls
    # one repo creation and one upload commit, the token handed to the client only
    assert url.endswith("/commit/0") and repo == "me/tiny-sft" and create["exist_ok"] is True
    assert create["token"] == FAKE_TOKEN and upload["token"] == FAKE_TOKEN
    files = upload["files"]
    # the card travels; pickled arguments and intermediate checkpoints never do
    assert "README.md" in files and "training_args.bin" not in files
    assert not any(f.startswith("checkpoint-") for f in files)
    if merged:  # full weights, no adapter
        assert "model.safetensors" in files and "adapter_config.json" not in files
        name = json.loads((folder / "config.json").read_text())["_name_or_path"]
    else:  # the adapter names the base model, not a local cache path
        assert "adapter_model.safetensors" in files
        name = json.loads((folder / "adapter_config.json").read_text())["base_model_name_or_path"]
    assert name == "tiny-lm"
    assert all(FAKE_TOKEN.encode() not in p.read_bytes() for p in folder.rglob("*") if p.is_file())
