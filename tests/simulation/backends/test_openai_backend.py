"""`openai:<model>@<base_url>` against a real chat-completions HTTP server on 127.0.0.1."""

import asyncio
import logging
import socket
import threading
import time

import pytest

from simulation.backends import BackendError, get_backend
from simulation.backends.stub_server import StubChatServer, StubReply

SECRET = "sk-test-0123456789abcdef"
FAST_RETRY = {"backoff_base": 0.01, "backoff_max": 0.05}


@pytest.fixture
def make_backend(monkeypatch):
    """Build backends on the stub server with a known key; close them after the test."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    made = []

    def make(server, **options):
        backend = get_backend(f"openai:stub-model@{server.base_url}", **{**FAST_RETRY, **options})
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.close()


def by_content(script):
    """Responder keyed on the last message: `script[content](attempt) -> StubReply`."""

    def respond(body, attempt):
        content = body["messages"][-1]["content"]
        return script.get(content, lambda _: StubReply(text=f"echo: {content}"))(attempt)

    return respond


def test_answers_and_request_fields(make_backend):
    with StubChatServer() as server:
        backend = make_backend(server)
        replies = backend.generate(
            [[{"role": "system", "content": "be brief"}, {"role": "user", "content": "a"}]]
            + [[{"role": "user", "content": "b"}]],
            max_new_tokens=12,
            temperature=0.7,
            seed=5,
            stop=["</action>"],
        )
    # one reply per conversation, in order
    assert replies == ["echo: a", "echo: b"]
    body = next(r["body"] for r in server.requests if r["body"]["messages"][-1]["content"] == "a")
    # the request carries model, messages and every generation setting
    assert body["model"] == "stub-model"
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert (body["max_tokens"], body["temperature"], body["seed"]) == (12, 0.7, 5)
    assert body["stop"] == ["</action>"]
    # the key from OPENAI_API_KEY is sent as a bearer token
    assert server.requests[0]["authorization"] == f"Bearer {SECRET}"


def test_tool_role_renames_tool_messages(make_backend):
    conversation = [
        {"role": "user", "content": "order?"},
        {"role": "assistant", "content": '<action type="tool">{"name": "get_order"}</action>'},
        {"role": "tool", "content": '{"status": "shipped"}'},
    ]
    with StubChatServer() as server:
        make_backend(server).generate([conversation])
        make_backend(server, tool_role="user").generate([conversation])
    # by default messages go out as given; with tool_role the tool result becomes a user turn
    assert [r["body"]["messages"][2]["role"] for r in server.requests] == ["tool", "user"]
    assert server.requests[1]["body"]["messages"][2]["content"] == '{"status": "shipped"}'


def test_stop_strings_are_also_applied_client_side(make_backend):
    # a server that ignores `stop` still yields truncated replies
    with StubChatServer(lambda body, attempt: StubReply(text="keep<cut>drop")) as server:
        assert make_backend(server).complete(["x"], stop=["<cut>"]) == ["keep"]


def test_429_is_retried_then_succeeds(make_backend, caplog):
    script = {"busy": lambda attempt: StubReply(status=429) if attempt == 0 else StubReply("ok")}
    with StubChatServer(by_content(script)) as server:
        backend = make_backend(server, max_retries=3)
        with caplog.at_level(logging.DEBUG):  # every logger, the openai client and httpx too
            replies = backend.complete(["busy", "calm"])
    # the rate-limited request is answered on its second attempt, the other once
    assert replies == ["ok", "echo: calm"]
    contents = [r["body"]["messages"][-1]["content"] for r in server.requests]
    assert contents.count("busy") == 2 and contents.count("calm") == 1
    # the retry is logged with its cause, and the key never is, at any level
    assert "HTTP 429" in caplog.text and "retry 1/3" in caplog.text
    assert SECRET not in caplog.text


def test_retry_after_header_is_honoured(make_backend):
    script = {
        "x": lambda attempt: (
            StubReply(status=503, headers={"Retry-After": "0.4"})
            if attempt == 0
            else StubReply("late")
        )
    }
    with StubChatServer(by_content(script)) as server:
        start = time.perf_counter()
        # our own backoff would wait at most 0.01 s; the server asked for 0.4 s
        assert make_backend(server, backoff_max=1.0).complete(["x"]) == ["late"]
        assert time.perf_counter() - start >= 0.4


def test_persistent_500_fails_clearly_after_max_retries(make_backend):
    with StubChatServer(lambda body, attempt: StubReply(status=500)) as server:
        backend = make_backend(server, max_retries=2)
        with pytest.raises(BackendError) as info:
            backend.complete(["doomed"])
    # 1 attempt + 2 retries, then an error naming spec, request, attempts and status
    assert len(server.requests) == 3
    message = str(info.value)
    assert "openai:stub-model@" in message and "request 0 failed after 3 attempt(s)" in message
    assert "HTTP 500" in message and SECRET not in message


def test_client_errors_are_not_retried(make_backend):
    with StubChatServer(lambda body, attempt: StubReply(status=400)) as server:
        with pytest.raises(BackendError, match="not retryable"):
            make_backend(server, max_retries=3).complete(["bad"])
    # a 400 will not get better: exactly one request
    assert len(server.requests) == 1


def test_slow_response_times_out_and_is_retried(make_backend):
    with StubChatServer(lambda body, attempt: StubReply("too late", delay=3.0)) as server:
        backend = make_backend(server, timeout=0.3, max_retries=1)
        start = time.perf_counter()
        with pytest.raises(BackendError, match=r"timed out after 0.3 s") as info:
            backend.complete(["slow"])
        elapsed = time.perf_counter() - start
    # two attempts of 0.3 s each (plus tiny backoff), far less than the 3 s delay
    assert len(server.requests) == 2
    assert 0.6 <= elapsed < 2.0
    assert "after 2 attempt(s)" in str(info.value)


def test_connection_errors_are_retried():
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = get_backend(f"openai:m@http://127.0.0.1:{port}/v1", max_retries=1, **FAST_RETRY)
    with pytest.raises(BackendError, match=r"after 2 attempt\(s\): connection error"):
        backend.complete(["anyone?"])
    backend.close()


def test_concurrency_bound_is_respected(make_backend):
    with StubChatServer(latency=0.25) as server:
        backend = make_backend(server, max_concurrency=3)
        start = time.perf_counter()
        replies = backend.complete([str(i) for i in range(9)])
        elapsed = time.perf_counter() - start
    # never more than 3 in flight, and the bound is actually reached
    assert server.max_in_flight == 3
    # 9 requests / 3 slots = 3 waves of 0.25 s (serial would take 2.25 s)
    assert 0.75 <= elapsed < 1.8
    assert replies == [f"echo: {i}" for i in range(9)]


def test_order_is_preserved_when_replies_arrive_in_reverse(make_backend):
    # earlier prompts answer later: completion order is the reverse of input order
    def respond(body, attempt):
        index = int(body["messages"][-1]["content"])
        return StubReply(text=f"r{index}", delay=0.05 * (5 - index))

    with StubChatServer(respond) as server:
        assert make_backend(server).complete([str(i) for i in range(6)]) == [
            f"r{i}" for i in range(6)
        ]


def test_sync_generate_works_from_threads_and_inside_a_running_loop(make_backend):
    with StubChatServer() as server:
        backend = make_backend(server)
        results = {}

        def worker(name):
            results[name] = backend.complete([name])

        # two plain threads without an event loop, sharing one backend
        threads = [threading.Thread(target=worker, args=(n,)) for n in ("t1", "t2")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        # a caller that is itself inside a running event loop (e.g. a notebook)
        async def inside_loop():
            return backend.complete(["loop"])

        in_loop = asyncio.run(inside_loop())
    assert results == {"t1": ["echo: t1"], "t2": ["echo: t2"]}
    assert in_loop == ["echo: loop"]


def test_api_key_sources_and_secrecy(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("MY_VLLM_KEY", SECRET)
    with StubChatServer() as server:
        # api_key_env names another variable
        named = get_backend(f"openai:m@{server.base_url}", api_key_env="MY_VLLM_KEY")
        named.complete(["a"])
        # a local server without any key gets the placeholder
        keyless = get_backend(f"openai:m@{server.base_url}")
        keyless.complete(["b"])
        named.close()
        keyless.close()
    assert [r["authorization"] for r in server.requests] == [f"Bearer {SECRET}", "Bearer EMPTY"]
    # the key is not part of the backend's repr
    assert SECRET not in repr(named) and SECRET not in str(vars(named).get("spec"))
    # a remote server without a key is refused up front, naming the variable to set
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        get_backend("openai:gpt-4o-mini@https://api.openai.com/v1")
