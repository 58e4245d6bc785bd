"""What a judge is, and how its answer is read: `JudgeBackend` and `parse_judge_answer`.

A judge is any object with batched plain-prompt completion, one reply per prompt in order;
every `ChatBackend` of `get_backend` qualifies. The validator, SAGE (S3) and ATOD ask their
judges different questions, so each passes the answer words its prompt asks for (`words`)
and says whether only the reply's first word counts (`first_word`).

Example:
    >>> from simulation.backends import get_backend
    >>> judge = get_backend("fake:", replies=["**Yes**, it is grounded.", "I think no."])
    >>> [parse_judge_answer(reply) for reply in judge.complete(["q1", "q2"])]
    [True, False]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Protocol, runtime_checkable

__all__ = ["YES_NO", "JudgeBackend", "parse_judge_answer"]

YES_NO: Mapping[str, bool | None] = MappingProxyType({"yes": True, "no": False})
"""The default answer words: `yes` is True, `no` is False."""

_FIRST_WORD = re.compile(r"\W*(\w+)")


@runtime_checkable
class JudgeBackend(Protocol):
    """A judge: batched plain-prompt completion (every `ChatBackend` qualifies).

    A backend's `spec` string, where it has one, names the judge in verdicts.
    """

    def complete(self, prompts: list[str]) -> list[str]:
        """Return one reply per prompt, in order."""
        ...


def parse_judge_answer(
    text: str | None,
    *,
    words: Mapping[str, bool | None] = YES_NO,
    first_word: bool = False,
) -> bool | None:
    """Read a judge's verdict: the value of the first answer word of the reply.

    Words match whole and case-insensitively (the reply is case-folded). A word whose value
    is None (e.g. `abstain`) is an explicit abstention: it decides, as None, like any other.

    Args:
        text (`str | None`): The judge's reply.
        words (`Mapping[str, bool | None]`): Lower-case answer words and what each means.
        first_word (`bool`): Read only the reply's first word (after leading punctuation)
            instead of searching it for the first answer word.

    Returns:
        `bool | None`: The answer; None when it abstains or no answer word is found.

    Example:
        >>> parse_judge_answer("Verdict: FAIL", words={"pass": True, "fail": False})
        False
        >>> parse_judge_answer("abstain, though likely true", words={"true": True, "abstain": None})
        >>> parse_judge_answer("I think yes", first_word=True) is None
        True
    """
    folded = (text or "").casefold()
    if first_word:
        match = _FIRST_WORD.match(folded)
        return words.get(match.group(1)) if match else None
    match = _pattern(tuple(words)).search(folded)
    return words.get(match.group(1)) if match else None


@cache
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    # longest first, so that no word can shadow a longer one it starts
    alternatives = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.compile(rf"\b({alternatives})\b")
