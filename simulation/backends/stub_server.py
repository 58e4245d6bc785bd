"""A real OpenAI-compatible chat-completions HTTP server on loopback, for tests and benchmarks.

`StubChatServer` listens on `127.0.0.1` (a free port) in a background thread and answers
`POST /v1/chat/completions` like vLLM would. What it answers is decided per request by a
`respond(body, attempt)` function returning a `StubReply` (status, text, delay, headers);
`attempt` counts earlier requests with the same messages, so "fail once, then succeed" is one
line. It records every request (JSON body, `Authorization` header, arrival time) and the peak
number of requests in flight, which is how tests check retries, their spacing and the
concurrency bound without timing the client on a possibly loaded machine.

Example:
    >>> from simulation.backends import get_backend
    >>> with StubChatServer(latency=0.0) as server:
    ...     backend = get_backend(f"openai:stub@{server.base_url}")
    ...     replies = backend.complete(["ping"])
    ...     backend.close()
    >>> replies, len(server.requests)
    (['echo: ping'], 1)
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["StubChatServer", "StubReply", "echo"]


@dataclass
class StubReply:
    """What the stub server sends back for one request.

    Args:
        text (`str`): The assistant message content (for status 200).
        status (`int`): HTTP status; non-200 replies carry an OpenAI-style error body.
        delay (`float`): Seconds to wait before answering (on top of the server latency).
        headers (`dict[str, str]`): Extra response headers (e.g. `Retry-After`).
    """

    text: str = ""
    status: int = 200
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def echo(body: dict[str, Any], attempt: int) -> StubReply:
    """Default responder: `"echo: <content of the last message>"`.

    Args:
        body (`dict`): The request's JSON body.
        attempt (`int`): Earlier requests with the same messages (unused).

    Returns:
        `StubReply`: A 200 reply.
    """
    return StubReply(text=f"echo: {body['messages'][-1]['content']}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default listen backlog (5) resets bursts of connections


class StubChatServer:
    """Loopback chat-completions server (use as a context manager).

    Args:
        respond (`Callable[[dict, int], StubReply]`): Decides each reply; `echo` by default.
        latency (`float`): Seconds every request takes before its reply is sent.

    Attributes:
        base_url (`str`): `http://127.0.0.1:<port>/v1`, for `openai:<model>@<base_url>`.
        requests (`list[dict]`): `{"body": ..., "authorization": ..., "received": ...}` per
            request, in arrival order; `received` is the server's `time.monotonic()` on arrival.
        max_in_flight (`int`): Peak number of requests being handled at the same time.
    """

    def __init__(
        self, respond: Callable[[dict[str, Any], int], StubReply] = echo, latency: float = 0.0
    ) -> None:
        self.respond = respond
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._attempts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        self._thread: threading.Thread | None = None
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> StubChatServer:
        # shutdown() waits for the next poll; the default 0.5 s would add that to every test
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._closing.set()  # wakes handlers still sleeping in a delay
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _handle(self, body: dict[str, Any], authorization: str | None) -> tuple[int, dict, dict]:
        key = json.dumps(body.get("messages"), sort_keys=True)
        with self._lock:
            self.requests.append(
                {"body": body, "authorization": authorization, "received": time.monotonic()}
            )
            attempt = self._attempts[key]
            self._attempts[key] += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            reply = self.respond(body, attempt)
            self._closing.wait(self.latency + reply.delay)
        finally:
            with self._lock:
                self._in_flight -= 1
        if reply.status != 200:
            error = {"message": f"stub error {reply.status}", "type": "stub", "code": None}
            return reply.status, {"error": error}, reply.headers
        payload = {
            "id": f"chatcmpl-stub-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return 200, payload, reply.headers

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                self._send(*stub._handle(body, self.headers.get("Authorization")))

            def _send(self, status: int, payload: dict, headers: dict[str, str]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test); nothing to answer

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # keep test output clean

        return Handler
