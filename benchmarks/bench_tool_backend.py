"""Tool backend throughput: validated, injected execution vs calling the handler directly."""

from __future__ import annotations

import time

from mads_bench.catalog import domain_names, load_domain
from mads_bench.data_model import ToolCall
from mads_bench.generator import generate_scenarios
from simulation.tool_backend import ToolBackend

REPEATS = 20


def _gold_calls() -> list[tuple]:
    work = []
    for name in domain_names():
        if name == "mock":
            continue
        pack = load_domain(name)
        for scenario in pack.scenarios:
            if scenario.complexity == "impossible":
                continue
            clean = scenario.model_copy(update={"behaviors": []})
            work.append((pack, clean, scenario.gold_workflow))
    return work


def run() -> list[dict]:
    work = _gold_calls()
    n_calls = sum(len(calls) for _, _, calls in work) * REPEATS

    start = time.perf_counter()
    for _ in range(REPEATS):
        for pack, scenario, calls in work:
            db = pack.database(scenario.backend_state)
            for step in calls:
                pack.handlers[step.name](db, **step.arguments)
    direct = time.perf_counter() - start

    start = time.perf_counter()
    for _ in range(REPEATS):
        for pack, scenario, calls in work:
            backend = ToolBackend(scenario, seed=0, domain=pack)
            for i, step in enumerate(calls):
                backend.execute(ToolCall(id=str(i), name=step.name, arguments=step.arguments))
    full = time.perf_counter() - start

    start = time.perf_counter()
    generated = sum(
        len(generate_scenarios(load_domain(d), 50, seed=0)) for d in domain_names() if d != "mock"
    )
    gen_time = time.perf_counter() - start
    return [
        {
            "measure": "backend calls/s",
            "value": n_calls / full,
            "unit": "calls/s",
            "note": f"{n_calls} gold calls, schema validation + adversity check + handler",
        },
        {
            "measure": "handler-only calls/s",
            "value": n_calls / direct,
            "unit": "calls/s",
            "note": "same calls, handlers called directly",
        },
        {
            "measure": "backend overhead",
            "value": full / direct,
            "unit": "x",
            "note": "backend time / handler-only time",
        },
        {
            "measure": "scenario generation",
            "value": generated / gen_time,
            "unit": "scenarios/s",
            "note": f"{generated} scenarios incl. validation",
        },
    ]
