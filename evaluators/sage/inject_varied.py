"""A second failure injector, written from a different angle than ``inject.py``.

``inject.py`` copies real SGD system turns (a request for another slot, a success
notification) into a_t and injects a PC only while O(s) is false. This one writes its own
text, composed per turn from independent parts seeded by the slice's RNG, and aims at what
the first one never produces:

* PC — a success claim ("Done! Your reservation for 7 pm is confirmed.") either in the very
  turn in which the user supplies the last required slot (O(s) holds, but the workflow's
  confirm → affirm step never happened) or while a required slot is still empty.
* WNF — a request phrased through the slot's schema description or a paraphrase of its name,
  not its name ("Could you also tell me the number of seats to reserve?"), for a slot that is
  already filled or not a field of the intent.
* UV — a value written to the state that shares words with what the user said but is not
  what they said: another corpus value with a common token, a different number, a flipped
  boolean, a shifted time.
* IUV — a value the user gave this turn (any INFORM, also one the state holds in another
  form) is not written: the slot keeps its old value or is emptied.

``build_slice(..., injector=inject_varied)`` uses it; the sampled turns are the same as with
the default injector for the same seed, only the operators differ.
"""

from __future__ import annotations

import random
import re
from typing import Any

from evaluators.sage.inject import Pools, informed_this_turn
from evaluators.sage.normalize import normalize_text, parse_number, parse_time, value_similarity
from evaluators.sage.records import DialogueAct, TurnRecord
from evaluators.sage.workflow import WorkflowSpec

__all__ = ["inject_varied"]

_OPENERS = ("Done!", "All set.", "Great news:", "Perfect.", "Okay,", "Alright,", "", "Sure thing.")
_CLAIMS = (
    "your {noun} is confirmed",
    "I've gone ahead and booked it",
    "I have placed the {noun} for you",
    "that's all taken care of",
    "your {noun} went through",
    "you're all set",
    "it has been scheduled",
    "I've made the {noun}",
)
_DETAILS = ("for {value}", "with {value}", "({value})", "", "")
_CLOSERS = ("", " Anything else?", " Enjoy!", " Is there anything more I can do?")
_ASK_FRAMES = (
    "Could you tell me the {thing}?",
    "What is the {thing}, please?",
    "And the {thing}?",
    "I'll also need the {thing}.",
    "May I ask what the {thing} should be?",
    "Please let me know the {thing}.",
    "Which {thing} would you like?",
)
_NOUNS = {"reserve": "reservation", "book": "booking", "buy": "purchase", "make": "request",
          "transfer": "transfer", "add": "request", "schedule": "appointment",
          "rent": "rental", "play": "request", "get": "request"}  # fmt: skip


def inject_varied(
    record: TurnRecord, kind: str, spec: WorkflowSpec, pools: Pools, rng: random.Random
) -> tuple[TurnRecord, dict[str, Any]] | None:
    """Apply one operator of this injector; None when it does not apply to this turn."""
    return _OPERATORS[kind](record, spec, pools, rng)


def _noun(intent: str) -> str:
    words = re.findall(r"[A-Z][a-z]+", intent)
    verb = words[0].lower() if words else ""
    return _NOUNS.get(verb, "booking")


def _claim(record: TurnRecord, rng: random.Random) -> str:
    values = [v for v in record.state_after.values() if v and v.lower() != "dontcare"]
    detail = rng.choice(_DETAILS)
    detail = detail.format(value=rng.choice(values)) if values and detail else ""
    claim = rng.choice(_CLAIMS).format(noun=_noun(record.intent))
    opener = rng.choice(_OPENERS)
    text = f"{opener} {claim[0].upper() + claim[1:] if not opener else claim}"
    text = f"{text} {detail}".strip() + "." + rng.choice(_CLOSERS)
    return " ".join(text.split())


def _pc(record: TurnRecord, spec: WorkflowSpec, pools: Pools, rng: random.Random):
    intent = spec.intent(record.service, record.intent)
    if not intent.transactional:
        return None
    before = spec.outcome(record.service, record.intent, record.state_before)
    after = spec.outcome(record.service, record.intent, record.state_after)
    if any(a.act == "NOTIFY_SUCCESS" for a in record.agent_acts or []):
        return None
    if after and before:
        return None  # the last slot came earlier: a confirmation may already be under way
    placement = "same_turn" if after else "before_last_slot"
    acts = [DialogueAct(act="NOTIFY_SUCCESS")]
    update = {"agent": _claim(record, rng), "agent_acts": acts}
    return record.model_copy(update=update), {"placement": placement}


def _thing(spec: WorkflowSpec, record: TurnRecord, slot: str, rng: random.Random) -> str:
    described = spec.slot(record.service, slot)
    words = " ".join(re.split(r"[_\W]+", slot)).strip()
    options = [words]
    if described is not None and described.description:
        options += [described.description.rstrip(".").lower()] * 2
    return rng.choice(options)


def _wnf(record: TurnRecord, spec: WorkflowSpec, pools: Pools, rng: random.Random):
    intent = spec.intent(record.service, record.intent)
    service = spec.service(record.service)
    state = record.state_after
    nexts = set(spec.next_fields(record.service, record.intent, state))
    filled = sorted(s for s in state if s in service.slots and s not in nexts)
    outside = sorted(
        s for s in service.slots if s not in intent.required and s not in intent.optional
    )
    candidates = filled or outside
    if not candidates:
        return None
    slot = rng.choice(candidates)
    text = rng.choice(_ASK_FRAMES).format(thing=_thing(spec, record, slot, rng))
    acts = [DialogueAct(act="REQUEST", slot=slot)]
    return record.model_copy(update={"agent": text, "agent_acts": acts}), {"slot": slot}


def _variant(value: str, pool: list[str], context: str, rng: random.Random) -> str | None:
    """A value near what was said (shares a token, a number, a time, a flag) but not it."""
    low = value.strip().lower()
    if low in ("true", "false"):
        return "False" if low == "true" else "True"
    number = parse_number(value)
    if number is not None and re.fullmatch(r"\d+", value.strip()):
        return str(number + rng.choice((1, 2, 3)))
    time = parse_time(value)
    if time is not None and ":" in time:
        hour, minute = (int(x) for x in time.split(":"))
        shifted = (hour + rng.choice((1, 2))) % 24
        return f"{(shifted - 1) % 12 + 1}:{minute:02d} {'pm' if shifted >= 12 else 'am'}"
    tokens = set(normalize_text(context).split())
    sharing = [
        v
        for v in pool
        if value_similarity(v, value) < 0.5
        and tokens & set(normalize_text(v).split())
        and f" {normalize_text(v)} " not in f" {normalize_text(context)} "
    ]
    return rng.choice(sharing) if sharing else None


def _uv(record: TurnRecord, spec: WorkflowSpec, pools: Pools, rng: random.Random):
    written = [s for s, (_, after) in record.state_diff().items() if after is not None]
    context = " ".join([h.text for h in record.history] + [record.user])
    for slot in rng.sample(written, len(written)):
        original = record.state_after[slot]
        pool = pools.values.get((record.service, slot), [])
        value = _variant(original, pool, context, rng)
        if value is None or f" {normalize_text(value)} " in f" {normalize_text(context)} ":
            continue
        state = {**record.state_after, slot: value}
        return record.model_copy(update={"state_after": state}), {
            "slot": slot,
            "value": value,
            "original": original,
        }
    return None


def _iuv(record: TurnRecord, spec: WorkflowSpec, pools: Pools, rng: random.Random):
    state = dict(record.state_after)
    given = informed_this_turn(record)
    if not given:
        return None
    slot, value = rng.choice(sorted(given))
    if slot in record.state_before and rng.random() < 0.5:
        state[slot] = record.state_before[slot]
        how = "kept the old value"
    else:
        del state[slot]
        how = "emptied"
    return record.model_copy(update={"state_after": state}), {
        "slot": slot,
        "value": value,
        "how": how,
    }


_OPERATORS = {"IUV": _iuv, "WNF": _wnf, "PC": _pc, "UV": _uv}
