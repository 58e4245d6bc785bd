"""One thread steps a `DecodeEngine` for every caller; callers in any thread submit and wait.

Why one thread: torch's CPU thread pool is OpenMP's (libgomp), which gives every thread that
calls into it a team of its own, and once the process holds more OpenMP threads than there are
cores, libgomp stops spinning between parallel regions and every region pays for waking its
threads. When the threads of concurrent conversations take turns stepping a shared engine,
each brings a team. Measured on a 2-core Zen 5, one SmolLM2-135M row of 800 cached tokens:
24.8 ms per step stepped from one thread, 45.6 ms stepped by four threads taking turns.

For the same reason the thread lingers (`linger` seconds after the engine goes idle) rather
than ending after each burst of requests, and `on_own_thread` runs other torch work, such as
loading the model, on a thread that ends with it, so the caller's thread holds no team: with
the model loaded on the main thread (whose team stays), one conversation's steps took 44 ms
instead of 27.

A failed step fails every request then running or waiting (each caller gets the error, none
hangs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from mads_bench.decoding import DecodeEngine, DecodeResult

__all__ = ["DecodeWorker", "on_own_thread"]

T = TypeVar("T")


def on_own_thread(function: Callable[[], T]) -> T:
    """Call `function` on a new thread, wait, and return its result (or raise its error)."""
    outcome: list = []

    def call() -> None:
        try:
            outcome.append((True, function()))
        except BaseException as error:  # noqa: BLE001 - raised again in the caller's thread
            outcome.append((False, error))

    thread = threading.Thread(target=call, name="mads-torch")
    thread.start()
    thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


class DecodeWorker:
    """Runs `engine.step` on a thread of its own while any request is running or waiting.

    Args:
        engine (`DecodeEngine`): The engine it steps; nothing else may call its `step`.
        linger (`float`): Seconds the thread waits for a new request once the engine is idle.
    """

    def __init__(self, engine: DecodeEngine, *, linger: float = 5.0) -> None:
        self.engine = engine
        self.linger = linger
        self._lock = threading.Condition()  # guards `_futures` and `_thread`; wakes the thread
        self._futures: dict[int, Future[DecodeResult]] = {}
        self._thread: threading.Thread | None = None

    def submit(self, prompt: Sequence[int], **options: Any) -> Future[DecodeResult]:
        """Queue one prompt (`options`: those of `DecodeEngine.submit`). Safe from any thread.

        Returns:
            `Future[DecodeResult]`: Resolved when the row finishes, or failed with the error
            of the step that broke it.
        """
        future: Future[DecodeResult] = Future()
        with self._lock:
            self._futures[self.engine.submit(prompt, **options)] = future
            if self._thread is None:
                self._thread = threading.Thread(target=self._drive, name="mads-decode", daemon=True)
                self._thread.start()
            self._lock.notify()
        return future

    def _drive(self) -> None:
        while True:
            with self._lock:  # a request submitted after an idle check wakes or starts a thread
                if self.engine.idle:
                    self._lock.wait(self.linger)
                    if self.engine.idle:
                        self._thread = None
                        return
            try:
                done = self.engine.step()
            except BaseException as error:  # noqa: BLE001 - handed to every waiting caller
                with self._lock:
                    for ticket in self.engine.cancel_all():
                        self._futures.pop(ticket).set_exception(error)
                continue
            with self._lock:
                for ticket, result in done.items():
                    self._futures.pop(ticket).set_result(result)
