"""Decoding that can only name a tool the prompt offers.

A Pre-Act tool step is ``<action type="tool">{"name": "<tool>", "arguments": {...}}</action>``.
A small policy often writes a name no tool has (the 80-update SmolLM2-135M SFT adapter names
the gold tool on 4 of 55 held-out tool steps, mostly because the names it writes do not
exist): every such completion scores 0 on the name, so a GRPO group of them has no spread to
learn from. With a row's offered names (`offered_tools`: the ``- name(...)`` lines of the
system message's tool list), `ToolNameFilter` keeps the row's next token, while the row is
inside the quoted name, to the tokens that continue or complete one of those names. Outside
the name (thinking, planning, saying, the arguments) nothing is filtered.

The check is on characters, not on one tokenisation of each name, so any split the model
prefers is allowed: ``"`` then ``list`` then ``_customer``..., or ``"list`` at once, or a
last token that closes the quote and goes on (``",``). The filter only changes which token is
chosen; the log-probabilities a decoder reports stay those of the unfiltered model (what a
policy-gradient loss recomputes from a forward pass).

Example:
    >>> system = "Tools (...):\\n- get_balance(id: string) [read]\\n- list_cards() [read]"
    >>> offered_tools([{"role": "system", "content": system}])
    ('get_balance', 'list_cards')
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

__all__ = ["ToolNameFilter", "offered_tools"]

# where a tool step's name begins: the name's opening quote is the next character but space
_NAME_START = re.compile(r'<action type="tool">\s*\{\s*"name"\s*:')
_TOOL_LINE = re.compile(r"^- ([A-Za-z_][A-Za-z0-9_.-]*)\(", re.MULTILINE)
_TAIL_TOKENS = 48  # decoded to find the name's start: ample for the marker and a name


def offered_tools(messages: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """The tool names a step prompt offers: the ``- name(...)`` lines of its system message
    (the prompt format of `simulation.agents`); empty when it lists none."""
    for message in messages:
        if message.get("role") == "system":
            return tuple(dict.fromkeys(_TOOL_LINE.findall(str(message.get("content", "")))))
    return ()


@lru_cache(maxsize=4)
def _vocabulary(tokenizer: Any) -> tuple[dict[str, list[int]], list[str]]:
    """Each ordinary token's text: the token ids of each text, and the texts sorted."""
    texts = tokenizer.batch_decode(
        [[i] for i in range(len(tokenizer))],
        skip_special_tokens=False,
        clean_up_tokenization_spaces=False,
    )
    special = set(tokenizer.all_special_ids)
    by_text: dict[str, list[int]] = {}
    for index, text in enumerate(texts):
        if text and index not in special:
            by_text.setdefault(text, []).append(index)
    return by_text, sorted(by_text)


class ToolNameFilter:
    """Which tokens may come next in a row that must name one of its offered tools.

    Args:
        tokenizer: The decoder's tokenizer (token texts are read once per tokenizer).

    Example:
        >>> from transformers import AutoTokenizer  # doctest: +SKIP
        >>> names = ToolNameFilter(AutoTokenizer.from_pretrained("gpt2"))  # doctest: +SKIP
        >>> names.allowed('<action type="tool">{"name": "get_', ("get_balance",))  # doctest: +SKIP
        [...]  # the ids of "b", "bal", "balance", 'balance"', ...
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self._by_text, self._sorted = _vocabulary(tokenizer)
        self._cache: dict[tuple[tuple[str, ...], str], list[int] | None] = {}

    def text(self, tokens: Sequence[int]) -> str:
        """The decoded tail of a row's new tokens, long enough to hold a name's start."""
        return self.tokenizer.decode(tokens[-_TAIL_TOKENS:], skip_special_tokens=False)

    def allowed(self, text: str, names: tuple[str, ...]) -> list[int] | None:
        """Token ids that may follow ``text`` (a row's generated text, or its tail), or
        `None` when the row is not inside a tool name (no constraint).

        Args:
            text (`str`): What the row generated so far (the tail from `text` suffices).
            names (`tuple[str, ...]`): The offered tool names.

        Returns:
            `list[int] | None`: Sorted ids, or `None` outside a name, after a complete name,
                or when what was written cannot become an offered name.
        """
        starts = list(_NAME_START.finditer(text))
        if not starts or not names:
            return None
        start = starts[-1]
        key = (names, text[start.end() :])
        if key not in self._cache:
            self._cache[key] = self._continuations(*key)
        return self._cache[key]

    def _continuations(self, names: tuple[str, ...], written: str) -> list[int] | None:
        targets = [f'{space}"{name}"' for name in names for space in ("", " ")]
        if any(written.startswith(t) for t in targets):
            return None  # the name is complete: the arguments follow
        rests = [t[len(written) :] for t in targets if t.startswith(written)]
        if not rests:
            return None
        allowed: set[int] = set()
        for rest in rests:
            for end in range(1, len(rest) + 1):  # tokens that go part of the way
                allowed.update(self._by_text.get(rest[:end], ()))
            low = bisect.bisect_left(self._sorted, rest)  # tokens that close it and go on
            while low < len(self._sorted) and self._sorted[low].startswith(rest):
                allowed.update(self._by_text[self._sorted[low]])
                low += 1
        return sorted(allowed) or None
