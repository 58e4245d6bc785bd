"""Run every benchmark module and print one markdown table (JSON copy in .bench/).

Usage: ``python -m benchmarks.run [NAME ...]`` (names: the ``bench_*`` module suffixes).
Figures are measured side by side in one process so ratios compare like with like. Modules
with ``SLOW = True`` (tens of minutes) run only when named.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import platform
from pathlib import Path

import benchmarks

RESULTS = Path(".bench/results.json")


def main() -> None:
    available = sorted(
        m.name.removeprefix("bench_")
        for m in pkgutil.iter_modules(benchmarks.__path__)
        if m.name.startswith("bench_")
    )
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", help=f"Benchmarks to run: {', '.join(available)}.")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(available))
    if unknown:
        parser.error(f"unknown benchmarks {unknown}; available: {available}")
    rows = []
    for name in args.names or available:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        if getattr(module, "SLOW", False) and not args.names:
            print(f"skipping {name} (slow: run `python -m benchmarks.run {name}`)", flush=True)
            continue
        print(f"running {name} ...", flush=True)
        rows.extend({"benchmark": name, **row} for row in module.run())
    print("\n| benchmark | measure | value | unit | note |\n| --- | --- | --- | --- | --- |")
    for row in rows:
        print(
            f"| {row['benchmark']} | {row['measure']} | {row['value']:.4g} | {row['unit']} "
            f"| {row.get('note', '')} |"
        )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"machine": platform.platform(), "rows": rows}, indent=2))
    print(f"\nwritten to {RESULTS}")


if __name__ == "__main__":
    main()
