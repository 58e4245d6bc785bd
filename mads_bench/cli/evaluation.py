"""``mads-bench eval``: L-1 (turn level) and L-2 (trajectory level) evaluation.

With ``--model SPEC --dataset D`` it first runs the model (any backend spec) over the ``grpo``
rows of a split with Pre-Act or ReAct prompting and appends the predictions to
``--predictions`` (resumable, see `evaluators.predict`); it then scores that file (see
`evaluators.step_predictions`) and prints a markdown or JSON report, optionally logged to W&B.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mads_bench.cli import online
from mads_bench.cli.args import (
    add_domain_dir,
    backend_from_flag,
    non_negative_float,
    non_negative_int,
    positive_int,
)
from mads_bench.cli.output import print_json
from mads_bench.errors import UsageError
from mads_bench.files import atomic_write_text, check_outputs


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "eval",
        help="L-1 / L-2 evaluation of a model's steps, and online task success (eval online).",
    )
    sub = parser.add_subparsers(dest="eval_command", metavar="LEVEL", required=True)
    for level, text in (("l1", "turn-level metrics"), ("l2", "trajectory-level success")):
        cmd = sub.add_parser(level, help=f"L-{level[1]} {text} of a predictions JSONL file.")
        add_domain_dir(cmd)
        cmd.add_argument(
            "--predictions",
            type=Path,
            required=True,
            help="JSONL: one line per step with `prediction` and the grpo gold columns "
            "(written first when --model is given).",
        )
        run = cmd.add_argument_group("running a model first")
        run.add_argument("--model", help="Backend spec, e.g. transformers:smollm2-135m.")
        run.add_argument("--dataset", help="Dataset folder (build-dataset) or Hub id.")
        run.add_argument("--split", default="test", help="Split to run on (default test).")
        run.add_argument(
            "--style", choices=["pre_act", "react"], default="pre_act", help="Prompting style."
        )
        run.add_argument("--limit", type=positive_int, help="Only the first N steps.")
        run.add_argument("--batch-size", type=positive_int, default=8, help="Prompts per batch.")
        run.add_argument(
            "--max-new-tokens", type=positive_int, default=256, help="Tokens per step."
        )
        run.add_argument(
            "--temperature",
            type=non_negative_float,
            default=0.0,
            help="0 decodes greedily (default); above 0 each step is one sample (files written "
            "with different --seed values are independent samples of the policy).",
        )
        run.add_argument(
            "--seed", type=non_negative_int, default=0, help="Sampling seed (default 0)."
        )
        run.add_argument(
            "--constrain-tool-names",
            action="store_true",
            help="A tool step may only name a tool its prompt lists (transformers: models; "
            "how a policy trained with constrain_tool_names samples).",
        )
        run.add_argument(
            "--drafts",
            type=Path,
            help="Predictions of the same steps by a nearby policy (the SFT adapter a GRPO "
            "adapter started from): a transformers: model checks each in its prefill and "
            "decodes from where it departs. The same predictions, faster where the two agree.",
        )
        cmd.add_argument("--wandb-project", help="Log the report to this W&B project.")
        cmd.add_argument("--out", type=Path, help="Also write the JSON report here.")
        cmd.add_argument("--json", action="store_true", help="Print JSON instead of markdown.")
        if level == "l1":
            cmd.add_argument(
                "--similarity-model",
                default="mpnet",
                help="Sentence encoder for semantic similarity (default mpnet; 'none' skips).",
            )
        else:
            cmd.add_argument(
                "--max-edit-distance",
                type=non_negative_int,
                default=1,
                help="Edits tolerated between tool names after case folding (default 1).",
            )
        cmd.set_defaults(handler=run_l1 if level == "l1" else run_l2)
    online.register(sub)


def _predict(args: argparse.Namespace) -> None:
    """Run ``--model`` over the split into ``--predictions`` (when ``--model`` is given)."""
    check_outputs({"--predictions": args.predictions}, {"--out": args.out})
    if not args.model:
        return
    if not args.dataset:
        raise UsageError("--model needs --dataset")
    check_outputs(
        {"--dataset": Path(args.dataset), "--drafts": args.drafts},
        {"--predictions": args.predictions},
    )
    if args.drafts is not None and not args.drafts.is_file():
        raise UsageError(f"--drafts: {args.drafts}: no such file")
    from evaluators.predict import predict_steps
    from mads_bench.datasets import load_mads_dataset

    options = {}
    if args.constrain_tool_names:
        if not args.model.startswith("transformers:"):
            raise UsageError("--constrain-tool-names works with transformers:<model> backends")
        options["constrain_tool_names"] = True
    backend = backend_from_flag("--model", args.model, **options)
    rows = load_mads_dataset(args.dataset, "grpo", split=args.split)
    if args.limit is not None:
        rows = rows.select(range(min(args.limit, len(rows))))
    counts = predict_steps(
        rows,
        backend,
        args.predictions,
        style=args.style,
        batch_size=args.batch_size,
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
        seed=args.seed,
        drafts=args.drafts,
    )
    print(
        f"{counts['written']} predictions written, {counts['skipped']} already there",
        file=sys.stderr,
    )


def _log_wandb(data: dict, args: argparse.Namespace) -> None:
    import wandb

    def flat(prefix: str, value) -> dict:
        if isinstance(value, dict):
            return {
                k: v for key, sub in value.items() for k, v in flat(f"{prefix}/{key}", sub).items()
            }
        return {prefix: value} if isinstance(value, int | float) else {}

    config = {k: getattr(args, k, None) for k in ("model", "dataset", "split", "style")}
    with wandb.init(
        project=args.wandb_project, job_type=f"eval-{args.eval_command}", config=config
    ) as run:
        run.log(flat(args.eval_command, data))


def _emit(report, args: argparse.Namespace) -> int:
    data = report.to_dict()
    if args.wandb_project:
        _log_wandb(data, args)
    if args.out:
        atomic_write_text(args.out, json.dumps(data, indent=2) + "\n")
    if args.json:
        print_json(args, data)
    else:
        print(report.to_markdown())
    return 0


def run_l1(args: argparse.Namespace) -> int:
    from evaluators.l1.core import score_l1
    from evaluators.step_predictions import l1_steps, read_rows
    from mads_bench.embedding import SentenceEncoder

    _predict(args)
    steps = l1_steps(read_rows(args.predictions))
    model = None if args.similarity_model.lower() == "none" else args.similarity_model
    similarity = None if model is None else SentenceEncoder(model)
    return _emit(score_l1(steps, similarity=similarity), args)


def run_l2(args: argparse.Namespace) -> int:
    from evaluators.l2.core import score_l2
    from evaluators.step_predictions import l2_steps, read_rows

    _predict(args)
    steps = l2_steps(read_rows(args.predictions))
    return _emit(score_l2(steps, max_edit_distance=args.max_edit_distance), args)
