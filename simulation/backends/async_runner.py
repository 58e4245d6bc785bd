"""Run coroutines from synchronous code on a private event loop in a background thread.

`OpenAIBackend` exposes a synchronous `generate` but does its work with asyncio. Running its
own loop in a daemon thread makes that work from any caller: plain scripts, worker threads
without a loop, and code already inside a running loop (notebooks), where `asyncio.run`
would fail. Keeping one loop per backend also keeps the HTTP connection pool alive between
calls.

Example:
    >>> import asyncio
    >>> runner = LoopThread(name="doc")
    >>> async def add(a, b):
    ...     await asyncio.sleep(0)
    ...     return a + b
    >>> runner.run(add(2, 3))
    5
    >>> runner.stop()
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    """An asyncio event loop running forever in a daemon thread, started lazily.

    Args:
        name (`str`): Thread name, for debugging.
    """

    def __init__(self, name: str = "backend-loop") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _ensure_started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` on the background loop and block until it finishes.

        Args:
            coroutine: The coroutine to run.

        Returns:
            Its result; its exception is re-raised in the caller.

        Raises:
            `RuntimeError`: When called from the background loop itself (it would deadlock).
        """
        loop = self._ensure_started()
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError(f"{self._name}: run() called from its own loop thread.")
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    def stop(self) -> None:
        """Stop the loop and join its thread; a later `run` starts a fresh one."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        if thread is not threading.current_thread():
            thread.join(timeout=5)
        if not loop.is_running():
            loop.close()
