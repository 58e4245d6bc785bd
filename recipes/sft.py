"""Supervised fine-tuning with QLoRA on MADS-Bench Pre-Act steps (MADS §4.1, SPEC §6).

A thin script over TRL's `SFTTrainer`, parsed open-r1 style from a YAML config plus CLI
overrides. The `sft` dataset config is conversational prompt-completion (the prompt is the
conversation up to the step, the completion one assistant message in Pre-Act format), so
`completion_only_loss: true` puts the loss on the Pre-Act output only. QLoRA: `load_in_4bit`,
`bnb_4bit_quant_type: nf4`, `use_bnb_nested_quant: true` (double quantisation) and
`use_peft: true` with `lora_target_modules` (and optionally `lora_top_layers`) from the YAML.

Usage:
    accelerate launch --config_file accelerate_configs/cpu.yaml recipes/sft.py \
        --config recipes/smollm2-135m/sft/config_demo.yaml --dataset_name outputs/demo/dataset

    # the paper's setting on one GPU (override anything from the command line)
    accelerate launch --config_file accelerate_configs/single_gpu.yaml recipes/sft.py \
        --config recipes/qwen2.5-7b-instruct/sft/config_paper.yaml --dataset_name DIR_OR_HUB_ID
"""

from __future__ import annotations

import logging
import sys

import transformers
from trl import ModelConfig, SFTConfig, SFTTrainer, TrlParser

from mads_bench.training import (
    SFTScriptArguments,
    build_peft_config,
    init_wandb,
    load_model_and_tokenizer,
    load_training_splits,
    merge_step_chains,
    peak_rss_mb,
    run_recipe_main,
    save_and_publish,
    score_labelled_positions_on_cpu,
    take_hub_settings,
)

logger = logging.getLogger(__name__)


def main(
    script_args: SFTScriptArguments, training_args: SFTConfig, model_args: ModelConfig
) -> None:
    """Train an SFT adapter and save it (and its card) to `training_args.output_dir`."""
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level="INFO")
    transformers.set_seed(training_args.seed)
    score_labelled_positions_on_cpu()  # TRL scores every prompt position on CPU otherwise
    hub = take_hub_settings(training_args)  # the Trainer never pushes; the token stays out

    train, test, dataset_info = load_training_splits(
        script_args.dataset_name,
        script_args.dataset_config,
        train_split=script_args.dataset_train_split,
        test_split=script_args.dataset_test_split,
        max_train_samples=script_args.max_train_samples,
        revision=script_args.dataset_revision,
    )
    # Prompt-completion columns only: the metadata columns are for evaluation, not the loss.
    train = train.select_columns(["prompt", "completion"])
    if test is not None and training_args.eval_strategy != "no":
        test = test.select_columns(["prompt", "completion"])
    else:
        test = None
    logger.info("SFT on %s (%d train rows)", dataset_info["source"], len(train))

    model, tokenizer = load_model_and_tokenizer(model_args, training_args)
    chains = None
    if script_args.merge_step_chains:
        train, chains = merge_step_chains(train, tokenizer, max_length=training_args.max_length)
        logger.info("merged train steps: %s", chains.describe())
        if test is not None:
            test, stats = merge_step_chains(test, tokenizer, max_length=training_args.max_length)
            logger.info("merged eval steps: %s", stats.describe())
    init_wandb(script_args, training_args, model_args, dataset_info, job_type="sft")

    trainer = SFTTrainer(
        model=model,
        args=training_args,
        train_dataset=train,
        eval_dataset=test,
        processing_class=tokenizer,
        peft_config=build_peft_config(model_args, model, top_layers=script_args.lora_top_layers),
    )
    result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    result.metrics["peak_rss_mb"] = peak_rss_mb()
    result.metrics["bf16"] = training_args.bf16
    if chains is not None:
        result.metrics["steps_per_sequence"] = round(chains.steps_per_sequence, 3)
    trainer.log_metrics("train", result.metrics)
    trainer.save_metrics("train", result.metrics)
    trainer.save_state()

    out = save_and_publish(
        trainer,
        script_args,
        training_args,
        model_args,
        hub,
        stage="sft",
        dataset_info=dataset_info,
    )
    trainer.accelerator.print(f"SFT adapter saved to {out}")
    trainer.accelerator.end_training()


if __name__ == "__main__":
    sys.exit(run_recipe_main(main, TrlParser((SFTScriptArguments, SFTConfig, ModelConfig))))
