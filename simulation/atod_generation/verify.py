"""The verifier pass (atod.md §4.2, Appendix A.6): rule checks, plus an optional LLM judge.

Rule checks on a generated ATOD record (each failure is a readable reason):

- **format**: the record loads with `mads_bench.atod_data.parse_dialogues`; turn ids run
  1..T; speakers alternate starting with USER; the dialogue ends with a system turn;
- **labels**: every goal's `status_history` equals the changes recorded on the turns, the
  per-turn `all_goals` agree with it, `status` is its last entry, `first_mentioned_turn` and
  `completion_turn` agree with it;
- **lifecycle**: only legal transitions (Table 17's rules: a goal is opened by the user;
  pending only goes to completed / failed / abandoned; terminal statuses are never left),
  each made by the speaker who can make it;
- **dependencies**: prerequisites come earlier in the goal list and complete before their
  dependents complete;
- **grounding**: every slot value of a goal is said by the user;
- **complexity**: Table 14's criteria for the label (goals, turns, dependencies,
  proactivity, failure scenario).

With a backend, the LLM judge also answers Table 15's PASS/FAIL question on the trajectory
and a consistency question on the dialogue; a FAIL rejects the instance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mads_bench.atod_data import parse_dialogues
from simulation.atod_generation.templates import render_value

LEGAL = {
    ("not_mentioned", "open"): "USER",
    ("open", "pending"): "SYSTEM",
    ("open", "abandoned"): "USER",
    ("pending", "abandoned"): "USER",
    ("pending", "completed"): "SYSTEM",
    ("pending", "failed"): "SYSTEM",
}
TURN_RANGES = {"medium": (8, 35), "complex": (30, 10_000)}
JUDGE_PROMPT = (
    "You are a quality judge for annotated goal trajectories and the dialogues generated from "
    "them.\nTRAJECTORY ({n} goals, {complexity} complexity):\n{goals}\n\nDIALOGUE:\n{dialogue}"
    "\n\nCheck that goal descriptions are clear, slot values are realistic (no placeholders), "
    "annotations are consistent and the dialogue follows the trajectory coherently. Respond "
    "with exactly one word: PASS or FAIL"
)


@dataclass
class Verdict:
    """The verifier's decision on one generated dialogue."""

    passed: bool
    problems: list[str] = field(default_factory=list)


def _label_problems(record: dict[str, Any]) -> list[str]:
    problems = []
    turns = record["turns"]
    recorded: dict[str, list[dict]] = {g["id"]: [] for g in record["goal_list"]}
    for turn in turns:
        for change in turn["goal_status_changes"]:
            recorded[change["goal_id"]].append(
                {"turn": turn["turn_id"], "status": change["new_status"]}
            )
    speaker = {t["turn_id"]: t["speaker"] for t in turns}
    for goal in record["goal_list"]:
        gid, history = goal["id"], goal["status_history"]
        if history[1:] != recorded[gid]:
            problems.append(f"{gid}: status_history disagrees with the turns' status changes")
        if goal["status"] != history[-1]["status"]:
            problems.append(f"{gid}: status is not the last status_history entry")
        mention = next((e["turn"] for e in history if e["status"] != "not_mentioned"), None)
        done = next((e["turn"] for e in history if e["status"] == "completed"), None)
        if goal["first_mentioned_turn"] != mention or goal["completion_turn"] != done:
            problems.append(f"{gid}: first_mentioned_turn / completion_turn disagree with history")
        for before, after in zip(history, history[1:], strict=False):
            who = LEGAL.get((before["status"], after["status"]))
            if who is None:
                problems.append(
                    f"{gid}: illegal transition {before['status']} -> {after['status']}"
                )
            elif speaker.get(after["turn"]) != who:
                problems.append(f"{gid}: {after['status']} at turn {after['turn']} not by {who}")
        for turn in turns:
            state = next(s["status"] for s in turn["all_goals"] if s["goal_id"] == gid)
            expected = [e["status"] for e in history if e["turn"] <= turn["turn_id"]][-1]
            if state != expected:
                problems.append(f"{gid}: all_goals at turn {turn['turn_id']} says {state}")
                break
    return problems


def _structure_problems(record: dict[str, Any]) -> list[str]:
    problems = []
    turns = record["turns"]
    if [t["turn_id"] for t in turns] != list(range(1, len(turns) + 1)):
        problems.append("turn ids do not run 1..T")
    if any(t["speaker"] != ("USER" if i % 2 == 0 else "SYSTEM") for i, t in enumerate(turns)):
        problems.append("speakers do not alternate starting with USER")
    if not turns or turns[-1]["speaker"] != "SYSTEM":
        problems.append("the dialogue does not end with a system turn")
    order = [g["id"] for g in record["goal_list"]]
    completion = {g["id"]: g["completion_turn"] for g in record["goal_list"]}
    user_text = " ".join(t["utterance"].lower() for t in turns if t["speaker"] == "USER")
    for goal in record["goal_list"]:
        for dep in goal["dependencies"]:
            if dep not in order or order.index(dep) >= order.index(goal["id"]):
                problems.append(f"{goal['id']}: prerequisite {dep} does not come earlier")
            elif goal["completion_turn"] is not None and (
                completion[dep] is None or completion[dep] >= goal["completion_turn"]
            ):
                problems.append(f"{goal['id']}: completed before its prerequisite {dep}")
        for slot, value in goal["slot_values"].items():
            if render_value(str(value)).lower() not in user_text:
                problems.append(f"{goal['id']}: the user never says {slot} = {value!r}")
    return problems


def _complexity_problems(record: dict[str, Any]) -> list[str]:
    label, meta = record["complexity_class"], record["metadata"]
    low, high = TURN_RANGES[label]
    n_turns, n_goals = len(record["turns"]), len(record["goal_list"])
    deps = sum(len(g["dependencies"]) for g in record["goal_list"])
    failed = any(g["status"] == "failed" for g in record["goal_list"])
    problems = (
        [] if low <= n_turns <= high else [f"{label} needs {low}-{high} turns, has {n_turns}"]
    )
    if label == "medium" and (n_goals > 8 or deps > 2 or meta["proactivity"] or failed):
        problems.append("medium: at most 8 goals and 2 dependencies, no proactivity or failure")
    if label == "complex" and (n_goals < 7 or deps < 2 or not meta["proactivity"] or not failed):
        problems.append("complex: 7+ goals, 2+ dependencies, proactivity and a failure")
    return problems


def verify_record(record: dict[str, Any], judge=None) -> Verdict:
    """Check one generated record (see the module docstring).

    Args:
        record (`dict`): An ATOD dialogue record from `labels.build_record`.
        judge (`ChatBackend`, *optional*): An LLM backend for the PASS/FAIL judgement.

    Returns:
        `Verdict`: `passed` and the reasons it did not.
    """
    try:
        parse_dialogues([record], "<generated>")
    except ValueError as err:
        return Verdict(False, [f"format: {err}"])
    problems = _structure_problems(record) + _label_problems(record)
    problems += _complexity_problems(record)
    if judge is not None and not problems:
        answer = judge.complete([judge_prompt(record)])[0].strip().upper()
        if not answer.startswith("PASS"):
            problems.append(f"judge: {answer[:40] or 'empty answer'}")
    return Verdict(not problems, problems)


def judge_prompt(record: dict[str, Any]) -> str:
    """The LLM judge's prompt for one record (Table 15, extended to the dialogue)."""
    goals = "\n".join(
        f"- {g['id']} [{g['domain']}/{g['intent']}] {g['content']} (depends on "
        f"{', '.join(g['dependencies']) or 'nothing'}; final status {g['status']})"
        for g in record["goal_list"]
    )
    dialogue = "\n".join(f"{t['speaker']}: {t['utterance']}" for t in record["turns"])
    return JUDGE_PROMPT.format(
        n=len(record["goal_list"]),
        complexity=record["complexity_class"],
        goals=goals,
        dialogue=dialogue,
    )
