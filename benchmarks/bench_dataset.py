"""Dataset build: 90 hand-written scenarios x 2 run seeds (scripted) -> trajectories/sft/grpo.

Measures the build (read JSONL, select, split, rows, Arrow tables, card) and the save
(``save_to_disk`` of three DatasetDicts + README.md), and reports rows per config and split
and the unhappy-path share, so the dataset's shape is tracked next to its speed.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import datasets

from mads_bench.catalog import domain_names, load_domain
from mads_bench.datasets import build_dataset, save_dataset
from simulation.environment import simulate

SEEDS = (0, 1)


def _write_trajectories(folder: Path) -> list[Path]:
    scenarios = [s for d in domain_names() if d != "mock" for s in load_domain(d).scenarios]
    files = []
    for seed in SEEDS:
        path = folder / f"seed{seed}.jsonl"
        lines = [simulate(scenario, seed=seed).model_dump_json() + "\n" for scenario in scenarios]
        path.write_text("".join(lines), encoding="utf-8")
        files.append(path)
    return files


def run() -> list[dict]:
    datasets.disable_progress_bars()
    with tempfile.TemporaryDirectory() as tmp:
        files = _write_trajectories(Path(tmp))
        start = time.perf_counter()
        built = build_dataset(files, include_unvalidated=True)
        build_s = time.perf_counter() - start
        start = time.perf_counter()
        save_dataset(built, Path(tmp) / "out")
        save_s = time.perf_counter() - start
    rows = built.report.rows
    convs = built.configs["trajectories"]
    complexity = list(convs["train"]["complexity"]) + list(convs["test"]["complexity"])
    unhappy = sum(c != "normal" for c in complexity) / len(complexity)
    steps = rows["sft"]["train"] + rows["sft"]["test"]
    note = f"{len(complexity)} conversations ({len(SEEDS)} seeds), unvalidated"
    out = [
        {"measure": "build time", "value": build_s, "unit": "s", "note": note},
        {"measure": "build throughput", "value": steps / build_s, "unit": "steps/s", "note": note},
        {"measure": "save_to_disk + card", "value": save_s, "unit": "s", "note": "3 configs"},
        {"measure": "unhappy share", "value": unhappy, "unit": "fraction", "note": note},
    ]
    for name, counts in rows.items():
        for split, n in counts.items():
            out.append(
                {"measure": f"{name} rows ({split})", "value": n, "unit": "rows", "note": ""}
            )
    return out
