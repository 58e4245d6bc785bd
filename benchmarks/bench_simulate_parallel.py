"""`simulate --concurrency`: conversations/s at concurrency 1 vs 4, scripted and remote-LLM.

Two workloads through :func:`simulation.parallel.run_jobs` (what the CLI runs):

- scripted user + scripted assistant on generated scenarios of all six domains: sequential,
  4 threads, and 2 / 4 worker processes (pure Python, so only processes can use more cores);
- scripted user + an ``openai:`` assistant against the loopback stub server with a fixed
  artificial latency per request (a stand-in for vLLM): sequential vs 4 threads.

Every configuration must produce the same trajectories in the same order (checked).
"""

from __future__ import annotations

import time

from mads_bench.catalog import domain_names, load_domain
from mads_bench.generator import generate_scenarios
from simulation.backends import get_backend
from simulation.backends.stub_server import StubChatServer, StubReply
from simulation.parallel import SimulationSettings, plan_jobs, run_jobs
from simulation.runner import RunLimits

SCRIPTED_PER_DOMAIN = 40
REMOTE_CONVERSATIONS = 24
LATENCY_S = 0.02


def _timed(jobs, settings, concurrency, executor, backends=None) -> tuple[float, list[str]]:
    start = time.perf_counter()
    outcomes = run_jobs(
        jobs, settings, concurrency=concurrency, executor=executor, backends=backends
    )
    lines = [o.trajectory.model_dump_json() if o.trajectory else o.error for o in outcomes]
    return time.perf_counter() - start, lines


def _say(body: dict, attempt: int) -> StubReply:
    turn = sum(m["role"] == "user" for m in body["messages"])
    return StubReply(f'<think>Turn {turn}.</think><plan>1. answer</plan><action type="say">A{turn}')


def run() -> list[dict]:
    names = [d for d in domain_names() if d != "mock"]
    scenarios = [
        s for d in names for s in generate_scenarios(load_domain(d), SCRIPTED_PER_DOMAIN, 0)
    ]
    jobs = plan_jobs(scenarios, 1)
    settings = SimulationSettings(seed=0)
    _timed(jobs[:6], settings, 1, "sequential")  # warm caches outside the timing
    rows, reference = [], None
    for executor, concurrency in [("sequential", 1), ("thread", 4), ("process", 2), ("process", 4)]:
        seconds, lines = _timed(jobs, settings, concurrency, executor)
        reference = reference or lines
        rows.append(
            {
                "measure": f"scripted {executor} x{concurrency}",
                "value": len(jobs) / seconds,
                "unit": "conv/s",
                "note": f"{len(jobs)} conversations; identical output: {lines == reference}",
            }
        )
    with StubChatServer(respond=_say, latency=LATENCY_S) as server:
        spec = f"openai:stub@{server.base_url}"
        backend = get_backend(spec, max_concurrency=16)
        remote = SimulationSettings(seed=0, assistant=spec, limits=RunLimits(max_turns=3))
        remote_jobs = jobs[:REMOTE_CONVERSATIONS]
        base, reference = None, None
        for executor, concurrency in [("sequential", 1), ("thread", 4)]:
            seconds, lines = _timed(remote_jobs, remote, concurrency, executor, {spec: backend})
            reference, base = reference or lines, base or seconds
            rows.append(
                {
                    "measure": f"openai stub {executor} x{concurrency}",
                    "value": len(remote_jobs) / seconds,
                    "unit": "conv/s",
                    "note": f"{LATENCY_S * 1000:.0f} ms/request; speed-up {base / seconds:.2f}x; "
                    f"identical output: {lines == reference}",
                }
            )
        backend.close()
    return rows


if __name__ == "__main__":
    for row in run():
        print(f"{row['measure']:<32} {row['value']:8.1f} {row['unit']:<7} {row['note']}")
