"""Scoring primitives shared by the GRPO rewards and the L-1 / L-2 evaluators.

Everything here is a plain, deterministic function (no model): reading a gold action from
the ``grpo`` dataset columns, reading a predicted action from model output, comparing tool
arguments, token F1 and the lenient tool-name match of L-2. The sentence-embedding
similarity lives in :mod:`mads_bench.embedding`.

Argument equality ("exact match after JSON normalisation", SPEC §6) compares JSON *values*:
object key order and whitespace never matter, numbers compare by value (``1`` equals
``1.0``, as JSON has one number type), booleans are not numbers (``true`` differs from
``1``), strings compare exactly (case and spaces count; ``"1"`` differs from ``1``), ``null``
equals only ``null`` and arrays keep their order. This differs on purpose from
``mads_bench.pre_act.canonical_json``, which keeps ``1`` and ``1.0`` apart.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from dataclasses import dataclass
from typing import Any

from mads_bench.pre_act import Action, parse_step

__all__ = [
    "ACTION_TYPES",
    "GoldAction",
    "arguments_equal",
    "completion_text",
    "edit_distance",
    "normalize_answer",
    "normalize_arguments",
    "parse_prediction",
    "token_f1",
    "tool_names_match",
]

ACTION_TYPES = ("tool", "say")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


class _JsonBool:
    """A JSON boolean that, unlike Python's ``bool``, never equals a number."""

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _JsonBool) and other.value == self.value

    def __hash__(self) -> int:
        return hash(("json-bool", self.value))

    def __repr__(self) -> str:
        return "true" if self.value else "false"


def normalize_arguments(value: Any) -> Any:
    """Turn a decoded JSON value into one whose ``==`` is JSON value equality.

    Args:
        value (`Any`): A value from ``json.loads`` (dicts, lists, str, int, float, bool, None).

    Returns:
        `Any`: The same structure with booleans wrapped so that ``true != 1``.

    Example:
        >>> normalize_arguments({"n": 1}) == normalize_arguments({"n": 1.0})
        True
        >>> normalize_arguments([True]) == normalize_arguments([1])
        False
    """
    if isinstance(value, bool):
        return _JsonBool(value)
    if isinstance(value, dict):
        return {key: normalize_arguments(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [normalize_arguments(item) for item in value]
    return value


def arguments_equal(predicted: Any, gold: Any) -> bool:
    """Compare two argument dicts as JSON values (see the module docstring for the rules).

    Args:
        predicted (`Any`): Predicted arguments (decoded JSON).
        gold (`Any`): Gold arguments (decoded JSON).

    Returns:
        `bool`: True when both are equal JSON values.

    Example:
        >>> arguments_equal({"a": 1, "b": "x"}, {"b": "x", "a": 1.0})
        True
        >>> arguments_equal({"a": "X"}, {"a": "x"})
        False
    """
    return normalize_arguments(predicted) == normalize_arguments(gold)


@dataclass(frozen=True)
class GoldAction:
    """The gold action of one step, read from the ``grpo`` columns (SPEC §4.3)."""

    type: str
    tool_name: str | None = None
    tool_arguments: dict[str, Any] | None = None
    say: str | None = None

    @classmethod
    def from_columns(
        cls,
        action_type: Any,
        tool_name: Any = None,
        tool_arguments: Any = None,
        say: Any = None,
        *,
        where: str = "",
    ) -> GoldAction | None:
        """Build from column values; None when ``action_type`` is None (no gold for the row).

        Args:
            action_type (`str | None`): ``gold_action_type``: ``"tool"`` or ``"say"``.
            tool_name (`str | None`): ``gold_tool_name`` (tool rows).
            tool_arguments (`str | dict | None`): ``gold_tool_arguments``, a JSON object string
                (a dict is accepted as well; None or ``""`` mean ``{}``).
            say (`str | None`): ``gold_say`` (say rows).
            where (`str`): Row description used in error messages, e.g. ``"row 3"``.

        Returns:
            `GoldAction | None`: The gold action.

        Raises:
            `ValueError`: Naming the column, when a gold value is malformed (a data bug).

        Example:
            >>> GoldAction.from_columns("tool", "get_order", '{"order_id": "A-1"}').tool_arguments
            {'order_id': 'A-1'}
        """
        prefix = f"{where}: " if where else ""
        if action_type is None:
            return None
        if action_type not in ACTION_TYPES:
            raise ValueError(
                f"{prefix}gold_action_type must be 'tool' or 'say', not {action_type!r}"
            )
        if action_type == "say":
            if not isinstance(say, str):
                raise ValueError(f"{prefix}gold_say must be a string on a say row, not {say!r}")
            return cls(type="say", say=say.strip())
        if not isinstance(tool_name, str) or not tool_name:
            raise ValueError(
                f"{prefix}gold_tool_name must be a non-empty string, not {tool_name!r}"
            )
        arguments = tool_arguments
        if arguments is None or arguments == "":
            arguments = {}
        elif isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError as err:
                raise ValueError(f"{prefix}gold_tool_arguments is not valid JSON: {err}") from None
        if not isinstance(arguments, dict):
            raise ValueError(
                f"{prefix}gold_tool_arguments must be a JSON object, not {arguments!r}"
            )
        return cls(type="tool", tool_name=tool_name, tool_arguments=arguments)


def completion_text(completion: Any) -> str | None:
    """The text of a completion: a string as is, or the last assistant message's content.

    Args:
        completion (`Any`): A plain-text completion, or a list of chat messages (TRL's
            conversational format) whose content is a string or a list of ``{"type": "text",
            "text": ...}`` parts.

    Returns:
        `str | None`: The text, or None when nothing textual is found.

    Example:
        >>> completion_text([{"role": "assistant", "content": "hi"}])
        'hi'
    """
    if isinstance(completion, str):
        return completion
    if not isinstance(completion, list | tuple):
        return None
    for message in reversed(completion):
        if not isinstance(message, dict) or message.get("role", "assistant") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            parts = [p.get("text") for p in content if isinstance(p, dict)]
            return "".join(p for p in parts if isinstance(p, str))
        return None
    return None


def parse_prediction(completion: Any) -> Action | None:
    """The action of a model output, read leniently (never raises); None when none is found.

    Example:
        >>> parse_prediction('<think>x</think><action type="say">Hi</action>').text
        'Hi'
        >>> parse_prediction("no tags at all") is None
        True
    """
    text = completion_text(completion)
    return None if text is None else parse_step(text, strict=False).action


def normalize_answer(text: str) -> str:
    """SQuAD-style normalisation: lower case, no punctuation, no articles, single spaces."""
    text = _ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION))
    return " ".join(text.split())


def token_f1(predicted: str, gold: str) -> float:
    """Bag-of-tokens F1 between two answers after `normalize_answer` (SQuAD convention).

    Args:
        predicted (`str`): Predicted answer.
        gold (`str`): Reference answer.

    Returns:
        `float`: F1 in [0, 1]; 1.0 when both normalise to nothing, 0.0 when only one does.

    Example:
        >>> token_f1("The order A-1 is shipped", "order A-1 shipped today")
        0.75
    """
    pred_tokens, gold_tokens = normalize_answer(predicted).split(), normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    common = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred_tokens), common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insert, delete, substitute; each costs 1).

    Example:
        >>> edit_distance("get_order", "get_orders"), edit_distance("kitten", "sitting")
        (1, 3)
    """
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        previous = current
    return previous[-1]


def tool_names_match(predicted: str, gold: str, max_edit_distance: int = 1) -> bool:
    """L-2's tool-name match: case-insensitive, within ``max_edit_distance`` edits.

    Args:
        predicted (`str`): Predicted tool name.
        gold (`str`): Gold tool name.
        max_edit_distance (`int`): Edits tolerated after case folding and stripping (default 1;
            the closest two tool names in the catalog are 3 edits apart).

    Returns:
        `bool`: Whether the names match.

    Example:
        >>> tool_names_match("Get_Orders", "get_order"), tool_names_match("get_user", "get_order")
        (True, False)
    """
    a, b = predicted.strip().casefold(), gold.strip().casefold()
    if a == b:
        return True
    return abs(len(a) - len(b)) <= max_edit_distance and edit_distance(a, b) <= max_edit_distance
