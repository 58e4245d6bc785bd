"""`openai:<model>@<base_url>[?options]` — any OpenAI-compatible chat-completions server.

Works with OpenAI itself and with vLLM, TGI, llama.cpp or SGLang servers. Requests go through
`openai.AsyncOpenAI` on a private event loop (see `async_runner`), at most `max_concurrency`
in flight per backend, while `generate` stays synchronous and callable from any thread.
Replies come back in input order.

Retries are ours alone (the client's own are disabled): HTTP 408/409/429/5xx, timeouts and
connection errors are retried up to `max_retries` times with exponential backoff and jitter
(`backoff_base * 2**attempt`, capped at `backoff_max`, randomised to 50-100 %, never shorter
than a server's `Retry-After`); anything else, or the last failure, raises `BackendError`
naming the spec, the request index and the cause. While one request is being retried the
others keep going; a final failure cancels the rest of the batch.

Each request also has a total `deadline` (seconds), shared by its attempts and the backoff
sleeps between them: when it has passed, the attempt in flight is abandoned and `BackendError`
says "deadline of N s exceeded after K attempt(s)"; a retry whose sleep would end past it is
not attempted. Time queued for a slot behind `max_concurrency` other requests does not count
(a large batch would otherwise run out of time waiting its turn). The default is
`max(DEFAULT_DEADLINE, timeout)`, one minute unless one attempt may take longer: a server that
accepts connections and never answers costs one minute per request, so a conversation against
it fails within about a minute and `--max-failures` stops the run after a few; quick failures
(connection refused, 5xx) are still retried inside that minute. A slow server that needs more
than a minute per reply is given `?timeout=120` (one attempt of up to two minutes) or an
explicit `?deadline=`.

Options can be given in the spec, after the URL in query-string form, which is how a command
line that takes only a spec sets them: `openai:<model>@<base_url>?timeout=10&max_retries=2
&deadline=60`. Accepted there: `timeout`, `deadline`, `max_retries`, `max_concurrency`,
`backoff_base` and `backoff_max`. The query string is removed from the URL the client uses
(so a base URL cannot carry query parameters of its own). **An option in the spec wins over the
same keyword passed to `get_backend`**: the keyword is the calling program's default, the spec
is what the user wrote. Unknown names, repeated names and bad values (not a number, NaN or
infinite, negative, `timeout` or `deadline` not above 0, a fractional count) raise
`UsageError` naming the spec and the option. No option carries a secret, so `spec` may be
logged as given.

The API key is read from the environment variable `api_key_env` (default `OPENAI_API_KEY`);
a server on localhost without a key gets the placeholder `"EMPTY"` (vLLM's convention). The
key never appears in `repr`, logs or error messages.

Example:
    >>> from simulation.backends import get_backend
    >>> llm = get_backend("openai:Qwen2.5-7B@http://localhost:8000/v1", max_concurrency=16)
    >>> llm.model, llm.base_url, llm.timeout, llm.deadline
    ('Qwen2.5-7B', 'http://localhost:8000/v1', 60.0, 60.0)
    >>> bounded = get_backend("openai:m@http://localhost/v1?timeout=10&deadline=25", timeout=30)
    >>> bounded.base_url, bounded.timeout, bounded.deadline, bounded.max_retries
    ('http://localhost/v1', 10.0, 25.0, 4)
    >>> llm.complete(["Say hi."], max_new_tokens=16)  # doctest: +SKIP
    ['Hi!']
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import random
import re
import weakref
from typing import Any, NamedTuple
from urllib.parse import urlparse

from mads_bench.errors import UsageError
from simulation.backends.async_runner import LoopThread
from simulation.backends.base import BackendError, BaseChatBackend
from simulation.backends.registry import ChatMessage, register_backend, split_spec

__all__ = ["OpenAIBackend"]

logger = logging.getLogger(__name__)

_EXPECTED = "'openai:<model>@<base_url>', e.g. 'openai:gpt-4o-mini@https://api.openai.com/v1'"
_SPEC_PATTERN = re.compile(r"^(?P<model>.+?)@(?P<url>https?://[^\s?]+)(?:\?(?P<query>\S*))?$")
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}
_RETRY_STATUS = {408, 409, 429}
_MAX_SERVER_STOPS = 4  # OpenAI rejects more; the rest are applied client-side


class _Bound(NamedTuple):
    """The values a numeric setting accepts: its type and its lowest value."""

    kind: type
    lowest: float
    inclusive: bool

    def describe(self) -> str:
        noun = "a whole number" if self.kind is int else "a finite number"
        return f"{noun} {'>=' if self.inclusive else '>'} {self.lowest:g}"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.kind is int and not isinstance(value, int):
            return False
        if not math.isfinite(value):
            return False
        return value >= self.lowest if self.inclusive else value > self.lowest


# The settings a spec's query string may set; the same bounds check the keywords.
_SETTINGS = {
    "timeout": _Bound(float, 0, inclusive=False),
    "deadline": _Bound(float, 0, inclusive=False),
    "max_retries": _Bound(int, 0, inclusive=True),
    "max_concurrency": _Bound(int, 1, inclusive=True),
    "backoff_base": _Bound(float, 0, inclusive=True),
    "backoff_max": _Bound(float, 0, inclusive=True),
}


def _parse_spec_options(where: str, query: str | None) -> dict[str, int | float]:
    """Read the `name=value&...` options after a spec's URL.

    Args:
        where (`str`): The spec without its query string, named in errors (an unknown option's
            value is never echoed).
        query (`str`, *optional*): The text after `?` (`None` when there is none).

    Returns:
        `dict[str, int | float]`: Option name to checked value.

    Raises:
        `UsageError`: For an unknown or repeated name, a missing value or a bad value.
    """
    options: dict[str, int | float] = {}
    for item in filter(None, (query or "").split("&")):  # a stray `&` is harmless
        name, has_value, text = item.partition("=")
        if name not in _SETTINGS:
            hint = " (API keys are read from the environment, see api_key_env)"
            raise UsageError(
                f"{where!r}: unknown spec option {name!r}; known options: "
                f"{', '.join(_SETTINGS)}" + (hint if "key" in name.lower() else "") + "."
            )
        if name in options:
            raise UsageError(f"{where!r}: spec option {name!r} is given twice.")
        bound = _SETTINGS[name]
        try:
            value = bound.kind(text) if has_value else None
        except ValueError:
            value = None
        if value is None or not bound.accepts(value):
            raise UsageError(
                f"{where!r}: spec option {name}={text!r} is invalid: {name} must be "
                f"{bound.describe()}."
            )
        options[name] = value
    return options


DEFAULT_DEADLINE = 60.0
"""Seconds a request may take over all its attempts when no ``deadline`` is given."""


@register_backend("openai")
class OpenAIBackend(BaseChatBackend):
    """Chat completions from an OpenAI-compatible server, async inside, sync outside.

    Each numeric keyword can also be set in the spec (`...@<base_url>?timeout=10`); the spec's
    value wins (see the module docstring).

    Args:
        spec (`str`): `"openai:<model>@<base_url>"`, optionally followed by
            `?name=value&...` options.
        max_concurrency (`int`): Requests in flight at once, per backend.
        max_retries (`int`): Retries after the first attempt of each request.
        timeout (`float`): Seconds before one attempt is abandoned (and maybe retried).
        deadline (`float`, *optional*): Seconds one request may take over all its attempts
            and backoff sleeps; by default `max(DEFAULT_DEADLINE, timeout)` (60 s).
        api_key_env (`str`): Environment variable holding the API key.
        backoff_base (`float`): First retry delay in seconds, doubled on every retry.
        backoff_max (`float`): Upper bound on one retry delay.
        token_limit_field (`str`): `"max_tokens"` (vLLM, most servers) or
            `"max_completion_tokens"` (OpenAI reasoning models).
        extra_body (`dict`, *optional*): Extra JSON fields for every request (e.g. vLLM's
            `{"top_k": 20}`).
        tool_role (`str`, *optional*): Send `tool` messages under this role instead (e.g.
            `"user"`): OpenAI's own API rejects a `tool` message that does not answer a
            structured `tool_calls` entry, which Pre-Act's textual tool steps never are.

    Raises:
        `UsageError` (a `ValueError`): For a malformed spec, bad options or keywords, or a
            remote server without a key.
    """

    def __init__(
        self,
        spec: str,
        *,
        max_concurrency: int = 8,
        max_retries: int = 4,
        timeout: float = 60.0,
        deadline: float | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        token_limit_field: str = "max_tokens",
        extra_body: dict[str, Any] | None = None,
        tool_role: str | None = None,
    ) -> None:
        prefix, argument = split_spec(spec)
        match = _SPEC_PATTERN.match(argument) if prefix == "openai" else None
        if match is None or not urlparse(match["url"]).hostname:
            raise UsageError(f"Malformed backend spec {spec!r}: expected {_EXPECTED}.")
        settings: dict[str, Any] = {
            "timeout": timeout,
            "max_retries": max_retries,
            "max_concurrency": max_concurrency,
            "backoff_base": backoff_base,
            "backoff_max": backoff_max,
        }
        if deadline is not None:
            settings["deadline"] = deadline
        # errors before the options are known good quote the spec without them: an unknown
        # option might be a key pasted into the wrong place
        without_options = f"openai:{match['model']}@{match['url']}"
        for name, value in settings.items():
            if not _SETTINGS[name].accepts(value):
                raise UsageError(
                    f"{without_options!r}: keyword {name}={value!r} is invalid: {name} must be "
                    f"{_SETTINGS[name].describe()}."
                )
        settings.update(_parse_spec_options(without_options, match["query"]))
        if token_limit_field not in ("max_tokens", "max_completion_tokens"):
            raise UsageError(
                f"{spec!r}: token_limit_field must be max_tokens or max_completion_tokens."
            )
        self.spec = spec
        self.model = match["model"]
        self.base_url = match["url"].rstrip("/")
        self.max_concurrency = settings["max_concurrency"]
        self.max_retries = settings["max_retries"]
        self.timeout = float(settings["timeout"])
        self.backoff_base = float(settings["backoff_base"])
        self.backoff_max = float(settings["backoff_max"])
        if "deadline" in settings:
            self.deadline = float(settings["deadline"])
        else:  # a hung server costs a minute per request, not minutes of retries
            self.deadline = max(DEFAULT_DEADLINE, self.timeout)
        self.token_limit_field = token_limit_field
        self.extra_body = dict(extra_body or {})
        self.tool_role = tool_role
        self._api_key = self._read_api_key(api_key_env)
        self._random = random.Random()
        self._client: Any = None
        self._semaphore: asyncio.Semaphore | None = None
        self._runner = LoopThread(name=f"openai-backend:{self.model}")
        self._finalizer = weakref.finalize(self, self._runner.stop)

    def _read_api_key(self, env_var: str) -> str:
        key = os.environ.get(env_var, "").strip()
        if key:
            return key
        if urlparse(self.base_url).hostname in _LOCAL_HOSTS:
            return "EMPTY"
        raise UsageError(
            f"{self.spec!r}: no API key for a remote server; set the environment variable "
            f"{env_var} (or pass api_key_env='OTHER_VAR'); for a server that needs no key, "
            f"set {env_var}=EMPTY."
        )

    def close(self) -> None:
        """Close the HTTP client and stop the background loop (a later call reopens them)."""
        if self._client is not None:
            try:
                self._runner.run(self._client.close())
            finally:
                self._client = None
                self._semaphore = None
        self._runner.stop()

    def _generate(
        self,
        conversations: list[list[ChatMessage]],
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        stop: list[str],
    ) -> list[str]:
        params: dict[str, Any] = {
            "model": self.model,
            "temperature": temperature,
            self.token_limit_field: max_new_tokens,
        }
        if seed is not None:
            params["seed"] = seed
        if stop:
            params["stop"] = stop[:_MAX_SERVER_STOPS]
        if self.extra_body:
            params["extra_body"] = self.extra_body
        if self.tool_role:
            conversations = [
                [{**m, "role": self.tool_role} if m["role"] == "tool" else m for m in conversation]
                for conversation in conversations
            ]
        return self._runner.run(self._generate_all(conversations, params))

    async def _generate_all(
        self, conversations: list[list[ChatMessage]], params: dict[str, Any]
    ) -> list[str]:
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
            )
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
        tasks = [
            asyncio.ensure_future(self._request(index, conversation, params))
            for index, conversation in enumerate(conversations)
        ]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        failed = [task for task in tasks if task.done() and task.exception() is not None]
        if failed:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise failed[0].exception()  # type: ignore[misc]
        return [task.result() for task in tasks]

    async def _request(
        self, index: int, messages: list[ChatMessage], params: dict[str, Any]
    ) -> str:
        import openai

        assert self._semaphore is not None
        loop = asyncio.get_running_loop()
        spent = 0.0  # seconds charged to the deadline: attempts and sleeps, not queueing
        for attempt in range(self.max_retries + 1):
            try:
                async with self._semaphore:
                    began = loop.time()
                    try:
                        # wait_for, not only the client's timeout: httpx's timeout is per read,
                        # so a server trickling bytes could otherwise outlast the deadline
                        response = await asyncio.wait_for(
                            self._client.chat.completions.create(messages=messages, **params),
                            timeout=self.deadline - spent,
                        )
                    finally:
                        spent += loop.time() - began
            except TimeoutError as error:
                raise self._deadline_error(
                    index, attempt + 1, "last attempt still unanswered"
                ) from error
            except openai.OpenAIError as error:
                cause = self._describe(error)
                retryable = isinstance(error, openai.APIConnectionError) or (
                    isinstance(error, openai.APIStatusError)
                    and (error.status_code in _RETRY_STATUS or error.status_code >= 500)
                )
                if not retryable or attempt == self.max_retries:
                    raise BackendError(
                        f"{self.spec!r}: request {index} failed after {attempt + 1} attempt(s): "
                        f"{cause}" + ("" if retryable else " (not retryable)")
                    ) from error
                delay = self._backoff_delay(attempt, error)
                if spent + delay >= self.deadline:
                    # a retry that could only start past the deadline is not worth the sleep
                    raise self._deadline_error(
                        index, attempt + 1, f"{cause}; next retry due in {delay:.2f} s"
                    ) from error
                logger.warning(
                    "%r: request %d: %s; retry %d/%d in %.2f s",
                    self.spec,
                    index,
                    cause,
                    attempt + 1,
                    self.max_retries,
                    delay,
                )
                began = loop.time()
                await asyncio.sleep(delay)
                spent += loop.time() - began
            else:
                if not response.choices:
                    raise BackendError(f"{self.spec!r}: request {index}: reply has no choices.")
                return response.choices[0].message.content or ""
        raise AssertionError("unreachable")  # the last attempt always returns or raises

    def _deadline_error(self, index: int, attempts: int, detail: str) -> BackendError:
        return BackendError(
            f"{self.spec!r}: request {index}: deadline of {self.deadline:g} s exceeded after "
            f"{attempts} attempt(s) ({detail})"
        )

    def _backoff_delay(self, attempt: int, error: Exception) -> float:
        ceiling = min(self.backoff_max, self.backoff_base * 2**attempt)
        delay = ceiling * self._random.uniform(0.5, 1.0)
        response = getattr(error, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        try:
            delay = max(delay, min(float(retry_after), self.backoff_max))
        except (TypeError, ValueError):
            pass  # absent or an HTTP date: keep our own delay
        return delay

    def _describe(self, error: Exception) -> str:
        import openai

        if isinstance(error, openai.APITimeoutError):
            return f"timed out after {self.timeout:g} s"
        if isinstance(error, openai.APIConnectionError):
            cause = error.__cause__ or error
            return f"connection error to {self.base_url} ({type(cause).__name__}: {cause})"
        if isinstance(error, openai.APIStatusError):
            return (
                f"HTTP {error.status_code} ({type(error).__name__}): {self._redact(error.message)}"
            )
        return self._redact(str(error))

    def _redact(self, text: str) -> str:
        # Servers sometimes echo request headers in error bodies; never let the key through.
        if len(self._api_key) >= 8:
            text = text.replace(self._api_key, "***")
        return text[:200]
