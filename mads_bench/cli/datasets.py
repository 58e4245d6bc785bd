"""``mads-bench build-dataset`` and ``mads-bench push``: trajectories -> DatasetDicts -> Hub.

Example::

    mads-bench validate --trajectories t.jsonl --out-accepted ok.jsonl --out-rejected bad.jsonl
    mads-bench build-dataset --trajectories ok.jsonl --out out/mads
    mads-bench build-dataset --trajectories t.jsonl --include-unvalidated --out out/mads
    HF_TOKEN=... mads-bench push --dataset out/mads --repo-id me/mads-bench --private
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mads_bench.cli.args import add_domain_dir, unit_interval
from mads_bench.files import check_outputs


def register(commands: argparse._SubParsersAction) -> None:
    build = commands.add_parser(
        "build-dataset",
        help="Build the trajectories/sft/grpo DatasetDicts and the dataset card.",
        description="Read trajectory JSONL, keep validator-passed conversations (or unvalidated "
        "ones with --include-unvalidated), split by scenario with a held-out domain in test, "
        "and write OUT/trajectories, OUT/sft, OUT/grpo (save_to_disk) and OUT/README.md.",
    )
    add_domain_dir(build)
    build.add_argument(
        "--trajectories",
        type=Path,
        nargs="+",
        required=True,
        help="Trajectory JSONL files or folders of *.jsonl.",
    )
    build.add_argument("--out", type=Path, required=True, help="Output folder.")
    build.add_argument(
        "--test-size",
        type=unit_interval,
        default=None,
        help="Share of non-held-out scenarios in test (default 0.33: with one of six domains "
        "held out, ~44%% test like the paper's 106/83).",
    )
    build.add_argument(
        "--held-out-domain",
        action="append",
        default=None,
        help="Domain only in test (repeatable; it must occur in the data; default "
        "home_services where present; 'none' for no domain).",
    )
    build.add_argument("--seed", type=int, default=0, help="Split seed (default 0).")
    build.add_argument(
        "--include-unvalidated",
        action="store_true",
        help="Also use trajectories without a validator verdict.",
    )
    build.add_argument(
        "--context",
        choices=("full", "compact"),
        default="full",
        help="Step prompts: full (default, as simulated) or compact (tool signatures without "
        "descriptions, earlier turns' steps reduced to their action: ~30%% fewer tokens, for "
        "small models on CPU).",
    )
    build.add_argument("--overwrite", action="store_true", help="Replace an existing output.")
    build.set_defaults(handler=run_build)

    push = commands.add_parser(
        "push",
        help="Publish a build-dataset folder (three configs + card) to the Hugging Face Hub.",
        description="Push OUT/<config> with DatasetDict.push_to_hub(config_name=...) and the "
        "card README.md. Token: HF_TOKEN or the `hf auth login` cache; it is never printed.",
    )
    push.add_argument("--dataset", type=Path, required=True, help="Folder from build-dataset.")
    push.add_argument("--repo-id", required=True, help="Hub dataset repo, owner/name.")
    push.add_argument("--private", action="store_true", help="Create the repo as private.")
    push.set_defaults(handler=run_push)


def run_build(args: argparse.Namespace) -> int:
    import datasets

    from mads_bench.datasets import DEFAULT_TEST_SIZE, build_dataset, save_dataset

    held = args.held_out_domain
    if held is not None:
        held = [d for d in held if d.lower() != "none"]
    check_outputs({"--trajectories": args.trajectories}, {"--out": args.out}, folders=["--out"])
    datasets.disable_progress_bars()
    built = build_dataset(
        args.trajectories,
        test_size=DEFAULT_TEST_SIZE if args.test_size is None else args.test_size,
        held_out_domains=held,
        seed=args.seed,
        include_unvalidated=args.include_unvalidated,
        context=args.context,
    )
    save_dataset(built, args.out, overwrite=args.overwrite)
    report = built.report
    print(report.selection.summary())
    print(f"{report.excluded_steps} assistant step(s) with parse problems left out of sft/grpo")
    print("\n| config | train | test |\n| --- | --- | --- |")
    for name, counts in report.rows.items():
        print(f"| {name} | {counts['train']} | {counts['test']} |")
    convs = built.configs["trajectories"]
    for split in ("train", "test"):
        complexity = list(convs[split]["complexity"])
        unhappy = sum(c != "normal" for c in complexity)
        share = f"{100 * unhappy / len(complexity):.1f}%" if complexity else "n/a"
        print(f"\n{split}: {unhappy}/{len(complexity)} unhappy or impossible ({share})", end="")
    print(f"\n\nwrote {args.out} in {report.seconds:.2f}s (build) -- card: {args.out}/README.md")
    return 0


def run_push(args: argparse.Namespace) -> int:
    import datasets

    from mads_bench.datasets import push_dataset

    datasets.disable_progress_bars()
    result = push_dataset(args.dataset, args.repo_id, private=args.private)
    print(f"pushed to {result['url']}")
    for name, sizes in result["configs"].items():
        print(f"  {name}: " + ", ".join(f"{split} {n}" for split, n in sizes.items()))
    return 0
