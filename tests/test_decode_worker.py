"""The decode worker: one thread steps the engine for callers in many threads."""

from __future__ import annotations

import threading
import time

import pytest
import torch

from mads_bench.decode_worker import DecodeWorker
from mads_bench.decoding import DecodeEngine, decode
from mads_bench.models import load_tokenizer


@pytest.fixture(scope="module")
def lm(tiny_lm_path):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_lm_path, dtype=torch.float32).eval()
    return model, load_tokenizer(str(tiny_lm_path))


def _prompts(tokenizer) -> list[list[int]]:
    texts = ["Hi.", "Cancel order A-1001 now, please.", "Where is my parcel?", "No."]
    return [tokenizer(t, add_special_tokens=False).input_ids for t in texts]


def test_callers_in_many_threads_get_their_tokens_and_only_the_worker_steps(lm, monkeypatch):
    model, tokenizer = lm
    prompts = _prompts(tokenizer)
    expected = decode(model, prompts, max_new_tokens=6, eos_ids=[-1])
    engine = DecodeEngine(model, eos_ids=[-1], max_batch=4)
    stepping_threads = set()
    real_step = engine.step

    def step():
        stepping_threads.add(threading.current_thread().name)
        return real_step()

    monkeypatch.setattr(engine, "step", step)
    worker = DecodeWorker(engine)
    got = [None] * len(prompts)

    def ask(i: int) -> None:
        got[i] = worker.submit(prompts[i], max_new_tokens=6).result(timeout=60).tokens

    callers = [threading.Thread(target=ask, args=(i,)) for i in range(len(prompts))]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert got == [r.tokens for r in expected]
    assert stepping_threads == {"mads-decode"}


def test_the_thread_ends_when_idle_and_a_later_request_starts_another(lm):
    model, tokenizer = lm
    worker = DecodeWorker(DecodeEngine(model, eos_ids=[-1]), linger=0.05)
    worker.submit(_prompts(tokenizer)[0], max_new_tokens=2).result(timeout=60)
    for _ in range(500):  # the thread clears itself once the engine has been idle a while
        if worker._thread is None:
            break
        time.sleep(0.01)
    assert worker._thread is None
    assert len(worker.submit([5, 6], max_new_tokens=3).result(timeout=60).tokens) == 3


def test_a_failed_step_fails_every_waiting_request_instead_of_hanging(lm, monkeypatch):
    model, tokenizer = lm
    engine = DecodeEngine(model, eos_ids=[-1], max_batch=1)  # the second request waits
    monkeypatch.setattr(engine, "_decode_step", lambda finished: (_ for _ in ()).throw(
        RuntimeError("out of memory")))  # fmt: skip
    worker = DecodeWorker(engine)
    futures = [worker.submit(p, max_new_tokens=4) for p in _prompts(tokenizer)[:2]]
    for future in futures:
        with pytest.raises(RuntimeError, match="out of memory"):
            future.result(timeout=60)
    assert engine.idle


def test_on_own_thread_returns_the_result_or_raises_the_error_in_the_caller():
    from mads_bench.decode_worker import on_own_thread

    assert on_own_thread(lambda: threading.current_thread().name) == "mads-torch"
    with pytest.raises(KeyError, match="missing"):
        on_own_thread(lambda: {}["missing"])


def test_a_failed_prefill_fails_the_row_being_admitted_and_every_other(lm, monkeypatch):
    model, tokenizer = lm
    engine = DecodeEngine(model, eos_ids=[-1], max_batch=4)
    worker = DecodeWorker(engine)
    running = worker.submit(_prompts(tokenizer)[0], max_new_tokens=1000)  # still decoding below
    while engine.active_rows == 0:  # the first row is decoding
        time.sleep(0.001)
    monkeypatch.setattr(engine, "_admit", lambda row, finished, admitted: (_ for _ in ()).throw(
        RuntimeError("prefill broke")))  # fmt: skip
    joining = worker.submit(_prompts(tokenizer)[1], max_new_tokens=4)  # off the queue, then lost
    for future in (joining, running):
        with pytest.raises(RuntimeError, match="prefill broke"):
            future.result(timeout=60)
    assert engine.idle and worker._futures == {}
    monkeypatch.undo()  # the worker goes on serving
    assert len(worker.submit([5, 6], max_new_tokens=2).result(timeout=60).tokens) == 2
