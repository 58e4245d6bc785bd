"""Structured repair signals for fired criteria (sage.md, Repair Signals and Appendix E).

A repair signal names the concrete state edit or clarifying action that would resolve the
violated criterion. It is a side output for agent self-correction, not used in scoring.

Example:
    >>> # IUV → {"action": "record_value", "slot": "city", "value": "Oslo", "span": [12, 16]}
"""

from __future__ import annotations

from typing import Any

from evaluators.sage.records import CriterionResult, TurnRecord


def _span(text: str, value: str) -> list[int] | None:
    start = text.lower().find(value.lower())
    return [start, start + len(value)] if start >= 0 else None


def repair_signal(result: CriterionResult, record: TurnRecord) -> dict[str, Any]:
    """The repair for one fired criterion.

    Args:
        result (`CriterionResult`): A criterion result with `fires` True.
        record (`TurnRecord`): Its turn.

    Returns:
        `dict`: `criterion`, `class`, `action` and the action's arguments.
    """
    c = result.criterion
    args = c.args
    base = {"criterion": c.criterion_id, "class": c.failure_class}
    if c.failure_class == "IUV":
        slot = args.get("slot") or (args.get("candidate_slots") or ["?"])[0]
        if args["value"] is None:  # the act tagger read the slot, not its value
            return {
                **base,
                "action": "record_value",
                "slot": slot,
                "value": None,
                "span": None,
                "say": f"the user gave {slot}: read it from the user turn into {slot}",
            }
        return {
            **base,
            "action": "record_value",
            "slot": slot,
            "value": args["value"],
            "span": _span(record.user, args["value"]),
            "say": f"record {args['value']!r} into {slot}",
        }
    if c.failure_class == "UV":
        before = args.get("before")
        return {
            **base,
            "action": "revert_value",
            "slot": args["slot"],
            "value": args["value"],
            "restore": before,
            "say": f"{args['value']!r} in {args['slot']} is not supported by the dialogue; "
            + (f"restore {before!r}" if before else "clear the slot and ask the user"),
        }
    if c.failure_class == "WNF":
        asked = args.get("slot") or c.evidence.get("agent_span")
        legal = args.get("next") or []
        return {
            **base,
            "action": "ask_next_field",
            "asked": asked,
            "legal_next": legal,
            "say": f"ask for one of {legal} instead" if legal else "do not re-ask; proceed",
        }
    missing = args.get("missing") or []
    return {
        **base,
        "action": "do_not_confirm",
        "missing": missing,
        "say": f"required slots {missing} still empty, do not confirm"
        if missing
        else "the active intent is not a transaction; nothing to confirm",
    }
