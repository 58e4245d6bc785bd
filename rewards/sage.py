"""SAGE penalty reward: −(fired SAGE criteria) / (criteria checked) for one Pre-Act step.

The completion is compiled with its prompt (the conversation so far) into one SAGE turn
record (`evaluators.sage.mads.compile_messages`): a tool call gets one UV criterion per
checkable argument (is the value supported by the user messages and earlier tool results?),
a say one PC criterion (does it claim completion without a successful write call?). SAGE-Core
(S1 rules + S2 offline grounding, MiniLM loaded once) decides them.

Reward per completion, in [−1, 0]: ``−fired / checked`` over the step's criteria (the UV
criteria of a tool call, the PC criterion of a say; 0.0 when nothing fires, and a tool call
whose arguments are all exempt — flags, enum values, small counts — is checked as a say).
A completion without a readable action gets 0.0 (the format rewards penalise it). None
("does not apply") only for rows the reward cannot read: no ``prompts``, or no known
``domain`` column value.

Registered as ``sage`` in `rewards.registry`.

Example:
    >>> prompt = [{"role": "user", "content": "Please cancel order O1."}]
    >>> say = '<think>t</think><action type="say">Your order O1 is cancelled.</action>'
    >>> sage_penalty_reward([say], prompts=[prompt], domain=["mock"])  # doctest: +SKIP
    [-1.0]
"""

from __future__ import annotations

from typing import Any

from evaluators.scoring import completion_text


def sage_penalty_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """Penalise fabricated tool arguments (UV) and premature completion claims (PC).

    Args:
        completions (`list[str]` or `list[list[dict]]`): One Pre-Act step per sample.
        **kwargs: ``prompts`` (the conversations before the step, ``{role, content}``
            messages, as TRL passes them) and the dataset column ``domain``.

    Returns:
        `list[float | None]`: One reward per completion (see the module docstring).

    Raises:
        `ValueError`: When ``prompts`` or ``domain`` has the wrong length.
    """
    from evaluators.sage.mads import compile_messages, evaluator_for, mads_spec

    n = len(completions)
    prompts = kwargs.get("prompts")
    domains = kwargs.get("domain")
    if prompts is None or domains is None:
        return [None] * n
    for name, values in (("prompts", prompts), ("domain", domains)):
        if len(values) != n:
            raise ValueError(f"column {name!r} has {len(values)} values for {n} completions")
    rewards: list[float | None] = [None] * n
    jobs: dict[str, list[tuple[int, Any]]] = {}
    for i, (prompt, completion, domain) in enumerate(
        zip(prompts, completions, domains, strict=True)
    ):
        if not domain or not isinstance(prompt, list) or not _known(domain, mads_spec):
            continue
        text = completion_text(completion)
        rewards[i] = 0.0
        if text is None:
            continue
        messages = [*prompt, {"role": "assistant", "content": text}]
        records = compile_messages(messages, domain, dialogue_id=str(i), last_only=True)
        if records:
            jobs.setdefault(domain, []).append((i, records[-1]))
    for domain, items in jobs.items():
        verdicts = evaluator_for(domain).evaluate([record for _, record in items])
        for (i, record), verdict in zip(items, verdicts, strict=True):
            kind = "UV" if record.state_diff() else "PC"  # a tool call's arguments, or a say
            checked = [e for e in verdict.evidence if e["class"] == kind]
            fired = sum(bool(e["fires"]) for e in checked)
            rewards[i] = -fired / len(checked) if fired else 0.0
    return rewards


def _known(domain: str, mads_spec: Any) -> bool:
    try:
        mads_spec(domain)
    except Exception:  # an unknown domain: the reward does not apply to this row
        return False
    return True
