"""``mads-bench stats``: how varied the language of simulated conversations is.

Example::

    mads-bench stats outputs/demo/trajectories.jsonl
    mads-bench stats outputs/demo/accepted.jsonl --sgd ../shared/data/sgd/dev --json

Per text kind (user messages, assistant ``say`` texts, ``<think>`` texts): distinct-1/2/3 over
a seeded sample of ``--sample`` utterances (distinct-n depends on the sample size: compare
equal sizes), the exact-duplicate rate, mean tokens; the number of scenarios whose
repetitions are identical conversations; the validator's acceptance by complexity for
validated files; and with ``--sgd DIR`` the same text figures for SGD user and system turns.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mads_bench.cli.args import add_command, positive_int
from mads_bench.cli.output import print_json
from mads_bench.errors import UsageError


def register(commands: argparse._SubParsersAction) -> None:
    parser = add_command(
        commands,
        "stats",
        "Variety of simulated language: distinct-n, duplicates, lengths, repetitions.",
        __doc__,
    )
    parser.add_argument("trajectories", nargs="+", type=Path, help="Trajectory JSONL file(s).")
    parser.add_argument(
        "--sample", type=positive_int, default=1500, help="Utterances sampled per kind (1500)."
    )
    parser.add_argument("--seed", type=int, default=0, help="Sampling seed (default 0).")
    parser.add_argument("--sgd", type=Path, help="SGD split folder for reference figures.")
    parser.add_argument("--json", action="store_true", help="Print JSON instead of markdown.")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from evaluators.realism import realism_stats, sgd_reference
    from simulation.trajectory_io import read_trajectories

    trajectories = [t for path in args.trajectories for t in read_trajectories(path)]
    if not trajectories:
        raise UsageError(f"{args.trajectories[0]}: no trajectories to describe")
    stats = realism_stats(trajectories, sample=args.sample, seed=args.seed)
    if args.sgd is not None:
        if not (args.sgd / "schema.json").is_file():
            raise UsageError(f"--sgd {args.sgd}: not an SGD split folder (no schema.json)")
        stats["reference"] = sgd_reference(args.sgd, sample=args.sample, seed=args.seed)
    if args.json:
        print_json(args, stats)
    else:
        print(render(stats), end="")
    return 0


def render(stats: dict) -> str:
    """The markdown tables of `realism_stats` (and its SGD reference)."""
    lines = [
        "| text | utterances | distinct-1 | distinct-2 | distinct-3 | exact-dup | mean tokens |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    rows = {**stats["texts"], **stats.get("reference", {})}
    for kind, f in rows.items():
        lines.append(
            f"| {kind} | {f['utterances']} | {f['distinct_1']:.3f} | {f['distinct_2']:.3f} | "
            f"{f['distinct_3']:.3f} | {f['exact_dup']:.3f} | {f['mean_tokens']:.1f} |"
        )
    same = stats["identical_repetitions"]
    lines.append(
        f"\n{stats['conversations']} conversations; {same['scenarios']} of "
        f"{same['of_repeated']} repeated scenarios have identical repetitions."
    )
    if stats["acceptance"]:
        lines += ["", "| complexity | accepted | validated | rate |", "| --- | --- | --- | --- |"]
        for complexity, a in stats["acceptance"].items():
            lines.append(f"| {complexity} | {a['accepted']} | {a['validated']} | {a['rate']:.3f} |")
    return "\n".join(lines) + "\n"
