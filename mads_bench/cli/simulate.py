"""``mads-bench simulate``: run user/assistant/tool agents over scenarios into trajectories JSONL.

Scenario sources (pick one):

- default: the hand-written scenarios of ``--domain`` (repeatable; default all six, no mock);
- ``--num-scenarios N``: N scenarios from the seeded generator (seed = ``--seed``, complexity
  ``--mix``, stratified over the whole run) spread over the ``--domain`` s: each gets
  ``N // D``, the first ``N % D`` one more. ``--with-hand-written`` adds the hand-written
  ones in front. The generated scenarios are also written next to the output
  (``scenarios.jsonl``) for ``validate --scenarios``;
- ``--scenarios FILE``: a scenario file.

Every scenario runs ``-k`` times (repetitions). ``--shard i/n`` keeps conversation number j
of that plan when ``j % n == i``: the n shard files together hold exactly the unsharded run.
``--out`` is a file when it ends in a suffix such as ``.jsonl``, otherwise a folder that gets
``trajectories.jsonl`` (``trajectories.shard-i-of-n.jsonl`` when sharded). Records are
written in plan order at any ``--concurrency``, so a seed gives the same bytes.

Example::

    mads-bench simulate --out outputs/run --num-scenarios 240 --seed 0 --concurrency 2
    mads-bench simulate --out outputs/run --num-scenarios 240 --seed 0 --shard 1/4 --resume
    mads-bench simulate --scenarios generated.jsonl --seed 1 --out t.jsonl --resume
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mads_bench.catalog import default_domain_names, domain_names
from mads_bench.cli.args import (
    add_command,
    add_domain_dir,
    backend_from_flag,
    positive_int,
    scenario_count,
)
from mads_bench.cli.scenarios import parse_mix
from mads_bench.errors import UsageError
from mads_bench.files import atomic_write_text, check_outputs
from mads_bench.generator import DEFAULT_MIX

_MIX_TEXT = ",".join(f"{k}={v}" for k, v in DEFAULT_MIX.items())


def register(commands: argparse._SubParsersAction) -> None:
    parser = add_command(
        commands,
        "simulate",
        "Simulate conversations (user, assistant and tool agents) into trajectories JSONL.",
        __doc__,
    )
    add_domain_dir(parser)
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--domain",
        action="append",
        choices=domain_names(),
        help="Domain of the scenarios, hand-written or generated (repeatable; default: all "
        "but mock).",
    )
    source.add_argument("--scenarios", type=Path, help="Scenario file (YAML, JSON or JSONL).")
    parser.add_argument(
        "--num-scenarios",
        type=scenario_count,
        help="Generate N scenarios (seeded by --seed) spread over the domains, instead of "
        "the hand-written ones.",
    )
    parser.add_argument(
        "--with-hand-written",
        action="store_true",
        help="With --num-scenarios: also run the domains' hand-written scenarios (first).",
    )
    parser.add_argument(
        "--mix",
        type=parse_mix,
        default=DEFAULT_MIX,
        help=f"Complexity shares of generated scenarios (default {_MIX_TEXT}).",
    )
    parser.add_argument(
        "--num-conversations-per-scenario",
        "-k",
        type=positive_int,
        default=1,
        help="Conversations per scenario (repetitions 0..K-1; default 1).",
    )
    parser.add_argument("--seed", type=int, default=0, help="Run seed (default 0).")
    parser.add_argument(
        "--user",
        default="scripted",
        help="User agent spec (default scripted). openai: specs bound each request with "
        "'openai:<model>@<url>?timeout=S&max_retries=N&deadline=S'.",
    )
    parser.add_argument(
        "--assistant", default="scripted", help="Assistant agent spec (default scripted)."
    )
    parser.add_argument(
        "--max-failures",
        type=positive_int,
        default=3,
        help="Stop after this many conversations in a row failed (e.g. a backend that does "
        "not answer); rerun with --resume once it is fixed (default 3).",
    )
    parser.add_argument(
        "--style", choices=("pre_act", "react"), default="pre_act", help="Assistant step format."
    )
    parser.add_argument(
        "--max-turns", type=positive_int, default=12, help="User-turn cap (default 12)."
    )
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        default=1,
        help="Conversations in flight (default 1). Threads for openai:/fake: agents, worker "
        "processes for scripted ones; for transformers: threads whose steps share batches.",
    )
    parser.add_argument(
        "--executor",
        choices=("auto", "sequential", "thread", "process"),
        default="auto",
        help="Override how --concurrency is used (default auto, see above).",
    )
    parser.add_argument("--shard", help="Run only shard i of n ('i/n', 0-based).")
    parser.add_argument(
        "--out", type=Path, required=True, help="Output JSONL file, or a folder (no suffix)."
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="Continue an existing output: skip conversations it holds, repair a torn last line.",
    )
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    parser.set_defaults(handler=run_simulate)


def output_path(out: Path, shard: tuple[int, int] | None) -> Path:
    """The trajectory file for ``--out``: the path itself, or a file inside a folder.

    Example:
        >>> output_path(Path("runs/a"), (1, 4)).as_posix()
        'runs/a/trajectories.shard-1-of-4.jsonl'
    """
    if out.suffix and not out.is_dir():
        return out
    name = f"trajectories.shard-{shard[0]}-of-{shard[1]}.jsonl" if shard else "trajectories.jsonl"
    return out / name


def select_scenarios(args: argparse.Namespace) -> tuple[list, list]:
    """(all scenarios to run, the generated ones) for the parsed arguments."""
    from mads_bench.catalog import load_domain, load_scenario_file
    from mads_bench.generator import generate_for_domains

    if args.scenarios:
        return load_scenario_file(args.scenarios), []
    names = args.domain or default_domain_names()
    hand_written = [s for name in names for s in load_domain(name).scenarios]
    if args.num_scenarios is None:
        return hand_written, []
    packs = [load_domain(name) for name in names]
    try:
        generated = generate_for_domains(packs, args.num_scenarios, args.seed, args.mix)
    except ValueError as err:
        raise UsageError(f"--num-scenarios {args.num_scenarios}: {err}") from None
    return (hand_written if args.with_hand_written else []) + generated, generated


def no_scenarios_message(args: argparse.Namespace) -> str:
    """Why a command has nothing to run: the scenario file or the domains hold no scenario."""
    if getattr(args, "scenarios", None):
        return f"--scenarios {args.scenarios}: the file holds no scenario"
    names = args.domain or default_domain_names()
    return f"no scenario to run: domain(s) {', '.join(names)} hold none"


def _check_args(args: argparse.Namespace) -> None:
    if args.num_scenarios is not None and args.scenarios:
        raise UsageError(
            "--num-scenarios generates scenarios; it cannot be combined with --scenarios"
        )
    if args.with_hand_written and args.num_scenarios is None:
        raise UsageError("--with-hand-written only applies with --num-scenarios")
    if args.mix != DEFAULT_MIX and args.num_scenarios is None:
        raise UsageError(
            "--mix only applies with --num-scenarios (hand-written scenarios fix their own)"
        )


def run_simulate(args: argparse.Namespace) -> int:
    from simulation.parallel import SimulationSettings, choose_executor, parse_shard
    from simulation.runner import RunLimits
    from simulation.simulate_run import simulate_run, summary_tables

    _check_args(args)
    try:
        shard = parse_shard(args.shard) if args.shard else None
    except ValueError as err:
        raise UsageError(f"--shard {args.shard}: {err}") from None
    try:
        choose_executor(args.user, args.assistant, args.concurrency, args.executor)
    except ValueError as err:
        raise UsageError(str(err)) from None
    backends = {
        spec: backend_from_flag(flag, spec)
        for flag, spec in (("--user", args.user), ("--assistant", args.assistant))
        if spec != "scripted"
    }
    scenarios, generated = select_scenarios(args)
    if not scenarios:
        raise UsageError(no_scenarios_message(args))
    out = output_path(args.out, shard)
    scenario_file = out.parent / (
        "scenarios.jsonl" if out.parent == args.out else f"{out.stem}.scenarios.jsonl"
    )
    check_outputs(
        {"--scenarios": args.scenarios},
        {"--out": out, "--out (generated scenarios)": scenario_file if generated else None},
    )
    if generated:
        atomic_write_text(scenario_file, "".join(s.model_dump_json() + "\n" for s in generated))
        print(f"{len(generated)} generated scenarios in {scenario_file}", file=sys.stderr)
    settings = SimulationSettings(
        args.seed, args.user, args.assistant, args.style, RunLimits(max_turns=args.max_turns)
    )
    report = simulate_run(
        scenarios,
        out,
        settings=settings,
        repetitions=args.num_conversations_per_scenario,
        concurrency=args.concurrency,
        executor=args.executor,
        shard=shard,
        resume=args.resume,
        max_failures=args.max_failures,
        backends=backends,
        progress=not args.no_progress,
    )
    where = f"shard {shard[0]}/{shard[1]}, " if shard else ""
    print(
        f"\n{report.written} conversations written to {out} ({where}{report.skipped} already "
        f"there; executor {report.executor}, concurrency {args.concurrency})"
    )
    print(summary_tables(report.trajectories))
    if report.partial:
        print(
            f"error: partial run: {report.missing} of {report.planned} planned conversations "
            f"are not in {out} ({len(report.failures)} failed); rerun with --resume",
            file=sys.stderr,
        )
        return 1
    return 0
