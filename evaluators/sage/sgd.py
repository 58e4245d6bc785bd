"""Schema-Guided Dialogue (SGD) dialogues → SAGE turn records (SPEC §4.4).

In SGD the dialogue state is annotated on user turns: it is the tracker's state after the
user's utterance, i.e. the state the system acts on. A SAGE turn t pairs the user utterance
u_t with the system reply a_t; ``state_after`` is the state annotated on u_t and
``state_before`` the one annotated on the previous user turn of the same service. SGD lists
several surface forms per slot; we keep the earlier form when it is still listed (so a
restated value is not a change) and otherwise take the first one.

Only user turns with exactly one frame and an active intent become records (multi-frame
turns mix two workflows and are left out of the slices).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evaluators.sage.records import DialogueAct, HistoryItem, TurnRecord
from mads_bench.loading import read_sgd_dialogues


def load_dialogues(folder: Path) -> list[dict[str, Any]]:
    """Every dialogue of an SGD split folder, in order (`read_sgd_dialogues`).

    Raises:
        `FileNotFoundError`: When the folder holds no dialogue files.
    """
    return read_sgd_dialogues(folder)


def _acts(frame: dict[str, Any]) -> list[DialogueAct]:
    return [
        DialogueAct(act=a["act"], slot=a.get("slot", ""), values=list(a.get("values", [])))
        for a in frame.get("actions", [])
    ]


def _pick_values(values: dict[str, list[str]], previous: dict[str, str]) -> dict[str, str]:
    state = {}
    for slot, forms in values.items():
        if not forms:
            continue
        state[slot] = previous[slot] if previous.get(slot) in forms else forms[0]
    return state


def dialogue_turns(dialogue: dict[str, Any]) -> Iterator[TurnRecord]:
    """Turn records of one SGD dialogue (single-frame user turns with an active intent)."""
    turns = dialogue["turns"]
    states: dict[str, dict[str, str]] = {}
    for i, user_turn in enumerate(turns):
        if user_turn["speaker"] != "USER":
            continue
        frames = user_turn["frames"]
        befores = {}
        for frame in frames:  # track every service's state, even on turns we skip
            previous = states.get(frame["service"], {})
            states[frame["service"]] = _pick_values(frame["state"]["slot_values"], previous)
            befores[frame["service"]] = previous
        agent_turn = turns[i + 1] if i + 1 < len(turns) else None
        if len(frames) != 1 or agent_turn is None:
            continue
        frame = frames[0]
        intent = frame["state"]["active_intent"]
        if intent == "NONE":
            continue
        agent_frames = [f for f in agent_turn["frames"] if f["service"] == frame["service"]]
        history = [
            HistoryItem(speaker="user" if t["speaker"] == "USER" else "agent", text=t["utterance"])
            for t in turns[:i]
        ]
        yield TurnRecord(
            dialogue_id=dialogue["dialogue_id"],
            turn_id=str(i),
            service=frame["service"],
            intent=intent,
            history=history,
            user=user_turn["utterance"],
            agent=agent_turn["utterance"],
            state_before=dict(befores[frame["service"]]),
            state_after=dict(states[frame["service"]]),
            user_acts=_acts(frame),
            agent_acts=_acts(agent_frames[0]) if agent_frames else [],
        )
