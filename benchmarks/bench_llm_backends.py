"""LLM backend throughput: tiny-lm batched vs one by one, OpenAI backend concurrency scaling.

Both are measured side by side in one process. The transformers figures use `tiny-lm`
(random 2-layer model, greedy, a fixed number of new tokens, so every sequence does the
same work); the OpenAI figures use the loopback stub server with a fixed artificial latency,
so they measure the client (concurrency, event loop, HTTP) rather than a model.
"""

from __future__ import annotations

import time

from simulation.backends import get_backend
from simulation.backends.stub_server import StubChatServer

N_SEQUENCES = 16
NEW_TOKENS = 32
N_REQUESTS = 32
LATENCY_S = 0.1


def _tiny_lm_rows() -> list[dict]:
    prompts = [f"Customer {i}: please check order A-{1000 + i} and refund it." for i in range(8)]
    prompts = (prompts * (N_SEQUENCES // len(prompts) + 1))[:N_SEQUENCES]
    settings = {"max_new_tokens": NEW_TOKENS}
    batched = get_backend("transformers:tiny-lm", batch_size=8)
    batched.complete(prompts[:8], **settings)  # load and warm up outside the timings
    single = get_backend("transformers:tiny-lm", batch_size=1)
    single.complete(prompts[:1], **settings)

    rates = {}
    for name, backend in (("one by one", single), ("batch of 8", batched), ("again, one", single)):
        start = time.perf_counter()
        backend.complete(prompts, **settings)
        rates[name] = N_SEQUENCES / (time.perf_counter() - start)
    sequential = (rates["one by one"] + rates["again, one"]) / 2
    note = f"tiny-lm, {N_SEQUENCES} prompts, greedy, {NEW_TOKENS} new tokens, CPU"
    return [
        {"measure": "tiny-lm one by one", "value": sequential, "unit": "seq/s", "note": note},
        {"measure": "tiny-lm batch of 8", "value": rates["batch of 8"], "unit": "seq/s"},
        {
            "measure": "tiny-lm batching speed-up",
            "value": rates["batch of 8"] / sequential,
            "unit": "x",
            "note": "batch of 8 / mean of the one-by-one runs before and after",
        },
    ]


def _openai_rows() -> list[dict]:
    rows = []
    rates = {}
    with StubChatServer(latency=LATENCY_S) as server:
        for concurrency in (1, 4, 16):
            backend = get_backend(f"openai:stub@{server.base_url}", max_concurrency=concurrency)
            backend.complete(["warm-up"])
            start = time.perf_counter()
            backend.complete([f"request {i}" for i in range(N_REQUESTS)])
            rates[concurrency] = N_REQUESTS / (time.perf_counter() - start)
            backend.close()
            rows.append(
                {
                    "measure": f"openai backend, concurrency {concurrency}",
                    "value": rates[concurrency],
                    "unit": "req/s",
                    "note": f"{N_REQUESTS} requests, loopback stub, {LATENCY_S * 1000:.0f} ms "
                    f"latency (ideal {concurrency / LATENCY_S:.0f} req/s)",
                }
            )
    for concurrency in (4, 16):
        rows.append(
            {
                "measure": f"openai scaling {concurrency} vs 1",
                "value": rates[concurrency] / rates[1],
                "unit": "x",
                "note": f"ideal {concurrency}x",
            }
        )
    return rows


def run() -> list[dict]:
    return _tiny_lm_rows() + _openai_rows()
