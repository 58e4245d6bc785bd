"""``mads-bench scenarios``: list, check and generate scenarios."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mads_bench.catalog import (
    default_domain_names,
    domain_names,
    domain_of,
    load_domain,
    load_scenario_file,
)
from mads_bench.cli.args import add_domain_dir, non_negative_float, scenario_count
from mads_bench.data_model import ToolCall
from mads_bench.errors import UsageError
from mads_bench.files import atomic_write_text
from mads_bench.generator import DEFAULT_MIX, generate_scenarios
from simulation.tool_backend import ToolBackend


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("scenarios", help="List, check or generate scenarios.")
    sub = parser.add_subparsers(dest="scenarios_command", metavar="ACTION", required=True)

    listing = sub.add_parser("list", help="List the hand-written scenarios.")
    listing.add_argument("--domain", choices=domain_names(), help="Only this domain.")
    add_domain_dir(listing)
    listing.set_defaults(handler=run_list)

    check = sub.add_parser(
        "check",
        help="Validate a scenario file (YAML, JSON list or JSONL) against the domain packs.",
    )
    add_domain_dir(check)
    check.add_argument("file", type=Path, help="Scenario file.")
    check.set_defaults(handler=run_check)

    gen = sub.add_parser(
        "generate",
        help="Generate valid scenarios from a domain's task templates (seeded).",
    )
    add_domain_dir(gen)
    gen.add_argument("--domain", required=True, choices=domain_names(), help="Domain pack.")
    gen.add_argument(
        "--num", type=scenario_count, default=20, help="How many scenarios (default 20)."
    )
    gen.add_argument("--seed", type=int, default=0, help="RNG seed (default 0).")
    gen.add_argument(
        "--mix",
        type=parse_mix,
        default=DEFAULT_MIX,
        help="Complexity shares, e.g. normal=0.3,unhappy=0.5,impossible=0.2 "
        f"(default {','.join(f'{k}={v}' for k, v in DEFAULT_MIX.items())}).",
    )
    gen.add_argument("--out", type=Path, help="Write JSONL here instead of stdout.")
    gen.set_defaults(handler=run_generate)

    replay = sub.add_parser(
        "replay",
        help="Run gold workflows through the tool backend, adversities included (a dry run).",
    )
    add_domain_dir(replay)
    source = replay.add_mutually_exclusive_group()
    source.add_argument("--domain", choices=domain_names(), help="Hand-written scenarios.")
    source.add_argument("--file", type=Path, help="Scenario file (YAML, JSON or JSONL).")
    replay.add_argument("--id", help="Only the scenario with this id.")
    replay.add_argument("--seed", type=int, default=0, help="Adversity seed (default 0).")
    replay.set_defaults(handler=run_replay)


def parse_mix(text: str) -> dict[str, float]:
    """Parse ``normal=0.3,unhappy=0.5,impossible=0.2``."""
    mix = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in DEFAULT_MIX:
            raise argparse.ArgumentTypeError(f"bad mix entry {part!r}; keys: {list(DEFAULT_MIX)}")
        try:
            mix[key.strip()] = non_negative_float(value)
        except argparse.ArgumentTypeError as err:
            raise argparse.ArgumentTypeError(f"share of {key.strip()}: {err}") from None
    if not sum(mix.values()) > 0:
        raise argparse.ArgumentTypeError(f"shares must not all be 0: {text!r}")
    return mix


def run_list(args: argparse.Namespace) -> int:
    names = [args.domain] if args.domain else [n for n in domain_names() if n != "mock"]
    for name in names:
        for s in load_domain(name).scenarios:
            kinds = ",".join(b.kind for b in s.behaviors) or "-"
            print(f"{s.id:<48} {s.complexity:<10} {kinds:<40} {s.objective}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    scenarios = load_scenario_file(args.file)
    print(f"{args.file}: {len(scenarios)} valid scenarios")
    return 0


def run_generate(args: argparse.Namespace) -> int:
    scenarios = generate_scenarios(load_domain(args.domain), args.num, args.seed, args.mix)
    lines = "".join(s.model_dump_json() + "\n" for s in scenarios)
    if args.out:
        atomic_write_text(args.out, lines)
        print(f"wrote {len(scenarios)} scenarios to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(lines)
    return 0


def run_replay(args: argparse.Namespace) -> int:
    names = [args.domain] if args.domain else default_domain_names()
    scenarios = (
        load_scenario_file(args.file)
        if args.file
        else [s for name in names for s in load_domain(name).scenarios]
    )
    if args.id:
        scenarios = [s for s in scenarios if s.id == args.id]
        if not scenarios:
            raise UsageError(f"--id {args.id}: no such scenario")
    calls = failures = injected = 0
    for scenario in scenarios:
        backend = ToolBackend(scenario, seed=args.seed, domain=domain_of(scenario))
        print(f"## {scenario.id} ({scenario.complexity})")
        for index, step in enumerate(scenario.gold_workflow):
            call = ToolCall(id=f"call_{index}", name=step.name, arguments=step.arguments)
            result = backend.execute(call)
            calls += 1
            failures += not result.ok
            outcome = "ok" if result.ok else f"error {result.content.get('code')}"
            print(f"  {step.name}({json.dumps(step.arguments, sort_keys=True)}) -> {outcome}")
        for record in backend.injections:
            print(f"  injected: {record.detail}")
        injected += len(backend.injections)
    print(
        f"\n{len(scenarios)} scenarios, {calls} gold calls, {failures} error results, "
        f"{injected} injected adversities"
    )
    return 0
