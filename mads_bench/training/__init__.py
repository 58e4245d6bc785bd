"""Training support for `recipes/sft.py` and `recipes/grpo.py` (MADS §4, SPEC §6).

The recipes stay thin; the reusable parts live here: script arguments and the recipes'
`__main__` with its one-line errors (`config`), model and QLoRA loading through
`mads_bench.models` (`model_loading`), dataset loading and the GRPO conversation subset
(`data`), W&B set-up with secret redaction (`tracking`), model cards (`cards`), Hub publishing
(`hub`, `finish`), the SFT → GRPO pipeline (`pipeline`), one sequence per chain of steps sharing
a prompt (`step_chains`), one CPU adjustment of TRL's LM head (`trl_patches`) and the
conversation-level GRPO rollout (`rollout`, TRL's `rollout_func`).
"""

from mads_bench.training.cards import card_hyperparameters, render_model_card
from mads_bench.training.config import (
    GRPOScriptArguments,
    MadsScriptArguments,
    SFTScriptArguments,
    check_recipe_args,
    run_recipe_main,
)
from mads_bench.training.data import (
    dataset_record,
    load_training_splits,
    select_conversations,
    training_scenarios,
)
from mads_bench.training.finish import HubSettings, save_and_publish, take_hub_settings
from mads_bench.training.hub import hub_base_model_id, prepare_upload_folder, push_checkpoint
from mads_bench.training.model_loading import (
    build_peft_config,
    build_quantization_config,
    load_model_and_tokenizer,
    load_trainable_adapter,
    merge_adapter,
)
from mads_bench.training.step_chains import ChainStats, merge_step_chains
from mads_bench.training.tracking import init_wandb, peak_rss_mb, redact_secrets
from mads_bench.training.trl_patches import score_labelled_positions_on_cpu

__all__ = [
    "ChainStats",
    "GRPOScriptArguments",
    "HubSettings",
    "MadsScriptArguments",
    "SFTScriptArguments",
    "build_peft_config",
    "build_quantization_config",
    "card_hyperparameters",
    "check_recipe_args",
    "dataset_record",
    "hub_base_model_id",
    "init_wandb",
    "load_model_and_tokenizer",
    "load_trainable_adapter",
    "load_training_splits",
    "merge_adapter",
    "merge_step_chains",
    "peak_rss_mb",
    "prepare_upload_folder",
    "push_checkpoint",
    "redact_secrets",
    "render_model_card",
    "run_recipe_main",
    "save_and_publish",
    "score_labelled_positions_on_cpu",
    "select_conversations",
    "take_hub_settings",
    "training_scenarios",
]
