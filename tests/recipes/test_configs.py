"""The YAML recipe configs and accelerate configs: they parse, and carry the paper's numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from accelerate.commands.config.config_args import ClusterConfig
from trl import GRPOConfig, ModelConfig, SFTConfig, TrlParser

from mads_bench.training import GRPOScriptArguments, SFTScriptArguments
from mads_bench.training.rollout import check_reward_modes, check_vllm_settings
from rewards import get_reward_funcs

REPO = Path(__file__).resolve().parents[2]
CONFIGS = sorted(REPO.glob("recipes/*/*/config_*.yaml"))


def _parse(path: Path):
    grpo = path.parent.name == "grpo"
    parser = TrlParser(
        (GRPOScriptArguments if grpo else SFTScriptArguments, GRPOConfig if grpo else SFTConfig,
         ModelConfig)
    )  # fmt: skip
    # the paper configs ask for bf16 on GPUs; this CPU machine parses them with CPU overrides
    return parser.parse_args_and_config(
        args=["--config", str(path), "--bf16", "false", "--use_cpu", "true"]
    )


def test_every_model_has_both_stages() -> None:
    # recipes/<model>/<sft|grpo>/config_<tag>.yaml for the four models of the issue
    names = {p.relative_to(REPO / "recipes").as_posix() for p in CONFIGS}
    for model, tag in [("qwen2.5-7b-instruct", "paper"), ("qwen2.5-32b-instruct", "paper"),
                       ("smollm2-135m", "demo"), ("tiny-lm", "test")]:  # fmt: skip
        assert {f"{model}/sft/config_{tag}.yaml", f"{model}/grpo/config_{tag}.yaml"} <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.relative_to(REPO / "recipes").as_posix())
def test_config_parses_with_qlora_and_completion_only_loss(path: Path) -> None:
    script_args, training_args, model_args = _parse(path)
    # QLoRA everywhere: NF4 4-bit with double quantisation plus LoRA on named modules
    assert model_args.load_in_4bit and model_args.bnb_4bit_quant_type == "nf4"
    assert model_args.use_bnb_nested_quant and model_args.use_peft
    assert model_args.lora_target_modules
    if path.parent.name == "sft":
        assert training_args.completion_only_loss is True
    else:  # one weight per named reward, each made for the config's rollout mode
        assert len(training_args.reward_weights) == len(script_args.reward_funcs)
        weights = dict(zip(script_args.reward_funcs, training_args.reward_weights, strict=True))
        check_reward_modes(get_reward_funcs(script_args.reward_funcs), script_args.rollout)
        if script_args.rollout == "step":  # the paper's three rewards weigh 1
            assert weights["action_type"] == weights["tool_call"] == weights["semantic"] == 1.0
        else:  # what got done leads; a rollout may not outgrow its completion budget
            assert weights["task_success"] == 1.0
            assert script_args.max_step_tokens < training_args.max_completion_length
            if training_args.use_vllm:  # what TRL 1.16's vLLM generation needs here
                check_vllm_settings(training_args, script_args.max_step_tokens)
        # the generation round holds whole groups of num_generations completions
        assert training_args.generation_batch_size % training_args.num_generations == 0
        if "use_cpu: true" in path.read_text():  # a group per micro-batch: one prompt pass
            assert training_args.per_device_train_batch_size % training_args.num_generations == 0


@pytest.mark.parametrize("model", ["qwen2.5-7b-instruct", "qwen2.5-32b-instruct"])
def test_paper_hyperparameters(model: str) -> None:
    _, sft, _ = _parse(REPO / f"recipes/{model}/sft/config_paper.yaml")
    # MADS §4.1 SFT: lr 2e-4, batch 4, gradient accumulation 4
    assert (sft.learning_rate, sft.per_device_train_batch_size) == (2e-4, 4)
    assert sft.gradient_accumulation_steps == 4
    script, grpo, _ = _parse(REPO / f"recipes/{model}/grpo/config_paper.yaml")
    # MADS §4.1 RLVR: lr 1e-5, batch 1, accumulation 4, 5 epochs, K=8, 50 conversations
    assert (grpo.learning_rate, grpo.per_device_train_batch_size) == (1e-5, 1)
    assert (grpo.gradient_accumulation_steps, grpo.num_train_epochs) == (4, 5)
    assert grpo.num_generations == 8 and script.num_conversations == 50
    assert script.sft_adapter_path  # GRPO starts from the SFT adapter
    # vLLM options exposed for GPU users, off by default
    assert grpo.use_vllm is False and grpo.vllm_mode == "colocate"
    assert "wandb" in grpo.report_to and script.wandb_project == "mads-bench"


@pytest.mark.parametrize(
    ("name", "kind", "cpu"),
    [("cpu", "NO", True), ("single_gpu", "NO", False), ("multi_gpu", "MULTI_GPU", False),
     ("deepspeed_zero2", "DEEPSPEED", False), ("deepspeed_zero3", "DEEPSPEED", False),
     ("fsdp", "FSDP", False)],
)  # fmt: skip
def test_accelerate_configs_load(name: str, kind: str, cpu: bool) -> None:
    config = ClusterConfig.from_yaml_file(str(REPO / "accelerate_configs" / f"{name}.yaml"))
    # accelerate's own loader reads each file with the expected backend
    assert config.distributed_type.value == kind and bool(config.use_cpu) is cpu
    if name.startswith("deepspeed"):
        assert config.deepspeed_config["zero_stage"] == int(name[-1])
