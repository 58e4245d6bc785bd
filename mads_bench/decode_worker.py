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
    """Call `function` on a new thread that ends with it.

    Args:
        function (`Callable[[], T]`): What to run (loading a model, say).

    Returns:
        `T`: What `function` returned; what it raised is raised here.
    """
    result: list[T] = []
    failure: list[BaseException] = []

    def call() -> None:
        try:
            result.append(function())
        except BaseException as error:  # noqa: BLE001 - raised again in the caller's thread
            failure.append(error)

    thread = threading.Thread(target=call, name="mads-torch")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]


class DecodeWorker:
    """Runs `engine.step` on a thread of its own while any request is running or waiting.

    Args:
        engine (`DecodeEngine`): The engine it steps; nothing else may call its `step`.
        linger (`float`): Seconds the thread waits for a new request once the engine is idle.
    """

    def __init__(self, engine: DecodeEngine, *, linger: float = 5.0) -> None:
        self.engine = engine
        self.linger = linger
        self._wake = threading.Condition()  # guards `_futures` and `_thread`; wakes the thread
        self._futures: dict[int, Future[DecodeResult]] = {}
        self._thread: threading.Thread | None = None

    def submit(self, prompt: Sequence[int], **options: Any) -> Future[DecodeResult]:
        """Queue one prompt. Safe from any thread.

        Args:
            prompt (`Sequence[int]`): Token ids (at least one).
            **options: Those of `DecodeEngine.submit` (`max_new_tokens`, `stop_strings`,
                `temperature`, `top_p`, `generator`, `return_logprobs`).

        Returns:
            `Future[DecodeResult]`: Resolved when the row finishes. When a step fails, every
            request running or waiting then fails with its error (one submitted while that
            step ran included). It cannot be cancelled: a caller that stops waiting leaves its
            row to decode to its end.

        Raises:
            `ValueError`: What `DecodeEngine.submit` refuses; nothing is queued.
        """
        future: Future[DecodeResult] = Future()
        future.set_running_or_notify_cancel()
        with self._wake:
            self._futures[self.engine.submit(prompt, **options)] = future
            if self._thread is None:
                self._thread = threading.Thread(target=self._drive, name="mads-decode", daemon=True)
                self._thread.start()
            self._wake.notify()
        return future

    def _drive(self) -> None:
        try:
            while True:
                with self._wake:  # a request submitted after the idle check wakes or starts one
                    if self.engine.idle:
                        self._wake.wait(self.linger)
                        if self.engine.idle:
                            self._thread = None
                            return
                try:
                    done = self.engine.step()
                except BaseException as error:  # noqa: BLE001 - handed to every waiting caller
                    self._fail_all(error)
                    continue
                with self._wake:
                    for ticket, result in done.items():
                        future = self._futures.pop(ticket, None)  # None: submitted to the engine
                        if future is not None:
                            future.set_result(result)
        except BaseException as error:  # a fault of this loop: nobody may wait on a dead thread
            self._fail_all(error, stop=True)
            raise

    def _fail_all(self, error: BaseException, *, stop: bool = False) -> None:
        """Drop every row of the engine and fail every request with `error` (the row being
        admitted and the rows finished in the failed step are no longer in the engine)."""
        with self._wake:
            self.engine.cancel_all()
            for future in self._futures.values():
                future.set_exception(error)
            self._futures.clear()
            if stop:
                self._thread = None
