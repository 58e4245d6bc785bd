"""ATOD baselines (atod.md §7): prompt-only and plain RAG memory goal tracking via a judge.

Both ask a `JudgeBackend` (e.g. `simulation.backends.get_backend(spec)`) after every turn
for the whole goal table as JSON, and turn the tables into ATOD-format predictions that
`atod score` reads. They differ only in the context the judge sees:

- **prompt-only**: the full history up to and including the turn;
- **rag**: the `top_k` past turns most similar to the current one (cosine of L2-normalised
  MiniLM embeddings, kept in time order) plus the current turn.

Both prompts also carry the table after the previous turn, so goal ids stay stable. Turns
are processed in lock-step across dialogues, one batched `complete` call per turn index.
An unreadable answer keeps the previous table (counted in `metadata["unparsed_turns"]`);
a goal missing from a later table keeps its last status; statuses outside the ATOD set
are ignored.

Example:
    >>> from simulation.backends import FakeBackend  # doctest: +SKIP
    >>> judge = FakeBackend(replies=lambda c: '{"goals": []}')  # doctest: +SKIP
    >>> track_with_judge(dialogues, judge, method="prompt-only")  # doctest: +SKIP
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from evaluators.atod.judge import STATUS_LABELS, _first_json_object
from evaluators.atod.matching import EmbedFn
from mads_bench.atod_data import (
    Dialogue,
    Goal,
    Prediction,
    StatusEntry,
    TrackerInput,
    Turn,
    strip_gold,
)
from simulation.backends.judge import JudgeBackend

Method = Literal["prompt-only", "rag"]

TABLE_PROMPT = """You track user goals in a task-oriented dialogue.
{context}
Goal table before this turn (JSON): {table}
Latest turn ({speaker}): {utterance}
Return the full goal table after the latest turn. Keep existing ids; add new goals as \
goal_<n>. Statuses: open, pending, completed, failed, abandoned. `dependencies` lists the \
ids a goal needs done first.
Answer with JSON only: {{"goals": [{{"id": "goal_1", "domain": "<SGD domain>", \
"intent": "<SGD intent>", "description": "<what the user wants>", "status": "<status>", \
"dependencies": []}}]}}"""


@dataclass
class _Table:
    """The goal table of one dialogue and each goal's status history."""

    goals: dict[str, dict] = field(default_factory=dict)
    history: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    first: dict[str, int] = field(default_factory=dict)
    records: list[dict] = field(default_factory=list)
    unparsed: int = 0

    def as_json(self) -> str:
        rows = [
            {"id": i, **{k: g[k] for k in ("description", "status")}} for i, g in self.goals.items()
        ]
        return json.dumps(rows, ensure_ascii=False)

    def apply(self, answer: str, turn: int, speaker: str, utterance: str) -> None:
        before = {i: g["status"] for i, g in self.goals.items()}
        rows = parse_table(answer)
        if rows is None:
            self.unparsed += 1
            rows = []
        for row in rows:
            goal = self.goals.setdefault(row["id"], dict(row))
            goal.update(row)
            if row["id"] not in self.first:
                self.first[row["id"]] = turn
                self.history[row["id"]] = [(0, "not_mentioned")]
            if before.get(row["id"]) != row["status"]:
                self.history[row["id"]].append((turn, row["status"]))
        self.records.append(
            {
                "turn_id": turn,
                "speaker": speaker,
                "utterance": utterance,
                "all_goals": [
                    {
                        "goal_id": i,
                        "goal_content": g["description"],
                        "status": g["status"],
                        "status_changed": before.get(i, "not_mentioned") != g["status"],
                    }
                    for i, g in self.goals.items()
                ],
                "goal_status_changes": [
                    {"goal_id": i, "new_status": g["status"], "turn": turn}
                    for i, g in self.goals.items()
                    if before.get(i, "not_mentioned") != g["status"]
                ],
            }
        )


def parse_table(text: str) -> list[dict] | None:
    """The goals of a `{"goals": [...]}` answer (bad rows dropped), or None if unreadable.

    Example:
        >>> parse_table('{"goals": [{"id": "goal_1", "status": "Open"}, {"id": 3}]}')[0]["status"]
        'open'
    """
    obj = _first_json_object(text or "")
    if obj is None or not isinstance(obj.get("goals"), list):
        return None
    rows = []
    for item in obj["goals"]:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        status = str(item.get("status", "")).strip().lower()
        if status not in STATUS_LABELS:
            continue
        deps = item.get("dependencies") or []
        rows.append(
            {
                "id": item["id"],
                "domain": str(item.get("domain") or ""),
                "intent": str(item.get("intent") or ""),
                "description": str(item.get("description") or item["id"]),
                "status": status,
                "dependencies": [d for d in deps if isinstance(d, str)]
                if isinstance(deps, list)
                else [],
            }
        )
    return rows


def _to_dialogue(source: Dialogue | TrackerInput, table: _Table, method: str) -> Prediction:
    goals = []
    for goal_id, g in table.goals.items():
        history = table.history[goal_id]
        done = [t for t, s in history if s == "completed"]
        goals.append(
            Goal(
                id=goal_id,
                domain=g["domain"],
                intent=g["intent"],
                content=g["description"],
                core_content=g["description"],
                status=g["status"],
                dependencies=[d for d in g["dependencies"] if d in table.goals and d != goal_id],
                status_history=[StatusEntry(turn=t, status=s) for t, s in history],
                first_mentioned_turn=table.first[goal_id],
                completion_turn=done[-1] if g["status"] == "completed" and done else None,
            )
        )
    return Prediction(
        dialogue_id=source.dialogue_id,
        dialogue_index=source.dialogue_index,
        complexity_class=source.complexity_class,
        goal_list=goals,
        turns=[Turn.model_validate(r) for r in table.records],
        metadata={"tracker": f"mads-bench {method} baseline", "unparsed_turns": table.unparsed},
    )


def _rag_context(vectors: np.ndarray, turns: list[tuple[str, str]], t: int, k: int) -> str:
    if t == 0:
        return "Retrieved earlier turns: (none)"
    sims = vectors[:t] @ vectors[t]
    keep = sorted(np.argsort(-sims, kind="stable")[:k].tolist())
    lines = [f"turn {i + 1} {turns[i][0]}: {turns[i][1]}" for i in keep]
    return "Retrieved earlier turns:\n" + "\n".join(lines)


def track_with_judge(
    dialogues: list[Dialogue] | list[TrackerInput],
    judge: JudgeBackend,
    *,
    method: Method = "prompt-only",
    top_k: int = 5,
    embedder: EmbedFn | None = None,
) -> list[Prediction]:
    """Track goals with a prompt-only or RAG baseline and return ATOD-format predictions.

    Args:
        dialogues (`list[Dialogue] | list[TrackerInput]`): Input dialogues; only speaker and
            utterance are read.
        judge (`JudgeBackend`): Answers one goal-table prompt per dialogue and turn.
        method (`str`): `prompt-only` or `rag`.
        top_k (`int`): Past turns retrieved per turn (`rag`).
        embedder (`EmbedFn`, *optional*): Texts -> normalised vectors (`rag`; MiniLM if None).

    Returns:
        `list[Prediction]`: One prediction per input dialogue, in order.
    """
    if method not in ("prompt-only", "rag"):
        raise ValueError(f"unknown baseline method {method!r}; use 'prompt-only' or 'rag'")
    turns = [strip_gold(d) for d in dialogues]
    vectors: list[np.ndarray] = []
    if method == "rag":
        if embedder is None:
            from evaluators.atod.matching import minilm_embedder

            embedder = minilm_embedder()
        vectors = [embedder([u for _, u in ts]) for ts in turns]
    tables = [_Table() for _ in dialogues]
    for t in range(max((len(ts) for ts in turns), default=0)):
        active = [d for d, ts in enumerate(turns) if t < len(ts)]
        prompts = []
        for d in active:
            speaker, utterance = turns[d][t]
            if method == "rag":
                context = _rag_context(vectors[d], turns[d], t, top_k)
            else:
                history = "\n".join(f"{s}: {u}" for s, u in turns[d][:t]) or "(none)"
                context = "Dialogue so far:\n" + history
            prompts.append(
                TABLE_PROMPT.format(
                    context=context,
                    table=tables[d].as_json(),
                    speaker=speaker.upper(),
                    utterance=utterance,
                )
            )
        answers = judge.complete(prompts)
        for d, answer in zip(active, answers, strict=True):
            speaker, utterance = turns[d][t]
            tables[d].apply(answer, t + 1, speaker.upper(), utterance)
    return [_to_dialogue(d, table, method) for d, table in zip(dialogues, tables, strict=True)]
