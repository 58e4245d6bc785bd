"""``mads-bench train``: run SFT then GRPO end to end, and publish a trained checkpoint.

``train run`` checks both stages before it launches the first (configs, dataset, models; see
`mads_bench.training.preflight`): bad input ends as one ``error:`` line, exit status 2. Paths
given on the command line are read from the working folder; the default configs are those of
the mads-bench checkout. A launch that fails ends with one ``error:`` line naming its log and
the last lines of that log, exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mads_bench.cli.args import positive_int
from mads_bench.files import atomic_write_text, check_outputs

ROLLOUT_CONFIGS = {
    "step": "recipes/smollm2-135m/grpo/config_demo.yaml",
    "conversation": "recipes/smollm2-135m/grpo/config_conversation.yaml",
}


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("train", help="Train (SFT -> GRPO) and publish checkpoints.")
    sub = parser.add_subparsers(dest="train_command", metavar="ACTION", required=True)

    run = sub.add_parser(
        "run",
        help="SFT, then GRPO from the SFT adapter, each under `accelerate launch` "
        "(defaults: the SmolLM2-135M CPU demo configs).",
    )
    run.add_argument("--dataset", required=True, help="build-dataset folder or Hub id.")
    run.add_argument("--out", type=Path, required=True, help="Writes OUT/sft and OUT/grpo.")
    run.add_argument(
        "--sft-config",
        type=Path,
        help="SFT YAML (default: the checkout's recipes/smollm2-135m/sft/config_demo.yaml).",
    )
    run.add_argument(
        "--rollout",
        choices=ROLLOUT_CONFIGS,
        help="GRPO mode: `step` (one Pre-Act step per completion, gold-step rewards; the paper; "
        "the default) or `conversation` (whole simulated conversations rewarded by what got "
        "done). Overrides `rollout` of a --grpo-config.",
    )
    run.add_argument(
        "--grpo-config",
        type=Path,
        help="GRPO YAML (default: the checkout's SmolLM2-135M CPU config of the --rollout "
        "mode: " + ", ".join(ROLLOUT_CONFIGS.values()) + ").",
    )
    run.add_argument(
        "--accelerate-config",
        type=Path,
        help="`accelerate launch --config_file` (default: the checkout's "
        "accelerate_configs/cpu.yaml).",
    )
    run.add_argument("--sft-max-steps", type=positive_int, help="Override max_steps of SFT.")
    run.add_argument("--grpo-max-steps", type=positive_int, help="Override max_steps of GRPO.")
    run.add_argument("--report-to", help="Override report_to of both (e.g. wandb).")
    run.add_argument("--summary", type=Path, help="Also write the JSON summary here.")
    run.set_defaults(handler=run_pipeline)

    push = sub.add_parser(
        "push", help="Upload a recipe's output (adapter, or merged with --merged) with its card."
    )
    push.add_argument("--checkpoint", type=Path, required=True, help="A recipe output_dir.")
    push.add_argument("--repo-id", required=True, help="Hub repo, user/name.")
    push.add_argument(
        "--base-model", help="Base model name/path (default: the adapter's base_model)."
    )
    push.add_argument("--merged", action="store_true", help="Merge the adapter into the base.")
    push.add_argument("--private", action="store_true", help="Create the repo private.")
    push.set_defaults(handler=run_push)


def _overrides(max_steps: int | None, report_to: str | None) -> list[str]:
    args = ["--max_steps", str(max_steps)] if max_steps is not None else []
    return args + (["--report_to", report_to] if report_to else [])


def _from_cwd(path: Path | None, default: str) -> str:
    """A path given on the command line, from the working folder; else the checkout's default
    (the recipes read relative paths from the checkout)."""
    return str(path.absolute()) if path is not None else default


def run_pipeline(args: argparse.Namespace) -> int:
    from mads_bench.training.pipeline import (
        CPU_ACCELERATE_CONFIG,
        DEMO_SFT_CONFIG,
        TrainingRunError,
        run_sft_then_grpo,
    )

    check_outputs({"--dataset": Path(args.dataset)}, {"--out": args.out}, folders=["--out"])

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    try:
        summary = run_sft_then_grpo(
            args.dataset,
            args.out,
            sft_config=_from_cwd(args.sft_config, DEMO_SFT_CONFIG),
            grpo_config=_from_cwd(args.grpo_config, ROLLOUT_CONFIGS[args.rollout or "step"]),
            sft_args=_overrides(args.sft_max_steps, args.report_to),
            grpo_args=_overrides(args.grpo_max_steps, args.report_to)
            + (["--rollout", args.rollout] if args.rollout else []),
            accelerate_config=_from_cwd(args.accelerate_config, CPU_ACCELERATE_CONFIG),
            log=log,
        )
    except TrainingRunError as err:  # one line of ours, then the tail of the recipe's log
        print(f"error: train run: {err}", file=sys.stderr)
        return 1
    text = json.dumps(summary, indent=2)
    if args.summary:
        atomic_write_text(args.summary, text + "\n")
    print(text)
    return 0


def run_push(args: argparse.Namespace) -> int:
    from mads_bench.training.hub import prepare_upload_folder, push_checkpoint

    checkpoint = args.checkpoint
    card_file = checkpoint / "README.md"
    adapter_config = checkpoint / "adapter_config.json"
    if not card_file.is_file() or not adapter_config.is_file():
        print(
            f"error: {checkpoint}: expected README.md and adapter_config.json "
            "(the output_dir of recipes/sft.py or recipes/grpo.py)",
            file=sys.stderr,
        )
        return 2
    base = args.base_model or json.loads(adapter_config.read_text())["base_model_name_or_path"]
    folder = prepare_upload_folder(
        checkpoint, card=card_file.read_text(), base_model=base, merged=args.merged
    )
    print(push_checkpoint(folder, args.repo_id, private=args.private or None))
    return 0
