"""``mads-bench import-tau2``: a τ²-bench domain as a MADS domain pack.

Example::

    mads-bench import-tau2 --tau2-dir ../shared/data/tau2_retail --domain retail --out packs/retail
    mads-bench eval online --domain-dir packs/retail --assistant scripted -k 2 --out outputs/tau2

``--tau2-dir`` is a τ²-bench domain folder (``db.json``, ``policy.md``, ``tasks_<split>.json``)
or a τ²-bench checkout (``data/tau2/domains/<domain>/`` with ``tasks.json`` and
``split_tasks.json``). The data is read where it is, never downloaded; the pack is written
whole or not at all (an earlier import in ``--out`` is replaced).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mads_bench.cli.args import add_command
from mads_bench.cli.output import print_json


def register(commands: argparse._SubParsersAction) -> None:
    parser = add_command(
        commands,
        "import-tau2",
        "Write a domain pack (tools, seed state, policy, scenarios) from τ²-bench data.",
        __doc__,
    )
    parser.add_argument("--tau2-dir", type=Path, required=True, help="τ²-bench domain folder.")
    parser.add_argument("--domain", default="retail", choices=["retail"], help="Domain (retail).")
    parser.add_argument("--out", type=Path, required=True, help="The pack folder to write.")
    parser.add_argument(
        "--split", default="train", help="Task split (default train; 'all' for every task)."
    )
    parser.add_argument(
        "--adversities",
        action="store_true",
        help="Also write an 'unhappy' variant of every task with MADS adversities injected.",
    )
    parser.add_argument("--seed", type=int, default=0, help="Seed of the adversities (0).")
    parser.add_argument("--json", action="store_true", help="Print the import report as JSON.")
    parser.set_defaults(handler=run_import)


def run_import(args: argparse.Namespace) -> int:
    from simulation.importers.tau2 import import_tau2

    report = import_tau2(
        args.tau2_dir, args.out, domain=args.domain, split=args.split,
        adversities=args.adversities, seed=args.seed,
    )  # fmt: skip
    if args.json:
        print_json(args, report.to_json())
        return 0
    calls = ", ".join(f"{tool} {n}" for tool, n in report.tool_calls.items())
    print(
        f"wrote {report.name} to {args.out}: {report.scenarios} scenarios from {report.tasks} "
        f"{report.split} tasks\ngold calls: {calls}\nauthentication look-up added to "
        f"{len(report.authentication_added)} tasks; failing look-ups dropped in "
        f"{len(report.dropped_lookups)}; refused gold writes in {len(report.refused_writes)}"
    )
    for kind, found in (("dropped", report.dropped_lookups), ("refused", report.refused_writes)):
        for task, errors in found.items():
            print(f"  task {task} {kind}: {'; '.join(errors)}", file=sys.stderr)
    return 0
