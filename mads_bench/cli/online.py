"""``mads-bench eval online``: the candidate assistant in live conversations, scored by outcome.

Example::

    mads-bench eval online --assistant transformers:smollm2-135m --domain banking -k 2 \\
        --out outputs/online/base
    mads-bench eval online --assistant scripted --dataset outputs/demo/dataset --split test \\
        --out outputs/online/oracle --json
    mads-bench eval online --compare outputs/online/a/report.json outputs/online/b/report.json
    mads-bench eval online --battery --scenarios outputs/sim/scenarios.jsonl

Scenarios come from ``--domain`` (hand-written; repeatable, default all six), ``--scenarios
FILE`` (generated or hand-written) or ``--dataset DIR --split test`` (the scenarios behind a
built dataset's split, so train and test stay disjoint). Each runs ``-k`` trials. The report
(``OUT/report.json``, ``OUT/report.md``) gives success, its three parts (state, told, ended),
pass^k for k = 1..K, partial credit, malformed steps, turns and tool calls, overall and by
domain, complexity and behavior kind, with 95% bootstrap CIs over scenarios.

``--battery`` plays the scenarios with the assistants that try to game the score instead
(:mod:`evaluators.online.adversaries`: one that does nothing and says "All done", one that asks
forever, ...) beside the scripted gold policy, and prints how often each succeeded: the cheats
must score 0, the gold policy 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mads_bench.catalog import default_domain_names, domain_names
from mads_bench.cli.args import add_command, add_domain_dir, backend_from_flag, positive_int
from mads_bench.cli.output import print_json
from mads_bench.cli.simulate import no_scenarios_message
from mads_bench.errors import UsageError
from mads_bench.files import check_outputs
from simulation.agents.context import CONTEXTS


def register(sub: argparse._SubParsersAction) -> None:
    cmd = add_command(
        sub,
        "online",
        "Online task success and pass^k of an assistant in simulated conversations.",
        __doc__,
    )
    cmd.add_argument("--assistant", help="Assistant spec: scripted, transformers:..., openai:...")
    add_domain_dir(cmd)
    cmd.add_argument("--user", default="scripted", help="User agent spec (default scripted).")
    source = cmd.add_mutually_exclusive_group()
    source.add_argument("--domain", action="append", choices=domain_names(), help="Domain.")
    source.add_argument("--scenarios", type=Path, help="Scenario file (YAML, JSON or JSONL).")
    source.add_argument(
        "--dataset", type=Path, help="A build-dataset folder: its split's scenarios."
    )
    cmd.add_argument("--split", default="test", help="Split of --dataset (default test).")
    cmd.add_argument("-k", "--trials", type=positive_int, default=1, help="Trials per scenario.")
    cmd.add_argument("--seed", type=int, default=0, help="Run seed (default 0).")
    cmd.add_argument("--style", choices=("pre_act", "react"), default="pre_act")
    cmd.add_argument(
        "--context",
        choices=CONTEXTS,
        default="full",
        help="What a model assistant reads: the context its training data was built with "
        "(build-dataset --context; default %(default)s).",
    )
    cmd.add_argument("--max-turns", type=positive_int, default=12, help="User-turn cap (12).")
    cmd.add_argument("--concurrency", type=positive_int, default=1, help="Conversations in flight.")
    cmd.add_argument("--max-failures", type=positive_int, default=3, help="As in simulate.")
    cmd.add_argument("--out", type=Path, help="Output folder.")
    cmd.add_argument("--resume", action="store_true", help="Continue OUT/trajectories.jsonl.")
    cmd.add_argument("--json", action="store_true", help="Print JSON instead of markdown.")
    cmd.add_argument(
        "--sage", action="store_true", help="Also count SAGE-Core failures per turn (slower)."
    )
    cmd.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    cmd.add_argument(
        "--compare", nargs=2, type=Path, metavar=("A", "B"), help="Paired A - B of two reports."
    )
    cmd.add_argument(
        "--battery",
        action="store_true",
        help="Play the scenarios with the cheating assistants and the scripted gold policy "
        "(instead of --assistant) and print what each earned.",
    )
    cmd.set_defaults(handler=run_online)


def _scenarios(args: argparse.Namespace) -> list:
    from mads_bench.catalog import load_all_scenarios, load_domain, load_scenario_file

    if args.scenarios:
        return load_scenario_file(args.scenarios)
    if args.dataset:
        from mads_bench.datasets import load_mads_dataset

        rows = load_mads_dataset(str(args.dataset), "trajectories", split=args.split)
        wanted = list(dict.fromkeys(rows["scenario_id"]))
        known = {s.id: s for s in load_all_scenarios(include_mock=True)}
        unknown = [s for s in wanted if s not in known]
        if unknown:
            raise UsageError(
                f"--dataset {args.dataset}: {len(unknown)} scenario(s) of split {args.split!r} "
                f"are not hand-written (e.g. {unknown[0]!r}); pass their file with --scenarios"
            )
        return [known[s] for s in wanted]
    names = args.domain or default_domain_names()
    return [s for name in names for s in load_domain(name).scenarios]


def run_online(args: argparse.Namespace) -> int:
    from evaluators.online import compare_reports, render_markdown

    if args.compare:
        a, b = (_load_report(path) for path in args.compare)
        try:
            result = compare_reports(a, b)
        except ValueError as err:
            raise UsageError(f"--compare {args.compare[0]} {args.compare[1]}: {err}") from None
        if args.json:
            print_json(args, result)
        else:
            low, high = result["ci95"]
            print(
                f"success A {result['success_rate_a']:.3f} vs B {result['success_rate_b']:.3f} "
                f"on {result['scenarios']} shared scenarios: A - B = {result['delta']:+.3f} "
                f"(95% CI {low:+.3f} to {high:+.3f}, paired bootstrap over scenarios)"
            )
        return 0
    if args.battery:
        return _run_battery(args)
    if not args.assistant or not args.out:
        raise UsageError("eval online needs --assistant SPEC and --out DIR (or --compare A B)")
    from evaluators.online.run import evaluate_online
    from simulation.parallel import SimulationSettings
    from simulation.runner import RunLimits

    check_outputs(
        {"--scenarios": args.scenarios, "--dataset": args.dataset},
        {"--out": args.out},
        folders=["--out"],
    )
    backends = {
        spec: backend_from_flag(flag, spec)
        for flag, spec in (("--user", args.user), ("--assistant", args.assistant))
        if spec != "scripted"
    }
    scenarios = _scenarios(args)
    settings = SimulationSettings(
        args.seed,
        args.user,
        args.assistant,
        args.style,
        RunLimits(max_turns=args.max_turns),
        context=args.context,
    )
    if not scenarios:
        raise UsageError(no_scenarios_message(args))
    report = evaluate_online(
        scenarios,
        args.out,
        settings=settings,
        trials=args.trials,
        concurrency=args.concurrency,
        resume=args.resume,
        backends=backends,
        max_failures=args.max_failures,
        progress=not args.no_progress,
        sage=args.sage,
    )
    if args.json:
        print_json(args, {k: v for k, v in report.items() if k != "conversations"})
    else:
        print(render_markdown(report), end="")
        print(f"\nwrote {args.out / 'report.json'} and {args.out / 'report.md'}", file=sys.stderr)
    if report["partial"]:
        print(
            f"error: partial run: {report['not_simulated']} of {report['planned']} planned "
            f"conversations did not run (the report covers the "
            f"{report['planned'] - report['not_simulated']} that did); rerun with --resume",
            file=sys.stderr,
        )
        return 1
    return 0


def _load_report(path: Path) -> dict:
    """An ``eval online`` report.json for ``--compare``; anything else is a one-line error."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise UsageError(f"--compare {path}: not a JSON file ({err})") from None
    rows = report.get("conversations") if isinstance(report, dict) else None
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and "scenario_id" in r and "success" in r for r in rows
    ):
        raise UsageError(
            f"--compare {path}: not an eval online report (no 'conversations' with "
            "scenario_id and success)"
        )
    if report.get("partial"):
        raise UsageError(
            f"--compare {path}: a partial run ({report.get('not_simulated')} of "
            f"{report.get('planned')} conversations did not run); finish it with --resume first"
        )
    return report


def _run_battery(args: argparse.Namespace) -> int:
    from evaluators.online.adversaries import BASELINE, render_battery, run_battery

    if args.assistant:
        raise UsageError("--battery plays its own assistants: drop --assistant")
    scenarios = _scenarios(args)
    if not scenarios:
        raise UsageError(no_scenarios_message(args))
    table = run_battery(
        scenarios, seed=args.seed, trials=args.trials, progress=not args.no_progress
    )
    if args.json:
        print_json(args, table)
    else:
        print(render_battery(table), end="")
    cheats = [n for n, row in table.items() if n != BASELINE and row["success"]]
    gold = table[BASELINE]
    if cheats or gold["success"] < gold["conversations"]:
        print(
            f"error: the score can be gamed here: {', '.join(cheats) or 'no cheat'} succeeded; "
            f"the gold policy {gold['success']} of {gold['conversations']}",
            file=sys.stderr,
        )
        return 1
    return 0
