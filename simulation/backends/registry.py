"""The `ChatBackend` protocol and the registry that builds a backend from a spec string.

Every agent, judge and evaluator talks to a language model through `ChatBackend`: a batch of
conversations in, one reply per conversation out, in input order. Which model answers is
chosen by a spec string whose prefix (the text before the first `:`) names a registered
backend: `transformers:<model>`, `openai:<model>@<base_url>`, `fake:` (a test helper), and
whatever other modules add with `register_backend`.

Example:
    >>> from simulation.backends import get_backend
    >>> backend = get_backend("fake:", replies=["Hello!"])
    >>> backend.generate([[{"role": "user", "content": "Hi"}]])
    ['Hello!']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = [
    "ChatBackend",
    "ChatMessage",
    "get_backend",
    "known_prefixes",
    "register_backend",
    "spec_fingerprint",
    "split_spec",
]

ChatMessage = dict[str, str]
"""One chat message: `{"role": "system" | "user" | "assistant" | "tool", "content": str}`."""

BackendFactory = Callable[..., "ChatBackend"]
_FactoryT = TypeVar("_FactoryT", bound=BackendFactory)

_REGISTRY: dict[str, BackendFactory] = {}


@runtime_checkable
class ChatBackend(Protocol):
    """What every language-model backend offers: batched chat generation.

    Attributes:
        spec (`str`): The spec string the backend was built from (never contains secrets).
    """

    spec: str

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
        """Return one reply per conversation, in input order (only the new text); `drafts`,
        the replies expected (a nearby policy's), may make it faster, never different."""
        ...

    def complete(self, prompts: list[str], **kwargs: Any) -> list[str]:
        """Return one reply per prompt, each prompt sent as a single user message."""
        ...


def register_backend(prefix: str) -> Callable[[_FactoryT], _FactoryT]:
    """Register a backend class or factory under a spec prefix (decorator).

    The factory is called as `factory(spec, **options)` with the full spec string.

    Args:
        prefix (`str`): The text before the first `:` in specs that select this backend.

    Returns:
        A decorator that registers its argument and returns it unchanged.

    Raises:
        `ValueError`: When the prefix is empty, contains `:`, or is already taken by
            another factory.

    Example:
        >>> from simulation.backends.base import BaseChatBackend
        >>> @register_backend("echo-doc")
        ... class EchoBackend(BaseChatBackend):
        ...     def __init__(self, spec: str) -> None:
        ...         self.spec = spec
        ...     def _generate(self, conversations, **generation):
        ...         return [conv[-1]["content"] for conv in conversations]
        >>> get_backend("echo-doc:").complete(["ping"])
        ['ping']
    """
    if not prefix or ":" in prefix or prefix != prefix.strip():
        raise ValueError(f"Backend prefix {prefix!r} must be a non-empty word without ':'.")

    def decorator(factory: _FactoryT) -> _FactoryT:
        existing = _REGISTRY.get(prefix)
        if existing is not None and existing is not factory:
            raise ValueError(f"Backend prefix {prefix!r} is already registered to {existing!r}.")
        _REGISTRY[prefix] = factory
        return factory

    return decorator


def known_prefixes() -> list[str]:
    """Return the registered spec prefixes, sorted.

    Returns:
        `list[str]`: E.g. `["fake", "openai", "transformers"]`.
    """
    return sorted(_REGISTRY)


def split_spec(spec: str) -> tuple[str, str]:
    """Split a spec string into its prefix and the argument after the first `:`.

    Args:
        spec (`str`): E.g. `"transformers:tiny-lm"`; a bare `"fake"` has an empty argument.

    Returns:
        `tuple[str, str]`: `(prefix, argument)`, both stripped of surrounding spaces.

    Example:
        >>> split_spec("openai:gpt-4o-mini@https://api.openai.com/v1")
        ('openai', 'gpt-4o-mini@https://api.openai.com/v1')
    """
    if not isinstance(spec, str):
        raise TypeError(f"Backend spec must be a string, got {type(spec).__name__}: {spec!r}.")
    prefix, _, argument = spec.partition(":")
    return prefix.strip(), argument.strip()


def spec_fingerprint(spec: str) -> str | None:
    """What identifies the weights a local-model spec loads (``transformers:<model>``).

    The fingerprint of the resolved model or adapter folder
    (:func:`mads_bench.manifest.model_fingerprint`), so a run manifest tells a retrained
    adapter from the one a run started with; None for remote and scripted specs.

    Raises:
        `ModelNotFoundError`: the model is not available locally.
    """
    prefix, name = split_spec(spec)
    if prefix != "transformers" or not name:
        return None
    from mads_bench.manifest import model_fingerprint
    from mads_bench.models import resolve_model

    return model_fingerprint(resolve_model(name))


def get_backend(spec: str, **options: Any) -> ChatBackend:
    """Build the backend a spec string names.

    Args:
        spec (`str`): `"<prefix>:<argument>"`, e.g. `"transformers:smollm2-135m"` or
            `"openai:Qwen2.5-7B@http://localhost:8000/v1"`.
        **options: Backend-specific options (`batch_size`, `max_concurrency`, `replies`, ...).

    Returns:
        `ChatBackend`: A new backend (models and connections are opened lazily).

    Raises:
        `ValueError`: For an unknown prefix (the message lists the known ones) or a
            malformed argument (the message names the spec and the expected form).

    Example:
        >>> get_backend("fake:", replies=lambda conv: conv[-1]["content"].upper()).complete(["hi"])
        ['HI']
    """
    prefix, _ = split_spec(spec)
    factory = _REGISTRY.get(prefix)
    if factory is None:
        raise ValueError(
            f"Unknown backend spec {spec!r}: prefix {prefix!r} is not registered. "
            f"Known prefixes: {', '.join(known_prefixes()) or '(none)'}; expected "
            "'<prefix>:<argument>', e.g. 'transformers:tiny-lm' or "
            "'openai:<model>@<base_url>'."
        )
    return factory(spec, **options)
