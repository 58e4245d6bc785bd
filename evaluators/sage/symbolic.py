"""S1: deterministic rules over the schema, the state diff and the dialogue acts.

Each rule returns ``(fires, note)`` with ``fires`` True / False, or None to abstain (pass the
criterion up the cascade). S1 decisions carry margin 1.0.

* UV: supported (False) when a user INFORM act of this turn carries the value, or the
  normalised value occurs word for word in h_{<t} ∪ {u_t}; a value that is a lone stop word
  or unit (``pm``, ``in``) is unsupported (True) whatever shares that token; otherwise
  abstain (S2 decides).
* IUV: not ignored (False) when s_t holds an equal value for the slot (or, text-only, for any
  slot); ignored (True) when an INFORM-ed slot is absent from s_t; otherwise abstain. A slot
  the act tagger reads as informed (no value; only slots of the intent, nothing written to them
  this turn) is not ignored when the user restates the value
  s_t already holds; otherwise abstain.
* WNF: needs the requested slot (acts): legal next → False; filled already or not a slot of
  the intent → True; an optional slot still empty → abstain (indeterminate set). A slot the
  tagger reads as requested: legal next or not filled → False (a slot outside the intent is
  left to the question path), filled → abstain (S2 weighs the tagger's probability).
* PC: W's order first: a success claim (NOTIFY_SUCCESS, or a success statement text-only) in
  the turn that fills a required slot, or with acts without the user's AFFIRM → True. Then
  O(s) true → False; O(s) false and a confirm act → True, no confirm act → False; without
  acts and O(s) false → abstain (S2 checks whether the text confirms).
"""

from __future__ import annotations

from evaluators.sage.normalize import is_contentless, normalize_text, value_similarity
from evaluators.sage.records import Criterion, TurnRecord

EXACT = 0.999


def context_texts(record: TurnRecord) -> list[str]:
    """h_{<t} ∪ {u_t} as a list of utterances (the UV support context)."""
    return [item.text for item in record.history] + [record.user]


def s1_decide(criterion: Criterion, record: TurnRecord) -> tuple[bool | None, str]:
    """Apply the S1 rule of the criterion's class.

    Args:
        criterion (`Criterion`): From `compile_turn`.
        record (`TurnRecord`): The turn it was compiled from.

    Returns:
        `tuple[bool | None, str]`: Whether the failure fires (None = abstain) and a trace note.
    """
    rule = _RULES[criterion.failure_class]
    return rule(criterion.args, record)


def _uv(args: dict, record: TurnRecord) -> tuple[bool | None, str]:
    value, slot = args["value"], args["slot"]
    for act in record.user_acts or []:
        if act.act == "INFORM" and act.slot == slot:
            if any(value_similarity(value, v) >= EXACT for v in act.values):
                return False, f"user INFORM {slot}={act.values[0]!r} supports it"
    if is_contentless(value):
        return True, f"{value!r} is a lone stop word or unit: no span can support it"
    needle = f" {normalize_text(value)} "
    for i, text in enumerate(context_texts(record)):
        if needle.strip() and needle in f" {normalize_text(text)} ":
            where = "user turn" if i == len(record.history) else f"history[{i}]"
            return False, f"{value!r} occurs in the {where}"
    return None, "no verbatim support; needs grounding"


def _iuv(args: dict, record: TurnRecord) -> tuple[bool | None, str]:
    value, slot = args["value"], args["slot"]
    state = record.state_after
    if value is None:  # the tagger's reading: slot informed, nothing written to it this turn
        held = state.get(slot)
        if held and f" {normalize_text(held)} " in f" {normalize_text(record.user)} ":
            return False, f"the user restates s_t[{slot}] = {held!r}"
        return None, f"tagger reads {slot} as informed and the turn writes nothing to it"
    slots = [slot] if slot else list(state)
    for name in slots:
        if name in state and value_similarity(value, state[name]) >= EXACT:
            return False, f"s_t[{name}] = {state[name]!r} holds it"
    if record.user_acts is not None and slot and slot not in state:
        return True, f"user gave {slot}={value!r}; s_t has no {slot}"
    return None, "value not found verbatim in s_t; needs grounding"


def _wnf(args: dict, record: TurnRecord) -> tuple[bool | None, str]:
    slot = args.get("slot")
    if not slot:
        return None, "requested field unknown without acts"
    if slot in args["next"]:
        return False, f"{slot} is a legal next field"
    if "tagged" in args:  # the tagger's reading: S2 weighs how sure it is
        if slot not in args["filled"]:
            # an optional slot is no wrong field; one outside the intent is usually an offer
            # about a result, which the question path tells apart from a request
            return False, f"{slot} is not filled: re-asking is not the question here"
        return None, f"tagger reads a request for {slot}, which s_t already holds"
    if slot in args["filled"]:
        return True, f"{slot} is already filled in s_t"
    if slot in args["optional"]:
        return None, f"{slot} is optional and empty: order indeterminate"
    return True, f"{slot} is not a field of {record.intent} (legal next: {args['next']})"


def _pc(args: dict, record: TurnRecord) -> tuple[bool | None, str]:
    if args.get("claims") and args.get("filled_now"):
        return True, (
            f"reports the commit in the turn that filled {args['filled_now']}: W's confirm → "
            "affirm step was skipped"
        )
    if not args["outcome"]:
        if args["confirms"] is None:
            return None, "O(s) false; does the text confirm? needs grounding"
        if args["confirms"]:
            why = f"missing {args['missing']}" if args["transactional"] else "not a transaction"
            return True, f"agent confirms while O(s) is false ({why})"
        return False, "agent does not confirm"
    if args.get("claims") and args.get("affirmed") is False:
        return True, "reports the commit although the user affirmed no confirmation"
    return False, "O(s) holds: all required fields are filled"


_RULES = {"UV": _uv, "IUV": _iuv, "WNF": _wnf, "PC": _pc}
