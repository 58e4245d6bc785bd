"""`openai:<model>@<base_url>` — any OpenAI-compatible chat-completions server.

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

The API key is read from the environment variable `api_key_env` (default `OPENAI_API_KEY`);
a server on localhost without a key gets the placeholder `"EMPTY"` (vLLM's convention). The
key never appears in `repr`, logs or error messages.

Example:
    >>> from simulation.backends import get_backend
    >>> llm = get_backend("openai:Qwen2.5-7B@http://localhost:8000/v1", max_concurrency=16)
    >>> llm.model, llm.base_url
    ('Qwen2.5-7B', 'http://localhost:8000/v1')
    >>> llm.complete(["Say hi."], max_new_tokens=16)  # doctest: +SKIP
    ['Hi!']
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
import weakref
from typing import Any
from urllib.parse import urlparse

from simulation.backends.async_runner import LoopThread
from simulation.backends.base import BackendError, BaseChatBackend
from simulation.backends.registry import Message, register_backend, split_spec

__all__ = ["OpenAIBackend"]

logger = logging.getLogger(__name__)

_EXPECTED = "'openai:<model>@<base_url>', e.g. 'openai:gpt-4o-mini@https://api.openai.com/v1'"
_SPEC_PATTERN = re.compile(r"^(?P<model>.+?)@(?P<url>https?://\S+)$")
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}
_RETRY_STATUS = {408, 409, 429}
_MAX_SERVER_STOPS = 4  # OpenAI rejects more; the rest are applied client-side


@register_backend("openai")
class OpenAIBackend(BaseChatBackend):
    """Chat completions from an OpenAI-compatible server, async inside, sync outside.

    Args:
        spec (`str`): `"openai:<model>@<base_url>"`.
        max_concurrency (`int`): Requests in flight at once, per backend.
        max_retries (`int`): Retries after the first attempt of each request.
        timeout (`float`): Seconds before one attempt is abandoned (and maybe retried).
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
        `ValueError`: For a malformed spec, bad options, or a remote server without a key.
    """

    def __init__(
        self,
        spec: str,
        *,
        max_concurrency: int = 8,
        max_retries: int = 4,
        timeout: float = 60.0,
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
            raise ValueError(f"Malformed backend spec {spec!r}: expected {_EXPECTED}.")
        if max_concurrency < 1 or max_retries < 0 or timeout <= 0 or backoff_base < 0:
            raise ValueError(
                f"{spec!r}: need max_concurrency >= 1, max_retries >= 0, timeout > 0 and "
                f"backoff_base >= 0 (got {max_concurrency}, {max_retries}, {timeout}, "
                f"{backoff_base})."
            )
        if token_limit_field not in ("max_tokens", "max_completion_tokens"):
            raise ValueError(
                f"{spec!r}: token_limit_field must be max_tokens or max_completion_tokens."
            )
        self.spec = spec
        self.model = match["model"]
        self.base_url = match["url"].rstrip("/")
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.timeout = float(timeout)
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
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
        raise ValueError(
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
        conversations: list[list[Message]],
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
        self, conversations: list[list[Message]], params: dict[str, Any]
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

    async def _request(self, index: int, messages: list[Message], params: dict[str, Any]) -> str:
        import openai

        assert self._semaphore is not None
        for attempt in range(self.max_retries + 1):
            try:
                async with self._semaphore:
                    response = await self._client.chat.completions.create(
                        messages=messages, **params
                    )
                if not response.choices:
                    raise BackendError(f"{self.spec!r}: request {index}: reply has no choices.")
                return response.choices[0].message.content or ""
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
                logger.warning(
                    "%r: request %d: %s; retry %d/%d in %.2f s",
                    self.spec,
                    index,
                    cause,
                    attempt + 1,
                    self.max_retries,
                    delay,
                )
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # the loop always returns or raises

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
