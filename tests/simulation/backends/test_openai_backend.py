"""`openai:<model>@<base_url>` against a real chat-completions HTTP server on 127.0.0.1."""

import asyncio
import logging
import re
import socket
import threading
import time

import pytest

from mads_bench.errors import UsageError
from simulation.backends import BackendError, get_backend
from simulation.backends.stub_server import StubChatServer, StubReply

SECRET = "sk-test-0123456789abcdef"
FAST_RETRY = {"backoff_base": 0.01, "backoff_max": 0.05}


@pytest.fixture
def make_backend(monkeypatch):
    """Build backends on the stub server with a known key; close them after the test."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    made = []

    def make(server, query="", **options):
        spec = f"openai:stub-model@{server.base_url}{query}"
        backend = get_backend(spec, **{**FAST_RETRY, **options})
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
        # our own backoff would wait at most 0.01 s; the server asked for 0.4 s
        assert make_backend(server, backoff_max=1.0).complete(["x"]) == ["late"]
    # the server saw the retry no sooner than it asked (a lower bound: load only widens the gap)
    first, second = (request["received"] for request in server.requests)
    assert second - first >= 0.4


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
    with StubChatServer(lambda body, attempt: StubReply("too late", delay=10.0)) as server:
        backend = make_backend(server, timeout=0.3, max_retries=1)
        start = time.perf_counter()
        with pytest.raises(BackendError, match=r"timed out after 0.3 s") as info:
            backend.complete(["slow"])
        elapsed = time.perf_counter() - start
    # two attempts, the retry sent only once the first had waited out its 0.3 s
    assert len(server.requests) == 2
    assert server.requests[1]["received"] - server.requests[0]["received"] >= 0.3
    assert "after 2 attempt(s)" in str(info.value)
    # the client gave up by itself: it never waited for the server's 10 s reply
    assert elapsed < 10.0


def test_connection_errors_are_retried():
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = get_backend(f"openai:m@http://127.0.0.1:{port}/v1", max_retries=1, **FAST_RETRY)
    with pytest.raises(BackendError, match=r"after 2 attempt\(s\): connection error"):
        backend.complete(["anyone?"])
    backend.close()


def test_server_that_never_answers_is_cut_off_at_the_deadline(make_backend):
    with StubChatServer(lambda body, attempt: StubReply("never", delay=60.0)) as server:
        backend = make_backend(server, timeout=5.0, max_retries=4, deadline=1.0)
        start = time.perf_counter()
        with pytest.raises(BackendError) as info:
            backend.complete(["hello?"])
        elapsed = time.perf_counter() - start
    # one attempt, abandoned at the 1 s deadline: no retry, though 4 were allowed
    assert len(server.requests) == 1
    message = str(info.value)
    assert "openai:stub-model@" in message
    assert "request 0: deadline of 1 s exceeded after 1 attempt(s)" in message
    # well before the attempt's own 5 s timeout, which is what shows the deadline ended it
    assert elapsed < 5.0


def test_deadline_stops_retries_of_timed_out_attempts(make_backend):
    with StubChatServer(lambda body, attempt: StubReply("never", delay=60.0)) as server:
        backend = make_backend(server, timeout=0.4, max_retries=50, deadline=1.0)
        start = time.perf_counter()
        with pytest.raises(BackendError) as info:
            backend.complete(["hello?"])
        elapsed = time.perf_counter() - start
    found = re.search(r"request 0: deadline of 1 s exceeded after (\d+) attempt", str(info.value))
    assert found is not None, info.value
    attempts = int(found[1])
    # retries happen within the deadline; every attempt but the last lasts its full 0.4 s, so
    # at most 1.0 // 0.4 + 1 = 3 fit, of the 51 allowed (one may be cut before reaching the server)
    assert 2 <= len(server.requests) <= attempts <= 3
    # without the deadline, 51 timeouts of 0.4 s would take over 20 s
    assert elapsed < 10.0


def test_backoff_sleep_counts_against_the_deadline(make_backend):
    reply = StubReply(status=503, headers={"Retry-After": "30"})
    with StubChatServer(lambda body, attempt: reply) as server:
        backend = make_backend(server, backoff_max=60.0, deadline=1.0)
        start = time.perf_counter()
        with pytest.raises(BackendError) as info:
            backend.complete(["busy"])
        elapsed = time.perf_counter() - start
    # a retry due in 30 s would start past the 1 s deadline: fail now instead of sleeping
    assert len(server.requests) == 1
    message = str(info.value)
    assert "deadline of 1 s exceeded after 1 attempt(s)" in message and "HTTP 503" in message
    assert "next retry due in 30.00 s" in message
    assert elapsed < 30.0


def test_spec_options_set_the_budget_and_win_over_keywords():
    spec = (
        "openai:m@http://127.0.0.1:9/v1/?timeout=2.5&max_retries=1&deadline=7"
        "&max_concurrency=3&backoff_base=0.1&backoff_max=2"
    )
    backend = get_backend(spec, timeout=30.0, max_retries=9)
    # the options are gone from the URL the client uses, and kept in the spec as written
    assert backend.base_url == "http://127.0.0.1:9/v1" and backend.spec == spec
    # every option is applied; where a keyword says otherwise, the spec wins
    assert (backend.timeout, backend.max_retries, backend.deadline) == (2.5, 1, 7.0)
    assert (backend.max_concurrency, backend.backoff_base, backend.backoff_max) == (3, 0.1, 2.0)
    # a keyword the spec does not mention still applies
    partial = get_backend("openai:m@http://127.0.0.1:9/v1?timeout=2", max_retries=0)
    assert (partial.timeout, partial.max_retries) == (2.0, 0)
    # default deadline: one minute per request (a hung server must not cost minutes of
    # retries per conversation), or one attempt's timeout when that is longer
    assert partial.deadline == 60.0
    assert get_backend("openai:m@http://127.0.0.1:9/v1").deadline == 60.0
    assert get_backend("openai:m@http://127.0.0.1:9/v1?timeout=120").deadline == 120.0


def test_spec_options_reach_the_requests(make_backend):
    with StubChatServer(lambda body, attempt: StubReply(status=500)) as server:
        # the spec's max_retries=0 overrides the fixture's keyword max_retries=3
        backend = make_backend(server, query="?max_retries=0&timeout=5", max_retries=3)
        with pytest.raises(BackendError, match=r"failed after 1 attempt\(s\): HTTP 500"):
            backend.complete(["once"])
    # one request only, sent to the route without the options (the stub answers 404 elsewhere)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "query",
    [
        "timeout=abc",  # not a number
        "timeout=nan",  # NaN
        "deadline=inf",  # not finite
        "timeout=0",  # an attempt needs time
        "deadline=-1",  # negative
        "backoff_max=-0.5",  # negative
        "max_retries=-1",  # negative count
        "max_retries=1.5",  # counts are whole numbers
        "max_concurrency=0",  # at least one request in flight
        "timeout",  # no value
        "timeout=1&timeout=2",  # given twice
        "colour=red",  # unknown
    ],
)
def test_bad_spec_options_name_spec_and_option(query):
    with pytest.raises(UsageError) as info:
        get_backend(f"openai:m@http://127.0.0.1:9/v1?{query}")
    message = str(info.value)
    # the message quotes the spec (without its options) and names the offending option
    assert "'openai:m@http://127.0.0.1:9/v1'" in message
    assert query.partition("=")[0] in message
    # UsageError is a ValueError: callers that catch ValueError keep working
    assert isinstance(info.value, ValueError)


def test_unknown_spec_option_does_not_echo_its_value():
    # a key pasted into the spec is refused without being repeated in the error
    with pytest.raises(UsageError) as info:
        get_backend(f"openai:m@http://127.0.0.1:9/v1?api_key={SECRET}")
    assert SECRET not in str(info.value) and "'api_key'" in str(info.value)
    assert "environment" in str(info.value)


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"timeout": float("nan")}, "timeout"),  # NaN passes `<= 0` checks; refused anyway
        ({"deadline": 0}, "deadline"),
        ({"max_retries": -1}, "max_retries"),
        ({"max_retries": 2.0}, "max_retries"),
        ({"backoff_base": -1}, "backoff_base"),
    ],
)
def test_bad_keywords_are_refused_too(options, name):
    with pytest.raises(UsageError, match=f"keyword {name}="):
        get_backend("openai:m@http://127.0.0.1:9/v1", **options)


def test_concurrency_bound_is_respected(make_backend):
    with StubChatServer(latency=0.25) as server:
        backend = make_backend(server, max_concurrency=3)
        replies = backend.complete([str(i) for i in range(9)])
    # the server never had more than 3 in flight, and the bound was actually reached
    assert server.max_in_flight == 3
    # each request was sent once and answered in input order
    assert len(server.requests) == 9
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
