"""`fake:` — a scripted, deterministic backend for testing code that talks to an LLM.

A test helper, not a model: it returns replies written by the test, so agents, judges and
evaluators can be tested offline, instantly and exactly. Replies come from (first match):

- `replies=[...]`: consumed in order across calls (one per conversation); running out raises
  `BackendError` unless `cycle=True`;
- `replies=callable`: `replies(conversation) -> str` for each conversation;
- the spec's argument: `fake:OK` always answers `"OK"`;
- otherwise an echo: `"[fake] <content of the last message>"`.

Every conversation seen is recorded in `calls` (with the generation settings in
`settings`) for assertions. Stop strings are honoured like a real backend (truncation).

Example:
    >>> from simulation.backends import get_backend
    >>> judge = get_backend("fake:", replies=["yes", "no"])
    >>> judge.complete(["Is 2 even?", "Is 3 even?"])
    ['yes', 'no']
    >>> judge.calls[1][0]["content"]
    'Is 3 even?'
    >>> get_backend("fake:OK").complete(["anything"])
    ['OK']
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from simulation.backends.base import BackendError, BaseChatBackend
from simulation.backends.registry import ChatMessage, register_backend, split_spec

__all__ = ["FakeBackend"]

ReplyFunction = Callable[[list[ChatMessage]], str]


@register_backend("fake")
class FakeBackend(BaseChatBackend):
    """Scripted replies for tests (see the module docstring for the reply sources).

    Args:
        spec (`str`): `"fake:"`, `"fake"` or `"fake:<constant reply>"`.
        replies (`list[str] | Callable[[list[dict]], str]`, *optional*): The script.
        cycle (`bool`): Restart a reply list from the top instead of raising when exhausted.

    Attributes:
        calls (`list[list[dict[str, str]]]`): Every conversation received, in order.
        settings (`list[dict]`): The generation settings of every `generate` call.

    Example:
        >>> backend = FakeBackend("fake:", replies=lambda conv: str(len(conv)))
        >>> backend.generate([[{"role": "user", "content": "a"}] * 3])
        ['3']
    """

    def __init__(
        self,
        spec: str = "fake:",
        *,
        replies: Sequence[str] | ReplyFunction | None = None,
        cycle: bool = False,
    ) -> None:
        prefix, constant = split_spec(spec)
        if prefix != "fake":
            raise ValueError(f"Backend spec {spec!r} is not a fake spec; expected 'fake:[reply]'.")
        if isinstance(replies, str):
            raise ValueError(f"{spec!r}: replies must be a list of strings or a callable, not str.")
        if replies is not None and not callable(replies):
            replies = list(replies)
            bad = [i for i, reply in enumerate(replies) if not isinstance(reply, str)]
            if bad:
                raise ValueError(f"{spec!r}: replies[{bad[0]}] is not a string.")
            if cycle and not replies:
                raise ValueError(f"{spec!r}: cycle=True needs at least one reply.")
        self.spec = spec
        self._replies = replies
        self._constant = constant or None
        self._cycle = cycle
        self._next = 0
        self._lock = threading.Lock()
        self.calls: list[list[ChatMessage]] = []
        self.settings: list[dict[str, Any]] = []

    def _generate(
        self,
        conversations: list[list[ChatMessage]],
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        stop: list[str],
    ) -> list[str]:
        with self._lock:
            self.settings.append(
                {
                    "max_new_tokens": max_new_tokens,
                    "temperature": temperature,
                    "seed": seed,
                    "stop": stop,
                    "batch": len(conversations),
                }
            )
            replies = [self._reply(conversation) for conversation in conversations]
            self.calls.extend([dict(m) for m in conversation] for conversation in conversations)
            return replies

    def _reply(self, conversation: list[ChatMessage]) -> str:
        if callable(self._replies):
            reply = self._replies(conversation)
            if not isinstance(reply, str):
                raise BackendError(f"{self.spec!r}: the replies callable returned {reply!r}.")
            return reply
        if self._replies is not None:
            if self._next >= len(self._replies):
                if not self._cycle:
                    raise BackendError(
                        f"{self.spec!r}: scripted replies exhausted after {len(self._replies)} "
                        "(pass more replies or cycle=True)."
                    )
                self._next = 0
            self._next += 1
            return self._replies[self._next - 1]
        if self._constant is not None:
            return self._constant
        return f"[fake] {conversation[-1]['content']}"
