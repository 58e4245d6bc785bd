"""End-to-end recipe runs on CPU: `accelerate launch` SFT, then GRPO from the SFT adapter.

Each recipe runs as a subprocess on `tiny-lm` for two steps (seconds), with `HF_HUB_OFFLINE=1`
and `WANDB_MODE=offline` in the subprocess's environment only. A fake Hub token is passed on
the command line to check it never reaches logs, W&B, configs or cards.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from safetensors.torch import load_file

from tests.recipes.helpers import REPO, accelerate_launch, run_recipe
from tests.recipes.wandb_offline import read_offline_run

FAKE_TOKEN = "hf_FAKEtoken0123456789abcdefXYZ"  # shaped like a Hub token; must never be written


@pytest.fixture(scope="module")
def sft_run(tiny_dataset: Path, tmp_path_factory: pytest.TempPathFactory, tiny_lm_path) -> dict:
    """Two SFT steps under `accelerate launch` with W&B offline."""
    tmp = tmp_path_factory.mktemp("sft_run")
    out = tmp / "sft"
    log = run_recipe(
        accelerate_launch(
            "recipes/sft.py",
            "recipes/tiny-lm/sft/config_test.yaml",
            "--dataset_name",
            str(tiny_dataset),
            "--output_dir",
            str(out),
            "--report_to",
            "wandb",
            "--wandb_tags",
            "test",
            "sft",
            "--hub_token",
            FAKE_TOKEN,
        ),
        tmp,
    )
    return {"tmp": tmp, "out": out, "log": log}


@pytest.fixture(scope="module")
def grpo_run(sft_run: dict, tiny_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Two GRPO steps from the SFT adapter under `accelerate launch` with W&B offline."""
    tmp = tmp_path_factory.mktemp("grpo_run")
    out = tmp / "grpo"
    log = run_recipe(
        accelerate_launch(
            "recipes/grpo.py",
            "recipes/tiny-lm/grpo/config_test.yaml",
            "--dataset_name",
            str(tiny_dataset),
            "--output_dir",
            str(out),
            "--sft_adapter_path",
            str(sft_run["out"]),
            "--report_to",
            "wandb",
            f"--hub_token={FAKE_TOKEN}",
        ),
        tmp,
    )
    return {"tmp": tmp, "out": out, "log": log}


@pytest.fixture(scope="module")
def conversation_run(
    sft_run: dict, mock_dataset: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict:
    """Two conversation-level GRPO steps from the SFT adapter, with a probe reward that
    records what the rewards receive."""
    tmp = tmp_path_factory.mktemp("conversation_run")
    out, probe = tmp / "grpo", tmp / "probe.jsonl"
    rewards = "task_success,partial_credit,gold_steps,sage_turns,conversation_format,turn_cost"
    log = run_recipe(
        accelerate_launch(
            "recipes/grpo.py",
            "recipes/tiny-lm/grpo/config_conversation.yaml",
            "--dataset_name",
            str(mock_dataset),
            "--output_dir",
            str(out),
            "--sft_adapter_path",
            str(sft_run["out"]),
            "--reward_funcs",
            *rewards.split(","),
            "tests.recipes.probe_reward.record_rollouts",
            "--reward_weights",
            "1",
            "0",
            "0",
            "0",
            "0",
            "0",
            "0",
        ),  # fmt: skip
        tmp,
        MADS_PROBE_FILE=str(probe),
    )
    return {"out": out, "log": log, "probe": probe}


def test_conversation_grpo_runs_two_steps_and_rewards_get_the_outcome(
    conversation_run: dict, mock_dataset: Path
) -> None:
    from transformers import AutoTokenizer

    state = json.loads((conversation_run["out"] / "trainer_state.json").read_text())
    rows = [row for row in state["log_history"] if "reward" in row]
    assert state["global_step"] == 2 and len(rows) == 2
    for name in ("task_success", "gold_steps", "conversation_format", "turn_cost"):
        assert all(f"rewards/{name}_reward/mean" in row for row in rows)
    assert all("conversation/truncated" in row for row in rows)
    probes = [json.loads(line) for line in conversation_run["probe"].read_text().splitlines()]
    assert len(probes) == 4  # two steps, one group of two conversations each
    tokenizer = AutoTokenizer.from_pretrained(str(conversation_run["out"]))
    train = {"mock-cancel-normal", "mock-buy-mug-unhappy"}  # the test split holds the third
    for probe in probes:
        outcome, trajectory = probe["outcome"], json.loads(probe["trajectory"])
        # the structured outcome of the very conversation that was played
        assert outcome["scenario_id"] == trajectory["scenario_id"] in train
        assert outcome["steps"] == sum(m["role"] == "assistant" for m in trajectory["messages"])
        assert outcome["end_reason"] == trajectory["end_reason"]
        # the completion TRL decoded is the whole transcript, steps and environment
        steps = [m["content"] for m in trajectory["messages"] if m["role"] == "assistant"]
        assert all(step.strip() in probe["completion"] for step in steps if step.strip())
        assert (
            tokenizer.decode(probe["completion_ids"], skip_special_tokens=True)
            == probe["completion"]
        )
    # TRL counts completion lengths from env_mask: the policy's tokens only
    lengths = [o["outcome"]["policy_tokens"] for o in probes]
    assert rows[0]["completions/mean_length"] == pytest.approx(sum(lengths[:2]) / 2)
    # both members of a group played the same scenario with the same seed
    for first, second in (probes[0:2], probes[2:4]):
        a, b = json.loads(first["trajectory"]), json.loads(second["trajectory"])
        assert (a["scenario_id"], a["seed"]) == (b["scenario_id"], b["seed"])


def _all_text(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("latin-1") for p in folder.rglob("*") if p.is_file())


def test_sft_trains_and_saves_an_adapter_with_a_card(sft_run: dict) -> None:
    out = sft_run["out"]
    state = json.loads((out / "trainer_state.json").read_text())
    # max_steps 2 with logging every step: two loss entries, both finite
    losses = [row["loss"] for row in state["log_history"] if "loss" in row]
    assert state["global_step"] == 2 and len(losses) == 2
    # merge_step_chains (on in the config): the tiny rows share no prompts, so 8 stay 8
    assert "merged train steps: 8 steps -> 8 sequences" in sft_run["log"]
    # QLoRA adapter on the attention projections only (lora_target_modules in the YAML)
    config = json.loads((out / "adapter_config.json").read_text())
    assert sorted(config["target_modules"]) == ["k_proj", "o_proj", "q_proj", "v_proj"]
    assert config["r"] == 8
    # the 4-bit base it was trained on is recorded, so evaluation rebuilds the same policy
    assert json.loads((out / "base_quantization.json").read_text())["load_in_4bit"] is True
    # the generated card names the stage, data revision and QLoRA settings
    card = (out / "README.md").read_text()
    assert (
        "mads-bench SFT" in card and "local:" in card and "| bnb_4bit_quant_type | `nf4` |" in card
    )


def test_grpo_continues_the_sft_adapter_and_logs_rewards(grpo_run: dict, sft_run: dict) -> None:
    out = grpo_run["out"]
    state = json.loads((out / "trainer_state.json").read_text())
    rows = [row for row in state["log_history"] if "reward" in row]
    # two GRPO steps, each with the total and every reward component logged
    assert state["global_step"] == 2 and len(rows) == 2
    for name in ("action_type", "tool_call", "semantic", "tool_name", "pre_act_format"):
        assert all(f"rewards/{name}_reward/mean" in row for row in rows)
    # continued, not a new adapter: same LoRA shapes and modules as the SFT adapter
    sft = load_file(sft_run["out"] / "adapter_model.safetensors")
    grpo = load_file(out / "adapter_model.safetensors")
    assert sorted(sft) == sorted(grpo)
    assert all(sft[k].shape == grpo[k].shape for k in sft)
    # the card records the reward setup with the YAML weights and the starting adapter
    card = (out / "README.md").read_text()
    assert "| `semantic_reward` | 1 |" in card and "| `tool_name_reward` | 0 |" in card
    assert "continued the SFT adapter" in card


def test_wandb_offline_run_holds_config_revision_and_reward_components(grpo_run: dict) -> None:
    run = read_offline_run(grpo_run["tmp"])
    # project, run name and tags come from the YAML config
    assert run.project == "mads-bench" and run.name == "tiny-lm-grpo-test"
    # the dataset revision (content fingerprint of the local folder) and the script args
    assert run.config["dataset/revision"].startswith("local:")
    assert run.config["script_args"]["reward_funcs"][0] == "action_type"
    assert run.config["learning_rate"] == 1e-5  # training arguments via the HF callback
    # every training step logs the total reward and each component's mean
    steps = [row for row in run.history if "train/reward" in row]
    assert [row["train/global_step"] for row in steps] == [1, 2]
    for row in steps:
        assert {
            "train/rewards/action_type_reward/mean",
            "train/rewards/pre_act_format_reward/mean",
        } <= set(row)


def test_tokens_never_reach_logs_wandb_outputs_or_cards(sft_run: dict, grpo_run: dict) -> None:
    for run in (sft_run, grpo_run):
        # stdout/stderr of the launch, the output folder (incl. training_args.bin) and W&B files
        assert FAKE_TOKEN not in run["log"]
        assert FAKE_TOKEN not in _all_text(run["out"])
        assert FAKE_TOKEN not in _all_text(run["tmp"] / "wandb")


@pytest.mark.slow  # two processes on 2 shared cores: ~30 s, over the fast-suite budget
def test_two_process_cpu_launch_completes_a_step(tiny_dataset: Path, tmp_path: Path) -> None:
    torchrun = Path(shutil.which("torchrun") or REPO / ".venv" / "bin" / "torchrun")
    out = tmp_path / "ddp"
    run_recipe(
        [
            str(torchrun),
            "--nproc_per_node",
            "2",
            "--master_port",
            "29517",
            "recipes/sft.py",
            "--config",
            "recipes/tiny-lm/sft/config_test.yaml",
            "--dataset_name",
            str(tiny_dataset),
            "--output_dir",
            str(out),
            "--max_steps",
            "1",
        ],
        tmp_path,
    )
    state = json.loads((out / "trainer_state.json").read_text())
    # one step of batch 2 on each of 2 processes consumes 4 of the 8 rows: epoch 0.5
    assert state["global_step"] == 1 and state["epoch"] == 0.5


@pytest.mark.slow  # two launches (~60 s on 2 shared cores)
def test_train_run_cli_chains_sft_then_grpo(tiny_dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "pipeline"
    log = run_recipe(
        [sys.executable, "-m", "mads_bench", "train", "run", "--dataset", str(tiny_dataset),
         "--out", str(out), "--sft-config", "recipes/tiny-lm/sft/config_test.yaml",
         "--grpo-config", "recipes/tiny-lm/grpo/config_test.yaml",
         "--summary", str(tmp_path / "summary.json")],
        tmp_path,
    )  # fmt: skip
    summary = json.loads((tmp_path / "summary.json").read_text())
    # both stages ran their 2 steps; GRPO continued the SFT adapter written under OUT/sft
    assert summary["sft"]["steps"] == summary["grpo"]["steps"] == 2
    assert summary["sft"]["peak_rss_mb"] > 0 and len(summary["grpo"]["rewards"]) == 2
    assert "[train] grpo" in log and (out / "grpo" / "adapter_model.safetensors").is_file()


def test_train_run_cli_chains_sft_then_conversation_grpo(mock_dataset: Path, tmp_path: Path):
    out = tmp_path / "pipeline"
    log = run_recipe(
        [sys.executable, "-m", "mads_bench", "train", "run", "--dataset", str(mock_dataset),
         "--out", str(out), "--sft-config", "recipes/tiny-lm/sft/config_test.yaml",
         "--grpo-config", "recipes/tiny-lm/grpo/config_conversation.yaml",
         "--rollout", "conversation", "--summary", str(tmp_path / "summary.json")],
        tmp_path,
    )  # fmt: skip
    summary = json.loads((tmp_path / "summary.json").read_text())
    # SFT, then conversation GRPO continuing its adapter, 2 steps each
    assert summary["sft"]["steps"] == summary["grpo"]["steps"] == 2
    assert "GRPO (conversation rollouts)" in (out / "grpo.log").read_text() + log
    state = json.loads((out / "grpo" / "trainer_state.json").read_text())
    assert all("rewards/task_success_reward/mean" in r for r in state["log_history"][:2])
