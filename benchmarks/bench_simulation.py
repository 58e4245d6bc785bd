"""Scripted simulation throughput: conversations/s and turns/s over all hand-written scenarios."""

from __future__ import annotations

import time
from collections import Counter

from mads_bench.catalog import domain_names, load_domain
from simulation.environment import simulate

REPETITIONS = 3


def run() -> list[dict]:
    scenarios = [s for d in domain_names() if d != "mock" for s in load_domain(d).scenarios]
    simulate(scenarios[0])  # warm the catalog and persona caches outside the timing
    conversations = turns = steps = 0
    ends: Counter[str] = Counter()
    start = time.perf_counter()
    for repetition in range(REPETITIONS):
        for scenario in scenarios:
            trajectory = simulate(scenario, seed=0, repetition=repetition)
            conversations += 1
            turns += trajectory.messages[-1].turn_index + 1
            steps += sum(m.role == "assistant" for m in trajectory.messages)
            ends[trajectory.end_reason] += 1
    elapsed = time.perf_counter() - start
    note = f"{len(scenarios)} scenarios x {REPETITIONS}, scripted user + assistant"
    return [
        {
            "measure": "conversations/s",
            "value": conversations / elapsed,
            "unit": "conv/s",
            "note": note,
        },
        {
            "measure": "turns/s",
            "value": turns / elapsed,
            "unit": "turns/s",
            "note": f"{turns} user turns",
        },
        {
            "measure": "assistant steps/s",
            "value": steps / elapsed,
            "unit": "steps/s",
            "note": f"{steps} Pre-Act steps",
        },
        {
            "measure": "ended done",
            "value": ends["done"] / conversations,
            "unit": "share",
            "note": ", ".join(f"{k}={v}" for k, v in sorted(ends.items())),
        },
    ]
