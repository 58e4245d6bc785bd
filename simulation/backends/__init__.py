"""LLM backends for agents, judges and evaluators, selected by a spec string.

| spec | backend |
| --- | --- |
| `transformers:<model>` | local HF causal LM (`tiny-lm`, `smollm2-135m`, a folder), batched |
| `openai:<model>@<base_url>` | any OpenAI-compatible server; async, bounded concurrency, retries |
| `fake:[reply]` | scripted replies for tests (`replies=[...]` or a callable) |

All of them implement `ChatBackend` (`generate` for conversations, `complete` for plain
prompts, so any backend can serve as a `JudgeBackend`; `parse_judge_answer` reads a judge's
yes/no-like verdict). Other modules add backends with `register_backend(prefix)`.

Example:
    >>> from simulation.backends import get_backend
    >>> judge = get_backend("fake:", replies=["true", "false"])
    >>> judge.complete(["Is the refund grounded?", "Is the date grounded?"])
    ['true', 'false']
"""

from simulation.backends.base import BackendError, BaseChatBackend, truncate_at_stop
from simulation.backends.fake_backend import FakeBackend
from simulation.backends.judge import YES_NO, JudgeBackend, parse_judge_answer
from simulation.backends.openai_backend import OpenAIBackend
from simulation.backends.registry import (
    ChatBackend,
    ChatMessage,
    get_backend,
    known_prefixes,
    register_backend,
    spec_fingerprint,
    split_spec,
)
from simulation.backends.transformers_backend import TransformersBackend

__all__ = [
    "YES_NO",
    "BackendError",
    "BaseChatBackend",
    "ChatBackend",
    "FakeBackend",
    "JudgeBackend",
    "ChatMessage",
    "OpenAIBackend",
    "TransformersBackend",
    "get_backend",
    "known_prefixes",
    "parse_judge_answer",
    "register_backend",
    "spec_fingerprint",
    "split_spec",
    "truncate_at_stop",
]
