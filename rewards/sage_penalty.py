"""SAGE penalty reward: −(fired SAGE criteria) / (criteria checked) for one Pre-Act step.

The completion is compiled with its prompt (the conversation so far) into one SAGE turn
record (`evaluators.sage.mads_turns.compile_messages`): a tool call gets one UV criterion per
checkable argument (is the value supported by the user messages and earlier tool results?),
a say one PC criterion (does it claim completion without a successful write call?). SAGE-Core
(S1 rules + S2 offline grounding, MiniLM loaded once) decides them.

Reward per completion, in [−1, 0]: ``−fired / checked`` over the step's criteria (the UV
criteria of a tool call, the PC criterion of a say; 0.0 when nothing fires, and a tool call
whose arguments are all exempt — flags, enum values, small counts — is checked as a say).
A call to a tool the domain does not have gets −1.0, the most a fabricated argument of a
real tool can cost: the whole call is invented, so it must never score better than that.
A completion without a readable action gets 0.0 (the format rewards penalise it). None
("does not apply") only for rows the reward cannot read: no ``prompts``, a prompt that is no
list of ``{role, content}`` messages (a plain-string prompt, TRL's standard format, has no
roles: SAGE could not tell the user's words and the tool results, its evidence, from the
system prompt and the model's own steps), or no known ``domain`` column value.

Every string of the compiled turn record is cleaned and bounded (`_bounded`) before SAGE's
encoder and fuzzy matcher see it, so no completion makes the reward raise or stall.

Registered as ``sage`` in `rewards.registry`.

Example:
    >>> prompt = [{"role": "user", "content": "Please cancel order O1."}]
    >>> say = '<think>t</think><action type="say">Your order O1 is cancelled.</action>'
    >>> sage_penalty_reward([say], prompts=[prompt], domain=["mock"])  # doctest: +SKIP
    [-1.0]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rewards._common import MAX_ENCODER_CHARS, clean_json, column, completion_text

if TYPE_CHECKING:
    from evaluators.sage.records import TurnRecord

MAX_ARGUMENT_CHARS = 1024
"""Longest argument value that SAGE compares with the conversation; the rest is cut.

S2 scores a value by fuzzy matching against word windows of the evidence (difflib), so its
cost grows with the value's length times the evidence's: one 1 MB argument took 89 s against
a 300-word prompt (0.2 s with the cut). No MADS tool accepts a string over 1,000 characters
(the longest ``maxLength`` in the domains' ``tools.yaml``), so the cut only shortens calls
that are invalid anyway.
"""

UNKNOWN_TOOL_PENALTY = -1.0
"""Reward of a call to a tool the domain does not have: the floor of the [−1, 0] scale."""


def sage_penalty_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """Penalise fabricated tool arguments (UV) and premature completion claims (PC).

    Args:
        completions (`list[str]` or `list[list[dict]]`): One Pre-Act step per sample.
        **kwargs: ``prompts`` (the conversations before the step, ``{role, content}``
            messages, as TRL passes them) and the dataset column ``domain``.

    Returns:
        `list[float | None]`: One reward per completion in [−1, 0] or None (see the module
        docstring).

    Raises:
        `ValueError`: When ``prompts`` or ``domain`` is not one value per completion.
    """
    from evaluators.sage.mads_turns import compile_messages, evaluator_for, mads_spec
    from mads_bench.pre_act import parse_step

    n = len(completions)
    if kwargs.get("prompts") is None or kwargs.get("domain") is None:
        return [None] * n
    prompts, domains = column(kwargs, "prompts", n), column(kwargs, "domain", n)
    rewards: list[float | None] = [None] * n
    jobs: dict[Any, list[tuple[int, Any]]] = {}  # by loaded domain pack
    for i, (prompt, completion, name) in enumerate(zip(prompts, completions, domains, strict=True)):
        conversation = _conversation(prompt)
        if conversation is None or (domain := _pack(name, mads_spec)) is None:
            continue
        text = completion_text(completion)
        rewards[i] = 0.0
        if text is None:
            continue
        action = parse_step(text, strict=False).action  # as `compile_messages` reads it
        if action is not None and action.type == "tool":
            if action.name not in mads_spec(domain).service(domain.name).intents:
                rewards[i] = UNKNOWN_TOOL_PENALTY  # compiles to no record: nothing to check
                continue
        messages = [*conversation, {"role": "assistant", "content": text}]
        records = compile_messages(messages, domain, dialogue_id=str(i), last_only=True)
        if records:
            jobs.setdefault(domain, []).append((i, _bounded(records[-1])))
    for domain, items in jobs.items():
        verdicts = evaluator_for(domain).evaluate([record for _, record in items])
        for (i, record), verdict in zip(items, verdicts, strict=True):
            kind = "UV" if record.state_diff() else "PC"  # a tool call's arguments, or a say
            checked = [e for e in verdict.evidence if e["class"] == kind]
            fired = sum(bool(e["fires"]) for e in checked)
            rewards[i] = -fired / len(checked) if fired else 0.0
    return rewards


def _conversation(prompt: Any) -> list[dict[str, Any]] | None:
    """The prompt as ``{role, content[, ok]}`` messages with text content; None if it is none.

    A message of an unknown role (or none) is kept: `compile_messages` skips it, as before.
    """
    if not isinstance(prompt, list | tuple):
        return None
    messages = []
    for message in prompt:
        if not isinstance(message, dict):
            return None
        ok = message.get("ok")
        messages.append(
            {
                "role": message.get("role"),
                "content": _content_text(message.get("content")),
                **({"ok": ok} if isinstance(ok, bool) else {}),
            }
        )
    return messages


def _content_text(content: Any) -> str:
    # a message without text (None, a number) says nothing; text parts are joined
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text") for part in content if isinstance(part, dict)]
        return "".join(part for part in parts if isinstance(part, str))
    return ""


def _bounded(record: TurnRecord) -> TurnRecord:
    """The `TurnRecord` with every string cleaned and cut to what SAGE can afford to read."""
    data = clean_json(record.model_dump(), MAX_ENCODER_CHARS)
    for state in ("state_before", "state_after"):
        data[state] = {slot: value[:MAX_ARGUMENT_CHARS] for slot, value in data[state].items()}
    return type(record).model_validate(data)


def _pack(name: Any, mads_spec: Any) -> Any:
    """The loaded pack of a ``domain`` column value, resolved here (a reward is where the rows'
    domain names enter) through the catalog and handed down to SAGE; None when unknown."""
    from mads_bench.catalog import load_domain

    if not isinstance(name, str) or not name:
        return None
    try:
        domain = load_domain(name)
        mads_spec(domain)
    except Exception:  # an unknown domain: the reward does not apply to this row
        return None
    return domain
