"""GRPO with verifiable rewards on MADS-Bench Pre-Act steps, from the SFT adapter (MADS §4.3).

A thin script over TRL's `GRPOTrainer`, parsed open-r1 style from a YAML config plus CLI
overrides. Rewards are chosen by name (`reward_funcs`, resolved by `rewards.get_reward_funcs`)
and weighted by TRL's `reward_weights`; the `grpo` dataset's gold columns reach them as keyword
arguments, and TRL logs each one per step as `rewards/<name>/mean`. The policy starts from the
SFT adapter (`sft_adapter_path`): the adapter is loaded, trainable, onto the same 4-bit base
SFT used and GRPO keeps training it (continued, not merged and not stacked; see
`recipes/README.md`). Without `sft_adapter_path` a fresh LoRA adapter is trained. vLLM
generation for GPU users: `use_vllm: true` with `vllm_mode: colocate` or `server`.

`rollout: conversation` trains on whole simulated conversations instead: a row is a training
scenario with a conversation seed, TRL's `rollout_func` (`ConversationRollout`) plays the
policy as the assistant against the scripted user and the tool backend, and the rewards of
`rewards.conversation` score what got done (task success, partial credit, gold moves, SAGE,
format, turn cost). See `mads_bench.training.rollout` and `recipes/README.md`.

Usage:
    accelerate launch --config_file accelerate_configs/cpu.yaml recipes/grpo.py \
        --config recipes/smollm2-135m/grpo/config_demo.yaml --dataset_name outputs/demo/dataset \
        --sft_adapter_path outputs/demo/sft

    accelerate launch --config_file accelerate_configs/multi_gpu.yaml recipes/grpo.py \
        --config recipes/qwen2.5-7b-instruct/grpo/config_paper.yaml --dataset_name DIR_OR_HUB_ID \
        --sft_adapter_path runs/qwen2.5-7b-sft --use_vllm true --vllm_mode colocate

    accelerate launch --config_file accelerate_configs/cpu.yaml recipes/grpo.py \
        --config recipes/smollm2-135m/grpo/config_conversation.yaml \
        --dataset_name outputs/demo/dataset --sft_adapter_path outputs/demo/sft
"""

from __future__ import annotations

import logging
import sys

import transformers
from trl import GRPOConfig, ModelConfig, TrlParser

from mads_bench.errors import UsageError
from mads_bench.training import (
    GRPOScriptArguments,
    build_peft_config,
    init_wandb,
    load_model_and_tokenizer,
    load_trainable_adapter,
    load_training_splits,
    peak_rss_mb,
    run_recipe_main,
    save_and_publish,
    score_labelled_positions_on_cpu,
    select_conversations,
    take_hub_settings,
)
from mads_bench.training.fast_weights import use_rollout_weights
from mads_bench.training.rollout import check_reward_modes, conversation_training
from mads_bench.training.shared_prompt import SharedPromptGRPOTrainer
from mads_bench.training.step_rollout import StepRollout
from rewards import get_reward_funcs

logger = logging.getLogger(__name__)


def main(
    script_args: GRPOScriptArguments, training_args: GRPOConfig, model_args: ModelConfig
) -> None:
    """Train the GRPO policy and save its adapter (and card) to `training_args.output_dir`."""
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level="INFO")
    transformers.set_seed(training_args.seed)
    score_labelled_positions_on_cpu()  # TRL scores every prompt position on CPU otherwise
    hub = take_hub_settings(training_args)  # the Trainer never pushes; the token stays out

    reward_funcs = get_reward_funcs(script_args.reward_funcs)
    weights = training_args.reward_weights or [1.0] * len(reward_funcs)
    if len(weights) != len(reward_funcs):
        raise UsageError(
            f"reward_weights has {len(weights)} values for {len(reward_funcs)} reward_funcs "
            f"({script_args.reward_funcs}); give one weight per reward."
        )
    ranking = script_args.curriculum_reward
    if ranking is not None and ranking not in script_args.reward_funcs:
        raise UsageError(
            f"curriculum_reward {ranking!r} is not one of reward_funcs "
            f"{script_args.reward_funcs}; add it there (weight 0 logs it without optimising it)"
        )
    fast = use_rollout_weights(script_args.rollout_weights, training_args)
    if script_args.constrain_tool_names and (script_args.rollout != "step" or not fast):
        raise UsageError(
            "constrain_tool_names works in step mode with rollouts from the fast copy "
            "(rollout: step, rollout_weights: auto on CPU, or copy)"
        )

    train, test, dataset_info = load_training_splits(
        script_args.dataset_name,
        script_args.dataset_config,
        train_split=script_args.dataset_train_split,
        test_split=script_args.dataset_test_split,
        max_train_samples=script_args.max_train_samples,
        revision=script_args.dataset_revision,
    )
    rollout_func = None
    if script_args.rollout == "conversation":
        train, rollout_func = conversation_training(script_args, training_args, train, reward_funcs)
        test = None
    else:
        check_reward_modes(reward_funcs, "step")
        if fast:  # TRL's step generation, from a fast copy
            rollout_func = StepRollout(script_args.constrain_tool_names)
        train = select_conversations(
            train, script_args.num_conversations, seed=script_args.subset_seed
        )
    dataset_info["num_train_used"] = len(train)
    dataset_info["num_conversations"] = script_args.num_conversations
    dataset_info["rollout"] = script_args.rollout
    logger.info(
        "GRPO (%s rollouts) on %s (%d train rows)",
        script_args.rollout, dataset_info["source"], len(train),
    )  # fmt: skip

    model, tokenizer = load_model_and_tokenizer(model_args, training_args, padding_side="left")
    peft_config = build_peft_config(model_args, model, top_layers=script_args.lora_top_layers)
    if script_args.sft_adapter_path:
        # Continue the SFT adapter: TRL refuses a PeftModel together with a new peft_config.
        model, peft_config = load_trainable_adapter(model, script_args.sft_adapter_path), None
    init_wandb(script_args, training_args, model_args, dataset_info, job_type="grpo")

    trainer = SharedPromptGRPOTrainer(  # TRL's GRPOTrainer; a group's prompt runs once
        model=model,
        reward_funcs=reward_funcs,
        args=training_args,
        train_dataset=train,
        eval_dataset=test if training_args.eval_strategy != "no" else None,
        processing_class=tokenizer,
        peft_config=peft_config,
        rollout_func=rollout_func,
    )
    if script_args.curriculum_candidates:
        trainer.train_dataset = _curriculum(trainer, rollout_func, train, script_args)
        dataset_info["num_train_used"] = len(trainer.train_dataset)
    result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    result.metrics["peak_rss_mb"] = peak_rss_mb()
    result.metrics["bf16"] = training_args.bf16
    trainer.log_metrics("train", result.metrics)
    trainer.save_metrics("train", result.metrics)
    trainer.save_state()

    out = save_and_publish(
        trainer,
        script_args,
        training_args,
        model_args,
        hub,
        stage="grpo",
        dataset_info=dataset_info,
        rewards=[(f.__name__, float(w)) for f, w in zip(reward_funcs, weights, strict=True)],
        starts_from=script_args.sft_adapter_path,
    )
    trainer.accelerator.print(f"GRPO adapter saved to {out}")
    trainer.accelerator.end_training()


def _curriculum(trainer, rollout_func, train, script_args):
    """The training rows where the starting policy's sampled rewards differ; the probe's
    report goes to `curriculum.json` in the output folder."""
    import json
    from pathlib import Path

    from mads_bench.training.curriculum import policy_reward_curriculum

    if script_args.rollout != "step":
        raise UsageError("curriculum_candidates works in step mode only (rollout: step)")
    ranking = script_args.curriculum_reward
    rollout = (
        rollout_func
        if isinstance(rollout_func, StepRollout)
        else StepRollout(script_args.constrain_tool_names)
    )
    kept, report = policy_reward_curriculum(
        trainer, rollout, train, candidates=script_args.curriculum_candidates,
        samples=script_args.curriculum_samples, keep=script_args.curriculum_keep,
        seed=script_args.subset_seed,
        ranking_reward=None if ranking is None
        else trainer.reward_funcs[script_args.reward_funcs.index(ranking)],
    )  # fmt: skip
    logger.info("curriculum: %s", report.to_dict())
    out = Path(trainer.args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "curriculum.json").write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    return kept


if __name__ == "__main__":
    sys.exit(run_recipe_main(main, TrlParser((GRPOScriptArguments, GRPOConfig, ModelConfig))))
