"""Online evaluation with a transformers: assistant: conversations/s at concurrency 1, 4 and 8.

The conversations of one run share the in-process model; at concurrency C their steps decode
together, continuously batched, on one decoding thread, and each step reuses the keys and
values of the conversation's previous prompt and reply
(`simulation.backends.transformers_backend`). Measured side by side in one process on the same
scenarios (the mock domain's, repeated as trials: 24 conversations, so that 8 slots stay
filled past the first wave), each conversation capped at 2 user turns (the assistant's default
384 new tokens per step). Greedy replies may differ between batch shapes (bf16 near-ties), so
the tokens decoded are reported beside the conversations: tokens/s compares the same work.
`MADS_BENCH_ONLINE_MODEL` picks the model (default smollm2-135m, set up when missing; `tiny-lm`
for a quick run).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from mads_bench.catalog import load_domain
from simulation.backends import get_backend
from simulation.parallel import SimulationSettings
from simulation.runner import RunLimits
from simulation.simulate_run import simulate_run

TRIALS = 8  # 3 mock scenarios x 8 trials = 24 conversations per configuration
CONCURRENCY = (1, 4, 8)


def run() -> list[dict]:
    from mads_bench.models import setup_models

    model = os.environ.get("MADS_BENCH_ONLINE_MODEL", "smollm2-135m")
    setup_models([model], progress=False)
    spec = f"transformers:{model}"
    backend = get_backend(spec, batch_size=8)
    backend.load()
    scenarios = load_domain("mock").scenarios
    settings = SimulationSettings(assistant=spec, limits=RunLimits(max_turns=2))
    engine = backend.decode_engine
    rates, tokens, per_step = {}, {}, {}
    with tempfile.TemporaryDirectory() as work:
        for concurrency in CONCURRENCY:
            out = Path(work) / f"c{concurrency}.jsonl"
            before = engine.tokens, engine.steps
            start = time.perf_counter()
            report = simulate_run(
                scenarios, out, settings=settings, repetitions=TRIALS,
                concurrency=concurrency, backends={spec: backend}, progress=False,
                max_failures=None,
            )  # fmt: skip
            seconds = time.perf_counter() - start
            rates[concurrency] = report.written / seconds
            decoded, steps = engine.tokens - before[0], engine.steps - before[1]
            tokens[concurrency] = decoded / seconds
            per_step[concurrency] = decoded / max(steps, 1)
    note = f"{model}, mock scenarios x {TRIALS} trials, 2 user turns, greedy, CPU"
    table = [
        {"measure": f"online conversations/s at concurrency {c}", "value": rates[c],
         "unit": "conv/s", "note": note if c == 1 else ""}
        for c in CONCURRENCY
    ]  # fmt: skip
    table += [
        {"measure": f"online tokens decoded/s at concurrency {c}", "value": tokens[c],
         "unit": "tok/s",
         "note": f"{per_step[c]:.2f} tokens per decoding step (each reply's first counted too)"}
        for c in CONCURRENCY
    ]  # fmt: skip
    table.append(
        {"measure": "online speed-up at concurrency 8", "value": rates[8] / rates[1], "unit": "x",
         "note": "conversations/s; steps of concurrent conversations decoded continuously "
         f"batched (tokens/s: {tokens[8] / tokens[1]:.2f}x)"}
    )  # fmt: skip
    return table
