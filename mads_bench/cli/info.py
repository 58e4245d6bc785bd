"""``mads-bench info``: what the installed benchmark contains."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from mads_bench.catalog import domain_names, load_domain, load_personas
from mads_bench.cli.output import print_json


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "info", help="Show domains, tools, scenarios and personas.", description=__doc__
    )
    parser.add_argument("--json", action="store_true", help="Print JSON instead of markdown.")
    parser.add_argument(
        "--include-mock", action="store_true", help="Also list the test-only mock domain."
    )
    parser.set_defaults(handler=run)


def collect(include_mock: bool = False) -> dict[str, Any]:
    """Counts per domain plus the persona total."""
    domains = {}
    for name in domain_names():
        if name == "mock" and not include_mock:
            continue
        domain = load_domain(name)
        domains[name] = {
            "tools": len(domain.tools),
            "scenarios": len(domain.scenarios),
            "tool_kinds": dict(Counter(t.kind for t in domain.tools.values())),
            "complexity": dict(Counter(s.complexity for s in domain.scenarios)),
            "behaviors": sorted({b.kind for s in domain.scenarios for b in s.behaviors}),
        }
    return {"domains": domains, "personas": len(load_personas())}


def run(args: argparse.Namespace) -> int:
    data = collect(args.include_mock)
    if args.json:
        print_json(args, data)
        return 0
    print("| domain | tools (read/write) | scenarios (normal/unhappy/impossible) |")
    print("| --- | --- | --- |")
    for name, d in data["domains"].items():
        kinds, cx = d["tool_kinds"], d["complexity"]
        print(
            f"| {name} | {d['tools']} ({kinds.get('read', 0)}/{kinds.get('write', 0)}) "
            f"| {d['scenarios']} ({cx.get('normal', 0)}/{cx.get('unhappy', 0)}/"
            f"{cx.get('impossible', 0)}) |"
        )
    tools = sum(d["tools"] for d in data["domains"].values())
    scen = sum(d["scenarios"] for d in data["domains"].values())
    print(f"\n{tools} tools, {scen} scenarios, {data['personas']} personas")
    return 0
