"""Benchmark slices from real SGD turns with injected workflow failures (sage.md, Appendix A).

``build_slice`` samples turns stratified over (service, intent) workflows (at most one turn
per dialogue), then injects one failure into about half of them, mutating the agent response
and the state diff together:

* IUV — drop a value the user INFORMed this turn from s_t (the slot keeps its stale value or
  is emptied).
* WNF — replace a_t by a real SGD system request (from another dialogue of the same service)
  for a slot that is not a legal next field (already filled, or outside the intent).
* PC  — replace a_t by a real SGD success notification of the same service while O(s) is
  false (a required slot is empty, or the intent is not a transaction).
* UV  — write into Δ_t a value seen for that slot elsewhere in the corpus that does not occur
  in h_{<t} ∪ {u_t} (a value the agent repeats in a_t is replaced there too).

Dev dialogues are split by a stable hash: ``partition(id) == "calibration"`` (1 in 5) is kept
for calibrating S2; bench slices come from the other 4 in 5. Same seed → same slice.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evaluators.sage.normalize import span_support, typed_key, value_similarity
from evaluators.sage.records import DialogueAct, TurnLabel, TurnRecord
from evaluators.sage.sgd import dialogue_turns
from evaluators.sage.workflow import WorkflowSpec

CLASSES = ("IUV", "WNF", "PC", "UV")


def partition(dialogue_id: str) -> str:
    """``calibration`` for one dialogue in five (stable hash), else ``bench``."""
    digest = int(hashlib.sha1(dialogue_id.encode()).hexdigest(), 16)
    return "calibration" if digest % 5 == 0 else "bench"


@dataclass
class Pools:
    """Corpus material for the operators: request texts, success texts, slot values."""

    requests: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)
    successes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    values: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    @classmethod
    def from_records(cls, records: list[TurnRecord]) -> Pools:
        requests, successes, values = defaultdict(list), defaultdict(list), defaultdict(set)
        for r in records:
            acts = r.agent_acts or []
            if len(acts) == 1 and acts[0].act == "REQUEST":
                requests[(r.service, acts[0].slot)].append((r.dialogue_id, r.agent))
            if acts and {a.act for a in acts} == {"NOTIFY_SUCCESS"}:
                successes[r.service].append((r.dialogue_id, r.agent))
            for slot, value in r.state_after.items():
                if not typed_key(value) or typed_key(value)[0] in ("time", "date"):
                    values[(r.service, slot)].add(value)
        return cls(dict(requests), dict(successes), {k: sorted(v) for k, v in values.items()})


def informed_this_turn(record: TurnRecord) -> list[tuple[str, str]]:
    """(slot, value) of the user's INFORM acts whose slot this turn wrote to the state."""
    state = record.state_after
    return [
        (a.slot, a.values[0])
        for a in record.user_acts or []
        if a.act == "INFORM"
        and a.values
        and a.slot in state
        and record.state_before.get(a.slot) != state[a.slot]
    ]


def _other(pool: list[tuple[str, str]], dialogue_id: str, rng: random.Random) -> str | None:
    texts = sorted({t for d, t in pool if d != dialogue_id})
    return rng.choice(texts) if texts else None


def inject(
    record: TurnRecord, kind: str, spec: WorkflowSpec, pools: Pools, rng: random.Random
) -> tuple[TurnRecord, dict[str, Any]] | None:
    """Apply one operator; None when it does not apply to this turn."""
    state = dict(record.state_after)
    if kind == "IUV":
        written = [
            (slot, value)
            for slot, value in informed_this_turn(record)
            if value_similarity(value, state[slot]) >= 0.999
        ]
        if not written:
            return None
        slot, value = rng.choice(sorted(written))
        if slot in record.state_before:
            state[slot] = record.state_before[slot]
        else:
            del state[slot]
        return record.model_copy(update={"state_after": state}), {"slot": slot, "value": value}
    if kind == "WNF":
        intent = spec.intent(record.service, record.intent)
        nexts = spec.next_fields(record.service, record.intent, state)
        open_optional = [s for s in intent.optional if s not in state]
        illegal = sorted(
            s
            for (svc, s) in pools.requests
            if svc == record.service and s not in nexts and s not in open_optional
        )
        if not illegal:
            return None
        filled = [s for s in illegal if s in state]
        slot = rng.choice(filled or illegal)
        text = _other(pools.requests[(record.service, slot)], record.dialogue_id, rng)
        if text is None:
            return None
        acts = [DialogueAct(act="REQUEST", slot=slot)]
        return record.model_copy(update={"agent": text, "agent_acts": acts}), {"slot": slot}
    if kind == "PC":
        if (
            spec.outcome(record.service, record.intent, state)
            and spec.intent(record.service, record.intent).transactional
        ):
            return None
        text = _other(pools.successes.get(record.service, []), record.dialogue_id, rng)
        if text is None:
            return None
        acts = [DialogueAct(act="NOTIFY_SUCCESS")]
        return record.model_copy(update={"agent": text, "agent_acts": acts}), {}
    return _inject_uv(record, spec, pools, rng)


def _inject_uv(
    record: TurnRecord, spec: WorkflowSpec, pools: Pools, rng: random.Random
) -> tuple[TurnRecord, dict[str, Any]] | None:
    intent = spec.intent(record.service, record.intent)
    written = [s for s, (_, after) in record.state_diff().items() if after is not None]
    open_slots = [s for s in (*intent.required, *intent.optional) if s not in record.state_after]
    context = [h.text for h in record.history] + [record.user]
    for slot in rng.sample(written, len(written)) + rng.sample(open_slots, len(open_slots)):
        original = record.state_after.get(slot)
        pool = pools.values.get((record.service, slot), [])
        value = next(
            (
                v
                for v in rng.sample(pool, len(pool))
                if (original is None or value_similarity(v, original) < 0.5)
                and max(span_support(v, text)[0] for text in context) < 0.5
            ),
            None,
        )
        if value is None:
            continue
        state = {**record.state_after, slot: value}
        agent, acts = record.agent, record.agent_acts
        if original and original.lower() in agent.lower():
            start = agent.lower().index(original.lower())
            agent = agent[:start] + value + agent[start + len(original) :]
            acts = [
                a.model_copy(update={"values": [value if v == original else v for v in a.values]})
                for a in acts or []
            ]
        update = {"state_after": state, "agent": agent, "agent_acts": acts}
        return record.model_copy(update=update), {
            "slot": slot,
            "value": value,
            "original": original,
        }
    return None


def build_slice(
    dialogues: list[dict[str, Any]],
    spec: WorkflowSpec,
    n: int = 300,
    seed: int = 0,
    inject_rate: float = 0.5,
    split: str = "bench",
    injector: Callable[..., tuple[TurnRecord, dict[str, Any]] | None] | None = None,
) -> tuple[list[TurnRecord], list[TurnLabel], list[dict[str, Any]]]:
    """Sample ``n`` turns and inject failures into about ``inject_rate`` of them.

    ``injector`` applies one operator (default `inject`; `inject_varied.inject_varied` is the
    second, independently written one); the sampled turns do not depend on it.

    Returns:
        `tuple`: Records (with acts), labels, and one injection description per turn.
    """
    rng = random.Random(seed)
    all_records = [r for d in dialogues for r in dialogue_turns(d)]
    pools = Pools.from_records(all_records)
    groups: dict[tuple[str, str], list[TurnRecord]] = defaultdict(list)
    for r in all_records:
        if partition(r.dialogue_id) == split and r.service in spec.services:
            groups[(r.service, r.intent)].append(r)
    for key in sorted(groups):
        rng.shuffle(groups[key])
    chosen: list[TurnRecord] = []
    used: set[str] = set()
    while len(chosen) < n and any(groups.values()):
        for key in sorted(groups):
            while groups[key] and groups[key][-1].dialogue_id in used:
                groups[key].pop()
            if groups[key] and len(chosen) < n:
                r = groups[key].pop()
                chosen.append(r)
                used.add(r.dialogue_id)
    rng.shuffle(chosen)
    target = round(inject_rate * len(chosen))
    records, labels, notes = list(chosen), [], [{} for _ in chosen]
    quota = {k: target // 4 + (1 if i < target % 4 else 0) for i, k in enumerate(CLASSES)}
    for i in rng.sample(range(len(chosen)), len(chosen)):
        if not any(quota.values()):
            break
        # The class furthest from its quota first, so rare operators (IUV) get their share.
        for kind in sorted((k for k in CLASSES if quota[k]), key=lambda k: -quota[k]):
            result = (injector or inject)(chosen[i], kind, spec, pools, rng)
            if result:
                records[i], details = result
                notes[i] = {"class": kind, **details}
                quota[kind] -= 1
                break
    for r, note in zip(records, notes, strict=True):
        labels.append(
            TurnLabel(
                dialogue_id=r.dialogue_id,
                turn_id=r.turn_id,
                label="failure" if note else "acceptable",
                failure_class=note.get("class"),
            )
        )
    injections = [
        {"dialogue_id": r.dialogue_id, "turn_id": r.turn_id, **n}
        for r, n in zip(records, notes, strict=True)
    ]
    return records, labels, injections
