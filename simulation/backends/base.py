"""Shared behaviour of the built-in backends: input checks, `complete`, stop-string truncation.

`BaseChatBackend` implements the public `generate` once (argument checks, empty batches, stop
strings) and leaves the model call to `_generate`; `complete` wraps each prompt as a single
user message. Subclasses only set `spec` and implement `_generate`.

Example:
    >>> class Upper(BaseChatBackend):
    ...     spec = "upper:"
    ...     def _generate(self, conversations, **generation):
    ...         return [conv[-1]["content"].upper() for conv in conversations]
    >>> Upper().complete(["stop here. not this"], stop=[". "])
    ['STOP HERE']
    >>> truncate_at_stop("Answer: 4\\nUser: next", ["\\nUser:"])
    'Answer: 4'
"""

from __future__ import annotations

from typing import Any

from mads_bench.errors import MadsBenchError
from mads_bench.text import clean_text
from simulation.backends.registry import ChatMessage

__all__ = ["BackendError", "BaseChatBackend", "truncate_at_stop", "validate_conversations"]


class BackendError(MadsBenchError, RuntimeError):
    """A backend could not produce a reply (server errors after retries, missing model, ...)."""


def truncate_at_stop(text: str, stop: list[str] | None) -> str:
    """Cut `text` at the earliest occurrence of any stop string (the stop string is dropped).

    Args:
        text (`str`): Generated text.
        stop (`list[str]`, *optional*): Stop strings; empty strings are ignored.

    Returns:
        `str`: The text before the first stop string, or `text` unchanged.

    Example:
        >>> truncate_at_stop("a</action> trailing", ["</action>", "zzz"])
        'a'
    """
    cut = len(text)
    for marker in stop or []:
        if marker:
            index = text.find(marker)
            if index != -1:
                cut = min(cut, index)
    return text[:cut]


def validate_conversations(conversations: Any, spec: str) -> list[list[ChatMessage]]:
    """Check that `conversations` is a list of non-empty lists of `{role, content}` dicts.

    Args:
        conversations: The batch passed to `generate`.
        spec (`str`): The backend's spec, named in errors.

    Returns:
        `list[list[ChatMessage]]`: The same batch, as a list.

    Raises:
        `ValueError`: Naming the conversation and message index that is malformed.

    Example:
        >>> validate_conversations([[{"role": "user", "content": "hi"}]], "fake:")
        [[{'role': 'user', 'content': 'hi'}]]
    """
    if isinstance(conversations, (str, dict)) or not isinstance(conversations, (list, tuple)):
        raise ValueError(
            f"{spec!r}: generate() takes a list of conversations (each a list of "
            f"{{'role', 'content'}} dicts), got {type(conversations).__name__}."
        )
    if conversations and isinstance(conversations[0], dict):
        raise ValueError(
            f"{spec!r}: generate() takes a list of conversations; this looks like a single "
            "conversation (a list of messages): wrap it in a list."
        )
    for i, conversation in enumerate(conversations):
        if not isinstance(conversation, (list, tuple)) or not conversation:
            raise ValueError(
                f"{spec!r}: conversations[{i}] must be a non-empty list of messages, "
                f"got {conversation!r:.80}."
            )
        for j, message in enumerate(conversation):
            if (
                not isinstance(message, dict)
                or not isinstance(message.get("role"), str)
                or not isinstance(message.get("content"), str)
            ):
                raise ValueError(
                    f"{spec!r}: conversations[{i}][{j}] must be a dict with string 'role' and "
                    f"'content', got {message!r:.80}."
                )
    return list(conversations)


class BaseChatBackend:
    """Base class implementing `ChatBackend.generate`/`complete` around one `_generate` hook.

    Attributes:
        spec (`str`): The spec string the backend was built from.
    """

    spec: str
    verifies_drafts: bool = False
    """Whether `_generate` takes `drafts` (else `generate` drops them)."""

    def generate(
        self,
        conversations: list[list[ChatMessage]],
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        stop: list[str] | None = None,
        drafts: list[str] | None = None,
    ) -> list[str]:
        """Return one reply per conversation, in input order.

        Args:
            conversations (`list[list[dict[str, str]]]`): Each a list of `{role, content}`.
            max_new_tokens (`int`): Upper bound on generated tokens per reply.
            temperature (`float`): 0 means greedy/deterministic; above 0 samples.
            seed (`int`, *optional*): Seed for sampling; same seed and batch, same output.
            stop (`list[str]`, *optional*): Replies are cut before the first stop string.
            drafts (`list[str]`, *optional*): The reply expected for each conversation (a
                nearby policy's). A backend that can check a guess in one forward pass
                (`transformers:`) decodes faster where it holds; the replies do not depend
                on it. Other backends ignore drafts.

        Returns:
            `list[str]`: Only the newly generated text of each reply.

        Example:
            >>> from simulation.backends import get_backend
            >>> get_backend("fake:", replies=["ok"]).generate([[{"role": "user", "content": "?"}]])
            ['ok']
        """
        conversations = validate_conversations(conversations, self.spec)
        if max_new_tokens < 1:
            raise ValueError(f"{self.spec!r}: max_new_tokens must be >= 1, got {max_new_tokens}.")
        if temperature < 0:
            raise ValueError(f"{self.spec!r}: temperature must be >= 0, got {temperature}.")
        if isinstance(stop, str):
            stop = [stop]
        if drafts is not None and len(drafts) != len(conversations):
            raise ValueError(
                f"{self.spec!r}: {len(drafts)} drafts for {len(conversations)} conversations."
            )
        if not conversations:
            return []
        extra = {"drafts": list(drafts)} if drafts is not None and self.verifies_drafts else {}
        replies = self._generate(
            conversations,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            seed=seed,
            stop=list(stop or []),
            **extra,
        )
        if len(replies) != len(conversations):
            raise BackendError(
                f"{self.spec!r}: returned {len(replies)} replies for {len(conversations)} "
                "conversations."
            )
        # a model can emit lone surrogates (a bad byte-level decode); they are not text and
        # would fail every UTF-8 writer downstream, so they become U+FFFD here, once
        return [clean_text(truncate_at_stop(reply, stop)) for reply in replies]

    def complete(self, prompts: list[str], **kwargs: Any) -> list[str]:
        """Send each prompt as one user message and return the replies in order.

        Args:
            prompts (`list[str]`): Plain-text prompts.
            **kwargs: Passed to `generate` (`max_new_tokens`, `temperature`, `seed`, `stop`).

        Returns:
            `list[str]`: One reply per prompt.

        Example:
            >>> from simulation.backends import get_backend
            >>> get_backend("fake:", replies=lambda conv: conv[0]["role"]).complete(["a", "b"])
            ['user', 'user']
        """
        if isinstance(prompts, str) or not all(isinstance(p, str) for p in prompts):
            raise ValueError(f"{self.spec!r}: complete() takes a list of prompt strings.")
        return self.generate([[{"role": "user", "content": p}] for p in prompts], **kwargs)

    def close(self) -> None:
        """Release resources held by the backend (connections, threads); a no-op by default."""

    def __enter__(self) -> BaseChatBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"

    def _generate(
        self,
        conversations: list[list[ChatMessage]],
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        stop: list[str],
    ) -> list[str]:
        raise NotImplementedError
