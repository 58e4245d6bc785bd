"""SAGE inside the MADS loop: compile MADS conversations into turn records and evaluate them.

The workflow spec of a domain comes from its tool specs (`mads_spec`: one intent per tool, its
required parameters are the required fields, a ``write`` tool is transactional). The loaded
`~mads_bench.catalog.Domain` is handed down by the caller; nothing here resolves a name.
Each assistant step of a conversation becomes one turn record (``turn_id`` = ``"T.S"``):

* a **tool call** is a turn of intent = the tool whose state diff writes every argument
  (``{} → {param: value}``), so one UV criterion per argument asks "is this value supported
  by the user messages and earlier tool results?" — fabricated arguments fire UV;
* a **say** is a turn of intent = the last write tool that succeeded so far (its arguments
  are the state), or, before any successful write, with an empty state, the write tool the
  claim's verb names ("is cancelled" → ``cancel_order``), else the scenario's last gold
  write, else the domain's first write tool with required fields. A say that claims
  completion carries a ``NOTIFY_SUCCESS`` act, so PC fires exactly when the claim comes
  without a successful write call.

User turns carry empty act lists (no IUV / WNF: MADS keeps no slot state for them).

Example:
    >>> from mads_bench.catalog import load_domain
    >>> from simulation.environment import simulate
    >>> mock = load_domain("mock")
    >>> records = compile_trajectory(simulate(mock.scenarios[0], domain=mock), domain=mock)
    >>> [r.intent for r in records][:2]  # doctest: +SKIP
    ['get_item', 'cancel_order']
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from evaluators.sage.records import DialogueAct, HistoryItem, TurnRecord
from evaluators.sage.workflow import WorkflowSpec
from mads_bench.catalog import Domain
from mads_bench.data_model import json_leaves
from mads_bench.text import split_sentences

# Modelled on the validator's completion claims, plus "is/are <done>" (no question sentences).
_DONE = (
    "cancell?ed|booked|scheduled|sent|transferred|paid|opened|filed|submitted|placed|created|"
    "updated|changed|moved|rescheduled|added|locked|unlocked|reserved|refunded|processed|"
    "issued|removed|confirmed|completed|executed|finished|set up"
)
_CLAIM = re.compile(
    rf"\b(?:has been|have been|was|were|is|are|is now|are now|successfully|i've|i have|i)\s+"
    rf"(?:now\s+|just\s+|successfully\s+|already\s+)?({_DONE})\b|\byou(?:'re| are) (all set)\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"\b(?:not|never|could not|couldn't|cannot|can't|unable|failed|sorry)\b|n't\b", re.IGNORECASE
)
SMALL_NUMBER = 10  # as the validator: integers up to 10 are counts and ordinals, not facts


def claims_completion(text: str, results: list[str] = ()) -> str | None:
    """The completion claim of a say ("your order is cancelled"), else None.

    Questions and negated or apologetic sentences are not claims, and neither is a status
    word that an earlier tool result holds (reporting a state, e.g. ``"status": "placed"``).

    Example:
        >>> claims_completion("Your order O1 is cancelled."), claims_completion("Cancel O1?")
        ('is cancelled', None)
    """
    evidence = " ".join(results).casefold()
    for sentence in split_sentences(text, newlines=False):
        if sentence.rstrip().endswith("?") or _NEGATED.search(sentence):
            continue
        for match in _CLAIM.finditer(sentence):
            word = next(g for g in match.groups() if g)
            if match.group(1) and re.search(rf"\b{re.escape(word.casefold())}\b", evidence):
                continue
            return match.group(0)
    return None


@cache
def mads_spec(domain: Domain) -> WorkflowSpec:
    """The `WorkflowSpec` of a loaded MADS domain (cached per pack; what ``--schema
    mads:<domain>`` builds)."""
    return WorkflowSpec.from_source(domain)


def expected_write(spec: WorkflowSpec, service: str, scenario: Any = None) -> str | None:
    """The write tool a say is judged against before any successful write (``service``: the
    MADS domain's name)."""
    intents = spec.service(service).intents
    gold = [c.name for c in getattr(scenario, "gold_workflow", []) or []]
    writes = [n for n in gold if n in intents and intents[n].transactional]
    if writes:
        return writes[-1]
    return next((n for n, i in intents.items() if i.transactional and i.required), None)


def argument_state(arguments: dict[str, Any], tool: Any = None) -> dict[str, str]:
    """The checkable argument values of a call as a flat state (``param``, ``a.b``, ``l[0]``).

    Exempt, as in the validator's faithfulness check: flags, empty values, values of a
    schema ``enum`` (a closed choice) and integers up to `SMALL_NUMBER`.

    Example:
        >>> argument_state({"id": "O1", "n": 2, "x": 249.0, "to": {"city": "Oslo"}})
        {'id': 'O1', 'x': '249', 'to.city': 'Oslo'}
    """
    enums = tool.enum_values() if tool is not None else set()
    state = {}
    for path, value in json_leaves(arguments, ""):
        key = path.lstrip(".")
        if value is None or isinstance(value, bool) or value == "":
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and abs(value) <= SMALL_NUMBER:
            continue
        if str(value) in enums:
            continue
        state[key] = str(value)
    return state


def compile_messages(
    messages: list[dict[str, Any]],
    domain: Domain,
    *,
    dialogue_id: str = "",
    scenario: Any = None,
    last_only: bool = False,
) -> list[TurnRecord]:
    """Turn records for the assistant steps of ``{role, content[, ok]}`` messages.

    Args:
        messages (`list[dict]`): Chat messages; assistant contents are Pre-Act steps, tool
            contents the results (``ok`` when known, else an object with ``code`` and
            ``message`` is an error).
        domain (`Domain`): The loaded MADS domain (its name is the service of the spec).
        dialogue_id (`str`): Written into the records.
        scenario (`Scenario`, *optional*): For the expected write tool.
        last_only (`bool`): Only the record of the last message (a reward's completion).

    Returns:
        `list[TurnRecord]`: One per readable assistant step of a known tool / per say.
    """
    from mads_bench.pre_act import parse_step

    spec, tools, service = mads_spec(domain), domain.tools, domain.name
    intents = spec.service(service).intents
    fallback = expected_write(spec, service, scenario)
    history: list[HistoryItem] = []
    results: list[str] = []
    user, turn, step = "", -1, 0
    pending: tuple[str, dict[str, str]] | None = None  # the last call, until its result
    written: tuple[str, dict[str, str]] | None = None  # the last successful write
    records: list[TurnRecord] = []
    for index, message in enumerate(messages):
        role, content = message.get("role"), str(message.get("content") or "")
        if role == "system":
            history.append(HistoryItem(speaker="system", text=content.split("\nTools")[0]))
        elif role == "user":
            if user:
                history.append(HistoryItem(speaker="user", text=user))
            user, turn, step = content, turn + 1, 0
        elif role == "tool":
            ok = message.get("ok")
            if ok is None:
                parsed = _json(content)
                ok = not (isinstance(parsed, dict) and {"code", "message"} <= set(parsed))
            if ok:
                results.append(content)
                if pending and intents.get(pending[0]) and intents[pending[0]].transactional:
                    written = pending
            history.append(HistoryItem(speaker="tool", text=content))
            pending = None
        elif role == "assistant":
            action = parse_step(content, strict=False).action
            where = f"{max(turn, 0)}.{step}"
            step += 1
            keep = not last_only or index == len(messages) - 1
            if action is None:
                continue
            if action.type == "tool":
                state = argument_state(action.arguments, tools.get(action.name))
                pending = (action.name, state)
                if keep and action.name in intents:
                    agent = f"{action.name}({json.dumps(action.arguments, ensure_ascii=False)})"
                    records.append(_record(dialogue_id, where, service, action.name, history,
                                           user, agent, {}, state, []))  # fmt: skip
                continue
            claim = claims_completion(action.text, results)
            intent, state = written or (_claimed(claim, intents) or fallback, {})
            if keep and intent is not None:
                acts = [DialogueAct(act="NOTIFY_SUCCESS", values=[claim])] if claim else []
                records.append(_record(dialogue_id, where, service, intent, history, user,
                                       action.text, state, state, acts))  # fmt: skip
            history.append(HistoryItem(speaker="agent", text=action.text))
    return records


def _claimed(claim: str | None, intents: dict[str, Any]) -> str | None:
    """The write tool a claim names by its verb ("is cancelled" → ``cancel_order``)."""
    if not claim:
        return None
    stem = claim.split()[-1].casefold()[:4]
    return next((n for n, i in intents.items() if i.transactional and stem in n), None)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _record(dialogue_id, turn_id, domain, intent, history, user, agent, before, after, acts):
    return TurnRecord(
        dialogue_id=dialogue_id,
        turn_id=turn_id,
        service=domain,
        intent=intent,
        history=list(history),
        user=user,
        agent=agent,
        state_before=before,
        state_after=after,
        user_acts=[],
        agent_acts=acts,
    )


def compile_trajectory(
    trajectory: Any, scenario: Any = None, *, domain: Domain
) -> list[TurnRecord]:
    """Turn records of a `mads_bench.data_model.Trajectory` of the loaded ``domain`` (see
    `compile_messages`)."""
    messages = [
        {
            "role": m.role,
            "content": m.content,
            **({"ok": m.tool_result.ok} if m.tool_result is not None else {}),
        }
        for m in trajectory.messages
    ]
    return compile_messages(messages, domain, dialogue_id=trajectory.id, scenario=scenario)


def sage_failures_per_turn(trajectory: Any, scenario: Any, domain: Domain) -> float | None:
    """SAGE-Core failures per turn record of a trajectory (None when nothing is checkable):
    the rubric's SAGE counter (`simulation.validator.rubric.SageCounter`), handed the
    scenario's loaded pack."""
    records = compile_trajectory(trajectory, scenario, domain=domain)
    if not records:
        return None
    verdicts = evaluator_for(domain, None).evaluate(records)
    return sum(v.verdict == "failure" for v in verdicts) / len(records)


_EVALUATORS: dict[tuple[Domain, int], Any] = {}


def evaluator_for(domain: Domain, verifier: Any = None) -> Any:
    """A cached SAGE-Core `SageEvaluator` for the domain (one shared offline verifier).

    Args:
        domain (`Domain`): The loaded MADS domain.
        verifier (`GroundingVerifier`, *optional*): S2; the offline MiniLM default when None.
    """
    from evaluators.sage.cascade import SageConfig, SageEvaluator
    from evaluators.sage.grounding import OfflineGroundingVerifier

    global _DEFAULT_VERIFIER
    if verifier is None:
        if _DEFAULT_VERIFIER is None:
            _DEFAULT_VERIFIER = OfflineGroundingVerifier()
        verifier = _DEFAULT_VERIFIER
    key = (domain, id(verifier))
    if key not in _EVALUATORS:
        # No act tagger: it learned SGD's spoken turns, and these records are tool calls and
        # says whose criteria the compiler derives from the trajectory itself.
        config = SageConfig(verifier=verifier, tagger=None)
        _EVALUATORS[key] = SageEvaluator(mads_spec(domain), config)
    return _EVALUATORS[key]


_DEFAULT_VERIFIER: Any = None
