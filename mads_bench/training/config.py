"""Script arguments of the training recipes (the `ScriptArguments` part of `TrlParser`).

The recipes parse three dataclasses, open-r1 style:
`TrlParser((SFTScriptArguments, SFTConfig, ModelConfig))` for `recipes/sft.py` and
`TrlParser((GRPOScriptArguments, GRPOConfig, ModelConfig))` for `recipes/grpo.py`. TRL's own
`SFTConfig` / `GRPOConfig` / `ModelConfig` carry the trainer, QLoRA (`load_in_4bit`,
`bnb_4bit_quant_type`, `use_bnb_nested_quant`) and LoRA (`lora_r`, `lora_target_modules`, ...)
settings, so the classes here only add what mads-bench needs on top: where the dataset lives,
W&B metadata, the GRPO reward names, the SFT adapter GRPO starts from, and publishing options.
`run_recipe_main` is each recipe's `__main__`: parse, check what no YAML may leave out
(`dataset_name`, `model_name_or_path`), run, and report expected failures in one line.

Example:
    >>> from trl import GRPOConfig, ModelConfig, TrlParser
    >>> parser = TrlParser((GRPOScriptArguments, GRPOConfig, ModelConfig))  # doctest: +SKIP
    >>> sys.exit(run_recipe_main(main, parser))  # doctest: +SKIP
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trl import ScriptArguments

from mads_bench.errors import MadsBenchError, UsageError

if TYPE_CHECKING:
    from trl import ModelConfig, TrlParser

__all__ = [
    "GRPOScriptArguments",
    "MadsScriptArguments",
    "SFTScriptArguments",
    "check_recipe_args",
    "run_recipe_main",
]


@dataclass
class MadsScriptArguments(ScriptArguments):
    """Arguments shared by both recipes (TRL's `ScriptArguments` plus mads-bench's own).

    Args:
        dataset_name (`str`): Folder written by `mads-bench build-dataset`, or a Hub dataset id;
            read with `mads_bench.datasets.load_mads_dataset` (inherited from TRL).
        dataset_config (`str`, *optional*): `sft` or `grpo`; each recipe fills its own default.
        dataset_revision (`str`, *optional*): Hub revision of the dataset, recorded in W&B and
            in the model card (a local folder is identified by its content fingerprint).
        max_train_samples (`int`, *optional*): Keep only the first N training rows (smoke runs).
        wandb_project (`str`, *optional*): W&B project (else `$WANDB_PROJECT`, else
            `mads-bench`); only used when `report_to` includes `wandb`.
        wandb_entity (`str`, *optional*): W&B entity (team or user).
        wandb_tags (`list[str]`, *optional*): Tags of the W&B run.
        eval_results_path (`str`, *optional*): JSON file with L-1/L-2 results
            (`mads-bench eval l1|l2 --out`) to show in the model card.
        push_merged (`bool`): With `push_to_hub`, upload the adapter merged into the base model
            (full weights) instead of the LoRA adapter alone.
        lora_top_layers (`int`, *optional*): Put the new LoRA adapter on the last N decoder
            layers only (peft's `layers_to_transform`; every layer of a model with N or fewer).
            The backward pass then stops at the lowest adapted layer, which roughly halves a
            CPU step; None adapts every layer.
        native_bf16 (`bool`): With `use_cpu`, train in bf16 autocast (and compute 4-bit layers
            in bf16) when this CPU runs bf16 natively (`mads_bench.precision.native_bf16`:
            avx512_bf16 or AMX), in float32 otherwise. Same as passing `--bf16 true` on such
            a machine; `bf16: true` in the YAML forces bf16 everywhere.
    """

    dataset_revision: str | None = field(
        default=None, metadata={"help": "Hub revision of the dataset (recorded, not fetched)."}
    )
    max_train_samples: int | None = field(
        default=None, metadata={"help": "Keep only the first N training rows."}
    )
    wandb_project: str | None = field(default=None, metadata={"help": "W&B project."})
    wandb_entity: str | None = field(default=None, metadata={"help": "W&B entity."})
    wandb_tags: list[str] | None = field(default=None, metadata={"help": "W&B run tags."})
    eval_results_path: str | None = field(
        default=None, metadata={"help": "L-1/L-2 results JSON shown in the model card."}
    )
    push_merged: bool = field(
        default=False,
        metadata={"help": "Push the adapter merged into the base model instead of the adapter."},
    )
    lora_top_layers: int | None = field(
        default=None,
        metadata={"help": "LoRA on the last N decoder layers only (default: every layer)."},
    )
    native_bf16: bool = field(
        default=False,
        metadata={"help": "With use_cpu: bf16 autocast where this CPU runs bf16 natively."},
    )


@dataclass
class SFTScriptArguments(MadsScriptArguments):
    """`recipes/sft.py` arguments; the dataset config defaults to `sft`.

    Args:
        merge_step_chains (`bool`): Train one sequence per chain of steps whose prompts extend
            each other (`mads_bench.training.step_chains`): every step keeps its per-token
            loss, the shared prefix is run once (a whole conversation with `--context full`,
            a turn with `compact`). A chain then counts as one row of a batch.
    """

    dataset_config: str | None = field(
        default="sft", metadata={"help": "Dataset config: `sft` (prompt/completion)."}
    )
    merge_step_chains: bool = field(
        default=False,
        metadata={"help": "One sequence per chain of steps sharing their prompt (same loss)."},
    )


@dataclass
class GRPOScriptArguments(MadsScriptArguments):
    """`recipes/grpo.py` arguments.

    Args:
        reward_funcs (`list[str]`): Reward names for `rewards.get_reward_funcs` (registry
            names, `name:setting` factories or dotted import paths); their weights are TRL's
            `GRPOConfig.reward_weights`. A weight of 0 logs a reward without optimising it.
        sft_adapter_path (`str`, *optional*): The SFT LoRA adapter GRPO starts from. The
            adapter is loaded onto the (4-bit) base model and keeps training: GRPO continues
            the SFT adapter, it does not stack a second one nor merge (see `recipes/README.md`).
        num_conversations (`int`, *optional*): Train on a seeded subset of this many
            conversations (`conversation_id`), all of their steps (MADS §4.1: 50).
        subset_seed (`int`): Seed of that subset.
        rollout (`str`): `step` (the paper's method: one Pre-Act step per completion, scored
            against the gold step) or `conversation` (a completion is a whole simulated
            conversation the policy plays as the assistant, scored by what got done; see
            `mads_bench.training.rollout`). In conversation mode `num_conversations` samples
            training scenarios and `max_completion_length` caps a whole rollout's tokens.
        scenarios_file (`str`, *optional*): Conversation mode: scenario file for training
            scenarios that are not hand-written.
        rollout_repetitions (`int`): Conversation mode: conversation seeds per scenario.
        rollout_user (`str`): Conversation mode: user agent spec (`scripted` or a backend).
        max_step_tokens (`int`): Conversation mode: new tokens per assistant step.
        max_assistant_steps (`int`): Conversation mode: assistant steps per conversation.
        max_turns (`int`): Conversation mode: user turns per conversation.
        rollout_weights (`str`): What generates the rollouts without vLLM: `auto` (default;
            on CPU a plain bf16/float32 copy of the policy, the 4-bit base dequantised and the
            adapter merged in, refreshed after each optimizer step:
            `mads_bench.training.fast_weights`), `copy` (that copy on any device) or
            `trained` (the trained model itself, TRL's own generation).
        curriculum_candidates (`int`): Step mode: before training, probe this many training
            rows with the starting policy and train only on those whose sampled rewards
            differ (`mads_bench.training.curriculum`); 0 (default) trains on every row.
        curriculum_samples (`int`): Completions sampled per probed row.
        curriculum_keep (`int`, *optional*): Keep at most this many probed rows, the largest
            reward spread first.
        curriculum_reward (`str`, *optional*): Rank and keep the probed rows by the spread of
            this one reward (a name in `reward_funcs`, e.g. `tool_name`: rows where the policy
            sometimes names the gold tool) instead of the weighted total; a reward that is
            `None` on a row (the tool name on a say step) gives that row no spread.
        constrain_tool_names (`bool`): Step mode: a sampled tool step can only name a tool
            its prompt lists (`mads_bench.tool_constraint`), so a group's tool-name rewards
            differ by the tool chosen rather than by whether it exists. Needs rollouts from
            the fast copy (`rollout_weights` `auto` on CPU, or `copy`); evaluate the policy
            with the same decoding (`eval l1 --model ... --constrain-tool-names`).
    """

    dataset_config: str | None = field(
        default="grpo", metadata={"help": "Dataset config: `grpo` (prompt + gold columns)."}
    )
    reward_funcs: list[str] = field(
        default_factory=lambda: ["action_type", "tool_call", "semantic"],
        metadata={"help": "Reward names (rewards registry), weights in `reward_weights`."},
    )
    sft_adapter_path: str | None = field(
        default=None, metadata={"help": "SFT LoRA adapter to continue training from."}
    )
    num_conversations: int | None = field(
        default=None, metadata={"help": "Seeded subset of this many conversations."}
    )
    subset_seed: int = field(default=0, metadata={"help": "Seed of the conversation subset."})
    rollout: str = field(
        default="step",
        metadata={"help": "`step` (gold-step rewards) or `conversation` (whole conversations).",
                  "choices": ["step", "conversation"]},
    )  # fmt: skip
    scenarios_file: str | None = field(
        default=None, metadata={"help": "Conversation mode: file of non-hand-written scenarios."}
    )
    rollout_repetitions: int = field(
        default=1, metadata={"help": "Conversation mode: conversation seeds per scenario."}
    )
    rollout_user: str = field(
        default="scripted", metadata={"help": "Conversation mode: user agent spec."}
    )
    max_step_tokens: int = field(
        default=192, metadata={"help": "Conversation mode: new tokens per assistant step."}
    )
    max_assistant_steps: int = field(
        default=16, metadata={"help": "Conversation mode: assistant steps per conversation."}
    )
    max_turns: int = field(
        default=12, metadata={"help": "Conversation mode: user turns per conversation."}
    )
    rollout_weights: str = field(
        default="auto",
        metadata={"help": "Rollouts from `auto` (a merged copy on CPU), `copy` or `trained`.",
                  "choices": ["auto", "copy", "trained"]},
    )  # fmt: skip
    curriculum_candidates: int = field(
        default=0, metadata={"help": "Step mode: probe this many rows, train where rewards differ."}
    )
    curriculum_samples: int = field(
        default=4, metadata={"help": "Curriculum: completions sampled per probed row."}
    )
    curriculum_keep: int | None = field(
        default=None, metadata={"help": "Curriculum: keep at most this many rows."}
    )
    curriculum_reward: str | None = field(
        default=None,
        metadata={"help": "Curriculum: rank rows by this reward's spread (default: the total)."},
    )
    constrain_tool_names: bool = field(
        default=False,
        metadata={"help": "Step mode: sampled tool steps only name tools their prompt lists."},
    )


def check_recipe_args(script_args: MadsScriptArguments, model_args: ModelConfig) -> None:
    """Check the arguments a recipe cannot start without, before anything is loaded.

    Args:
        script_args (`MadsScriptArguments`): Needs `dataset_name`.
        model_args (`trl.ModelConfig`): Needs `model_name_or_path`.

    Raises:
        `UsageError`: Naming the missing flag.

    Example:
        >>> from trl import ModelConfig
        >>> model_args = ModelConfig(model_name_or_path="tiny-lm")
        >>> check_recipe_args(SFTScriptArguments(), model_args)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        mads_bench.errors.UsageError: --dataset_name is required: a folder written by ...
    """
    if not script_args.dataset_name:
        raise UsageError(
            "--dataset_name is required: a folder written by `mads-bench build-dataset` or a "
            "Hub id (the configs leave it to the command line)"
        )
    if not model_args.model_name_or_path:
        raise UsageError("--model_name_or_path is required: a model name (`tiny-lm`) or folder")


def run_recipe_main(main: Callable[[Any, Any, Any], None], parser: TrlParser) -> int:
    """Parse a recipe's arguments (YAML and CLI), check them and run `main`.

    Expected failures end as they do in the `mads-bench` CLI: one line, exit status 2.

    Args:
        main (`Callable`): The recipe's `main(script_args, training_args, model_args)`.
        parser (`trl.TrlParser`): Parser over the recipe's three dataclasses.

    Returns:
        `int`: The exit status: 0, or 2 after printing `error: <one line>` to stderr for a
        `MadsBenchError` (a missing flag, a model not set up or damaged), an `OSError` (an
        unreadable `--config` or adapter folder) or a `ValueError` from the config classes'
        own checks while parsing. Anything else is a bug: it keeps its traceback.
    """
    try:
        try:
            script_args, training_args, model_args = parser.parse_args_and_config()
        except ValueError as error:  # TRL's and transformers' checks of the settings
            raise UsageError(_one_line(error)) from error
        check_recipe_args(script_args, model_args)
        if _wants_native_bf16(script_args, training_args):
            script_args, training_args, model_args = parser.parse_args_and_config(
                [*sys.argv[1:], "--bf16", "true"]
            )
        main(script_args, training_args, model_args)
    except (MadsBenchError, OSError) as error:
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return 2
    return 0


def _wants_native_bf16(script_args: Any, training_args: Any) -> bool:
    from mads_bench.precision import native_bf16

    asked = getattr(script_args, "native_bf16", False) and training_args.use_cpu
    return bool(asked and not training_args.bf16 and native_bf16("cpu"))


def _one_line(error: BaseException) -> str:
    if isinstance(error, OSError) and not isinstance(error, MadsBenchError) and error.filename:
        text = f"{error.filename}: {error.strerror or error}"
    else:
        text = str(error)
    return (text.strip().splitlines() or [type(error).__name__])[0]
