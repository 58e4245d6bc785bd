"""What every reward shares: reading the gold columns and the predicted actions of a batch.

TRL calls a reward as ``f(prompts=..., completions=..., completion_ids=..., **columns)``
where each dataset column arrives as a list with one value per completion. The gold columns
of the ``grpo`` config (SPEC §4.3) are ``gold_action_type``, ``gold_tool_name``,
``gold_tool_arguments`` (a JSON string) and ``gold_say``.

A reward returns ``None`` for a sample only where TRL means it, "this reward does not apply
to this sample": that depends on the gold row, never on the completion. A row whose
``gold_action_type`` is None has no gold action, so no gold-based reward applies to it, and
neither does one to a row whose gold values are malformed (a data bug, logged).

Every text read from a batch passes through `clean_text` before a parser or an encoder sees
it, and `encoder_text` bounds what reaches a sentence encoder: a reward must never raise on
what a policy generates, nor stall on it.
"""

from __future__ import annotations

import logging
from typing import Any

from evaluators import step_scoring
from evaluators.step_scoring import GoldAction
from mads_bench.pre_act import Action, parse_step
from mads_bench.text import clean_text

GOLD_COLUMNS = ("gold_action_type", "gold_tool_name", "gold_tool_arguments", "gold_say")

MAX_ENCODER_CHARS = 65_536
"""Longest text handed to a sentence encoder; the rest is cut before tokenising.

The encoders read at most 512 word pieces (MiniLM 256, mpnet 384) and drop the rest, but
only after tokenising the whole text: 1 MB takes up to 3 s on a CPU core, so a batch of
runaway completions would stall a GRPO step for minutes. A word piece covers about 4
characters of English, so 512 pieces fit in a few thousand: 64k leaves a margin of over 10x,
and only text the model cannot make sense of anyway (long runs of whitespace, words over 100
characters, each of which becomes one ``[UNK]``) reads differently after the cut.
"""

logger = logging.getLogger(__name__)


def clean_json(value: Any, max_chars: int | None = None) -> Any:
    """A JSON-like value (dicts, lists, strings, numbers) with `clean_text` on every string.

    Args:
        value (`Any`): Dicts, lists and tuples (which become lists) are walked.
        max_chars (`int`, *optional*): Also cut every string, keys included, to this length.

    Returns:
        `Any`: A cleaned copy of the containers; other values as they are.

    Example:
        >>> clean_json({"k\\udfff": ["\\ud800", 1]}) == {"k\\ufffd": ["\\ufffd", 1]}
        True
        >>> clean_json(["abc", {"de": 5}], max_chars=1)
        ['a', {'d': 5}]
    """
    if isinstance(value, str):
        return clean_text(value)[:max_chars]
    if isinstance(value, dict):
        return {
            clean_json(key, max_chars): clean_json(item, max_chars) for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [clean_json(item, max_chars) for item in value]
    return value


def encoder_text(text: str) -> str:
    """``text`` cut to `MAX_ENCODER_CHARS`, which the encoder reads the same (see there)."""
    return text[:MAX_ENCODER_CHARS]


def completion_text(completion: Any) -> str | None:
    """The cleaned text of a completion (`evaluators.step_scoring.completion_text`); None if none.

    Example:
        >>> completion_text([{"role": "assistant", "content": "hi"}]), completion_text({})
        ('hi', None)
    """
    text = step_scoring.completion_text(completion)
    return None if text is None else clean_text(text)


def column(kwargs: dict[str, Any], name: str, n: int) -> list[Any]:
    """The values of dataset column ``name`` for ``n`` completions; all None when absent.

    Raises:
        `ValueError`: When the column is not a list of ``n`` values: a configuration error
            that every batch repeats, so it surfaces on the first training step.
    """
    values = kwargs.get(name)
    if values is None:
        return [None] * n
    if not isinstance(values, list | tuple) or len(values) != n:
        size = f"{len(values)} values" if isinstance(values, list | tuple) else repr(values)[:60]
        raise ValueError(f"column {name!r} has {size} for {n} completions")
    return list(values)


def gold_actions(kwargs: dict[str, Any], n: int) -> list[GoldAction | None]:
    """The gold action of each of ``n`` samples from the reward's keyword arguments.

    A row whose gold values are malformed (an unknown action type, a tool row without a
    name, arguments that are no JSON object, a say row without text) gets None: one bad
    row must not cost a training run. One warning per call counts them and names the first.

    Raises:
        `ValueError`: When ``gold_action_type`` is missing or a column does not hold one
            value per completion (see `column`).
    """
    if "gold_action_type" not in kwargs:
        raise ValueError(
            "the reward needs the dataset column 'gold_action_type' (and gold_tool_name, "
            "gold_tool_arguments, gold_say): train on the `grpo` config of the MADS dataset"
        )
    rows = zip(*(column(kwargs, name, n) for name in GOLD_COLUMNS), strict=True)
    golds: list[GoldAction | None] = []
    problems: list[str] = []
    for i, row in enumerate(rows):
        try:
            golds.append(GoldAction.from_columns(*clean_json(row)))
        except (ValueError, RecursionError) as err:  # RecursionError: deeply nested JSON
            golds.append(None)
            problems.append(f"row {i}: {err}")
    if problems:
        logger.warning(
            "%d of %d rows have malformed gold values and get no reward; first: %s",
            len(problems),
            n,
            problems[0],
        )
    return golds


def predicted_actions(completions: list[Any]) -> list[Action | None]:
    """The action of each completion (plain text or chat messages); None when unreadable."""
    texts = [completion_text(completion) for completion in completions]
    return [None if text is None else parse_step(text, strict=False).action for text in texts]
