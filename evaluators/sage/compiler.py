"""The SAGE compiler: one turn record + the workflow spec → atomic criteria (sage.md, Compiler).

Per turn, deterministically and without memory across turns:

* UV  — one criterion per value written in the state diff Δ_t: "is it unsupported by
  h_{<t} ∪ {u_t}?"
* IUV — one criterion per value the user supplies in u_t (user INFORM acts, or the text-only
  extraction above the confidence floor): "is it missing from s_t?"
* WNF — one criterion per field the agent requests (REQUEST acts, or question sentences in the
  text-only case): "is it outside Next(W, s)?"
* PC  — one criterion per turn: "does a_t confirm while the outcome predicate O(s) is false,
  or report the commit out of W's order (confirm → affirm → commit)?" Its arguments say
  whether a_t claims success (NOTIFY_SUCCESS, or a success statement in the text), whether
  the user affirmed (AFFIRM; unknown without acts) and which required slots u_t filled.

``s`` is the state the agent acts on, i.e. ``state_after`` (SGD annotates the state after the
user's utterance; every SGD dev CONFIRM/NOTIFY_SUCCESS has all required slots filled there,
while 6,371 of 9,934 would fail on ``state_before``).
"""

from __future__ import annotations

from evaluators.sage.extract import claims_success, extract_user_values, request_sentences
from evaluators.sage.normalize import value_similarity
from evaluators.sage.records import Criterion, TurnRecord
from evaluators.sage.symbolic import EXACT
from evaluators.sage.tagger import TurnTags, previous_agent
from evaluators.sage.workflow import WorkflowSpec

CONFIRM_ACTS = frozenset({"CONFIRM", "NOTIFY_SUCCESS"})
EXTRACTION_FLOOR = 0.5
TAG_FLOOR = 0.5
"""Text-only: a slot the act tagger reads as informed / requested at this probability or more
gets its own criterion (decided by S1's rules where they apply, else by S2 on the probability)."""


def compile_turn(
    spec: WorkflowSpec,
    record: TurnRecord,
    extraction_floor: float = EXTRACTION_FLOOR,
    tags: TurnTags | None = None,
) -> list[Criterion]:
    """Compile one turn into its criteria.

    Args:
        spec (`WorkflowSpec`): The workflow specification.
        record (`TurnRecord`): The turn; acts are used when present.
        extraction_floor (`float`): Text-only user values below this confidence emit nothing.
        tags (`TurnTags`, *optional*): The act tagger's reading of a turn without acts; adds
            one IUV criterion per slot read as informed but not written this turn, one WNF
            criterion per slot read as requested, and the tagger's CONFIRM / NOTIFY_SUCCESS
            probabilities to the PC criterion.

    Returns:
        `list[Criterion]`: The turn's evaluation plan, in a fixed order (UV, IUV, WNF, PC).

    Example:
        >>> # see tests/evaluators/sage/test_compiler.py for worked turns
    """
    service = spec.service(record.service)
    intent = spec.intent(record.service, record.intent)
    state = record.state_after
    criteria: list[Criterion] = []

    for slot, (before, after) in record.state_diff().items():
        if after is None:
            continue
        desc = service.slots[slot].description if slot in service.slots else slot
        criteria.append(
            Criterion(
                criterion_id=f"UV:{slot}",
                failure_class="UV",
                args={"slot": slot, "value": after, "before": before, "description": desc},
                evidence={"state_diff": {slot: [before, after]}},
                text=f"The value {after!r} was written to slot {slot!r} ({desc}). Is it NOT "
                "supported by anything said before the agent's reply (history and user turn)?",
            )
        )

    if record.user_acts is not None:
        values = [
            (a.slot, v, 1.0, (a.slot,))
            for a in record.user_acts
            if a.act == "INFORM" and a.slot in service.slots
            for v in a.values[:1]
        ]
    else:
        values = [
            (v.slots[0] if len(v.slots) == 1 else "", v.span, v.confidence, v.slots)
            for v in extract_user_values(record.user, service, asked=previous_agent(record))
            if v.confidence >= extraction_floor
        ]
    # One state value holds one user value: a slot that holds another of the turn's values
    # word for word is no evidence for this one ("Tom McCarthy" in s_t says nothing about
    # "Walter the Dog" said in the same breath).
    holders = [
        {k for k, held in state.items() if held and value_similarity(value, held) >= EXACT}
        for _, value, _, _ in values
    ]
    for i, (slot, value, confidence, slots) in enumerate(values):
        taken = set().union(*holders[:i], *holders[i + 1 :]) - holders[i]
        criteria.append(
            Criterion(
                criterion_id=f"IUV:{slot or i}",
                failure_class="IUV",
                args={
                    "slot": slot,
                    "value": value,
                    "candidate_slots": list(slots),
                    "confidence": confidence,
                    "taken": sorted(taken),
                },
                evidence={"user_span": value},
                text=f"The user supplied {value!r}"
                + (f" for slot {slot!r}" if slot else "")
                + ". Is this value missing from the state after the turn?",
            )
        )

    # When every value the extractor reads in u_t is held by s_t, a tagger reading of yet
    # another slot has no value left to point at: it is the same value read as a sibling slot
    # ("flying to Seattle" read as origin_city too). Flags are the exception: the extractor
    # never reads them ("where pets should be allowed"), so their readings stand.
    accounted = bool(values) and all(holders)
    if tags is not None and record.user_acts is None:
        written = {k for k, (_, after) in record.state_diff().items() if after is not None}
        informable = set(intent.required) | set(intent.optional)  # the state tracks these
        for slot, p in sorted(tags.inform.items()):
            if accounted and not (slot in service.slots and service.slots[slot].is_flag):
                continue
            if p >= TAG_FLOOR and slot not in written and slot in informable:
                criteria.append(
                    Criterion(
                        criterion_id=f"IUV:tag:{slot}",
                        failure_class="IUV",
                        args={"slot": slot, "value": None, "candidate_slots": [slot], "tagged": p},
                        evidence={"user_span": record.user},
                        text=f"The user appears to give {slot!r} (tagger p={p:.2f}), and the "
                        "turn writes nothing to it. Is the value missing from the state?",
                    )
                )

    next_fields = spec.next_fields(record.service, record.intent, state)
    legal = {
        "next": next_fields,
        "optional": list(intent.optional),
        "filled": sorted(k for k, v in state.items() if v),
    }
    if record.agent_acts is not None:
        requested = [a.slot for a in record.agent_acts if a.act == "REQUEST" and a.slot]
        for slot in dict.fromkeys(requested):
            criteria.append(
                Criterion(
                    criterion_id=f"WNF:{slot}",
                    failure_class="WNF",
                    args={"slot": slot, **legal},
                    evidence={"agent_span": record.agent},
                    text=f"The agent asks for {slot!r}. Is that NOT a legal next field "
                    f"(legal: {next_fields})?",
                )
            )
    else:
        for slot, p in sorted((tags.request if tags else {}).items()):
            if p >= TAG_FLOOR and slot in service.slots:
                criteria.append(
                    Criterion(
                        criterion_id=f"WNF:tag:{slot}",
                        failure_class="WNF",
                        args={"slot": slot, "tagged": p, **legal},
                        evidence={"agent_span": record.agent},
                        text=f"The agent appears to ask for {slot!r} (tagger p={p:.2f}). Is that "
                        f"NOT a legal next field (legal: {next_fields})?",
                    )
                )
        known = tuple(record.state_after.values())
        read = {}
        if tags is not None:  # what the tagger reads a_t as requesting, for S2
            read = {"tag_requests": sorted(s for s, p in tags.request.items() if p >= TAG_FLOOR)}
        for i, sentence in enumerate(request_sentences(record.agent, known)):
            criteria.append(
                Criterion(
                    criterion_id=f"WNF:q{i}",
                    failure_class="WNF",
                    args={"slot": None, "sentence": sentence, **legal, **read},
                    evidence={"agent_span": sentence},
                    text=f"The agent asks: {sentence!r}. Does it request a field that is NOT "
                    f"a legal next field (legal: {next_fields})?",
                )
            )

    confirms = claims = affirmed = None
    if record.agent_acts is not None:
        confirms = any(a.act in CONFIRM_ACTS for a in record.agent_acts)
        claims = any(a.act == "NOTIFY_SUCCESS" for a in record.agent_acts)
    else:
        claims = claims_success(record.agent) or bool(tags and tags.success >= TAG_FLOOR)
    if record.user_acts:  # annotated user acts (MADS turn records carry none)
        affirmed = any(a.act == "AFFIRM" for a in record.user_acts)
    filled_now = spec.filled_this_turn(
        record.service, record.intent, record.state_before, record.state_after
    )
    criteria.append(
        Criterion(
            criterion_id="PC",
            failure_class="PC",
            args={
                "confirms": confirms,
                "transactional": intent.transactional,
                "outcome": intent.transactional and not next_fields,
                "missing": next_fields,
                "claims": claims,
                "affirmed": affirmed,
                "filled_now": filled_now,
                **(
                    {"tagged": max(tags.confirm, tags.success)}
                    if tags is not None and record.agent_acts is None
                    else {}
                ),
            },
            evidence={"agent_span": record.agent, "missing": next_fields},
            text="Does the agent confirm or report completing the task although "
            + (
                f"required fields {next_fields} are still empty?"
                if next_fields
                else "the workflow is not a transaction?"
            ),
        )
    )
    return criteria
