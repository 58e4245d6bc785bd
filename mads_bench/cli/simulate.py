"""``mads-bench simulate``: run user/assistant/tool agents over scenarios into trajectories JSONL.

Example::

    mads-bench simulate --domain mock --num-conversations-per-scenario 2 --out t.jsonl
    mads-bench simulate --scenarios generated.jsonl --seed 1 --out t.jsonl --resume
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from mads_bench.catalog import domain_names


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "simulate",
        help="Simulate conversations (user, assistant and tool agents) into trajectories JSONL.",
        description="Simulate conversations and append one trajectory per line to --out. "
        "Agents are 'scripted' (offline, deterministic) or a backend spec such as "
        "'transformers:<model>' or 'openai:<model>@<base_url>'.",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--domain",
        action="append",
        choices=domain_names(),
        help="Hand-written scenarios of this domain (repeatable; default: all but mock).",
    )
    source.add_argument("--scenarios", type=Path, help="Scenario file (YAML, JSON or JSONL).")
    parser.add_argument(
        "--num-conversations-per-scenario",
        "-k",
        type=int,
        default=1,
        help="Conversations per scenario (repetitions 0..K-1; default 1).",
    )
    parser.add_argument("--seed", type=int, default=0, help="Run seed (default 0).")
    parser.add_argument("--user", default="scripted", help="User agent spec (default scripted).")
    parser.add_argument(
        "--assistant", default="scripted", help="Assistant agent spec (default scripted)."
    )
    parser.add_argument(
        "--style", choices=("pre_act", "react"), default="pre_act", help="Assistant step format."
    )
    parser.add_argument("--max-turns", type=int, default=12, help="User-turn cap (default 12).")
    parser.add_argument("--out", type=Path, required=True, help="Output trajectories JSONL.")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="Continue an existing --out: skip conversations it holds, repair a torn last line.",
    )
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    parser.set_defaults(handler=run_simulate)


def run_simulate(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from mads_bench.catalog import load_domain
    from mads_bench.cli.scenarios import load_scenario_file
    from simulation.runner import RunLimits, simulate, trajectory_id
    from simulation.trajectory_io import TrajectoryWriter

    if args.num_conversations_per_scenario < 1:
        print("error: --num-conversations-per-scenario must be >= 1", file=sys.stderr)
        return 2
    if args.scenarios:
        scenarios = load_scenario_file(args.scenarios)
    else:
        names = args.domain or [n for n in domain_names() if n != "mock"]
        scenarios = [s for name in names for s in load_domain(name).scenarios]
    jobs = [(s, r) for s in scenarios for r in range(args.num_conversations_per_scenario)]
    backends = {}
    for spec in {args.user, args.assistant} - {"scripted"}:
        from simulation.backends import get_backend

        backends[spec] = get_backend(spec)
    limits = RunLimits(max_turns=args.max_turns)
    try:
        writer = TrajectoryWriter(args.out, resume=args.resume)
    except FileExistsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if writer.repaired_bytes:
        print(f"repaired a torn last line ({writer.repaired_bytes} bytes)", file=sys.stderr)
    todo = [(s, r) for s, r in jobs if trajectory_id(s.id, r, args.seed) not in writer]
    outcomes: Counter[str] = Counter()
    behaviors: Counter[str] = Counter()
    failures = 0
    with writer, tqdm(total=len(todo), desc="simulate", disable=args.no_progress) as bar:
        for scenario, repetition in todo:
            try:
                trajectory = simulate(
                    scenario,
                    seed=args.seed,
                    repetition=repetition,
                    user=args.user,
                    assistant=args.assistant,
                    style=args.style,
                    limits=limits,
                    backends=backends,
                )
            except Exception as err:  # a backend failure must not lose the finished records
                failures += 1
                print(f"error: {scenario.id} r{repetition}: {err!r}", file=sys.stderr)
                bar.update()
                continue
            writer.write(trajectory)
            outcomes[f"{trajectory.complexity}/{trajectory.end_reason}"] += 1
            behaviors.update({i.kind for i in trajectory.injections})
            bar.update()
    skipped = len(jobs) - len(todo)
    print(f"\n{len(todo) - failures} conversations written to {args.out} ({skipped} already there)")
    print("\n| complexity/end | conversations |\n| --- | --- |")
    for key, count in sorted(outcomes.items()):
        print(f"| {key} | {count} |")
    if behaviors:
        print("\n| behavior seen | conversations |\n| --- | --- |")
        for key, count in sorted(behaviors.items()):
            print(f"| {key} | {count} |")
    return 1 if failures else 0
