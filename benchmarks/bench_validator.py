"""Validator throughput: scripted conversations of every hand-written scenario, two seeds.

Measures conversations/s of the full offline validator (rules + MiniLM, the encoder loaded
and warmed before timing) and of the rules alone (embeddings disabled), plus the acceptance
rate of the scripted conversations.
"""

from __future__ import annotations

import time

from mads_bench.catalog import load_all_scenarios
from simulation.environment import simulate
from simulation.validator import NO_EMBEDDINGS, Embedder, validate_trajectories

SEEDS = (0, 1)


def run() -> list[dict]:
    scenarios = {s.id: s for s in load_all_scenarios()}
    trajectories = [simulate(s, seed=seed) for seed in SEEDS for s in scenarios.values()]
    embedder = Embedder()
    embedder.encode(["warm up the encoder"])
    rows = []
    for label, chosen in (("rules + MiniLM", embedder), ("rules only", NO_EMBEDDINGS)):
        start = time.perf_counter()
        out = list(validate_trajectories(trajectories, scenarios, embedder=chosen))
        seconds = time.perf_counter() - start
        accepted = sum(t.verdict["passed"] for t in out)
        rows.append(
            {
                "measure": f"validator conversations/s ({label})",
                "value": len(out) / seconds,
                "unit": "conversations/s",
                "note": f"{len(out)} scripted conversations ({len(scenarios)} scenarios x "
                f"{len(SEEDS)} seeds), {accepted} accepted ({accepted / len(out):.1%})",
            }
        )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
