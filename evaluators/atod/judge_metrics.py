"""ATOD-Eval judge metrics (atod.md §6.2-§6.3, App. C.3): MRA, PE, turn relevance, coherence.

Each metric sends our own prompts to a `JudgeBackend` (any object with
`complete(prompts) -> list[str]`, e.g. `simulation.backends.get_backend(spec)`), in batches
of `batch_size`, and parses JSON answers. An unreadable answer is recorded as **missing**
(counted, left out of the means), never an error. Rules, per dialogue (`pred` = the tracked
state being scored, `gold` = the annotated dialogue):

- **MRA** (0/1 per probe): one probe per gold status change at turn t >= 1. The query names
  the gold goal and turn; the reference memory is the gold goal's status at t and slot
  values; the retrieved memory is the best-matching predicted goal (the scorer's
  `GoalMatcher`, highest cosine among allowed pairs) with its status at t. A gold goal
  without a matched prediction scores 0 without a judge call. MRA = mean over probes.
- **PE** (0/1 per proactive response): a SYSTEM turn t is proactive for goal g when g was
  mentioned before t in the tracked state, turn t references g (a status change of g at t,
  or a shared domain cue word) and the preceding USER turn does not. The judge answers
  `grounded` and `beneficial`; b = grounded * beneficial; PE = mean b.
- **Turn relevance** (1-5 per SYSTEM turn, reported as s/5 like the paper's Table 6).
- **Dialogue coherence** (1-5 per dialogue, native scale).

Overall MRA, PE and relevance pool their probes; coherence averages dialogues.

Example:
    >>> from simulation.backends import FakeBackend  # doctest: +SKIP
    >>> judge = FakeBackend(replies=lambda conv: '{"match": 1}')  # doctest: +SKIP
    >>> add_judge_metrics(report, pred, gold, judge)  # doctest: +SKIP
    >>> report["mra"]  # doctest: +SKIP
    1.0
"""

from __future__ import annotations

import json
from statistics import mean

from evaluators.atod.catalog import domain_cues
from evaluators.atod.judge import _first_json_object
from evaluators.atod.judge_prompts import (
    COHERENCE_PROMPT,
    MRA_PROMPT,
    PE_PROMPT,
    RELEVANCE_PROMPT,
)
from evaluators.atod.matching import GoalMatcher, goal_text
from mads_bench.atod_data import Dialogue, Goal, Turn
from mads_bench.atod_lifecycle import correlation, status_at
from simulation.backends.judge import JudgeBackend

METRICS = ("mra", "pe", "turn_relevance", "coherence")
CONTEXT_TURNS = 3


def parse_score(text: str | None, key: str, low: int, high: int) -> int | None:
    """The integer under `key` in the first JSON object of `text`, if within [low, high].

    Example:
        >>> parse_score('Sure: {"relevance": 4}', "relevance", 1, 5)
        4
        >>> parse_score('{"relevance": 9}', "relevance", 1, 5) is None
        True
    """
    obj = _first_json_object(text or "")
    value = obj.get(key) if obj else None
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and low <= value <= high else None


def _ask(judge: JudgeBackend, prompts: list[str], batch_size: int) -> list[str]:
    answers: list[str] = []
    for start in range(0, len(prompts), batch_size):
        chunk = prompts[start : start + batch_size]
        replies = list(judge.complete(chunk))
        if len(replies) != len(chunk):
            raise ValueError(f"judge returned {len(replies)} answers for {len(chunk)} prompts")
        answers += replies
    return answers


def _context(turns: list[Turn], end: int, n: int | None = CONTEXT_TURNS) -> str:
    """Turns with id < `end` (the last `n` of them; all when n is None), one per line."""
    before = [t for t in turns if t.turn_id < end]
    return "\n".join(f"{t.speaker}: {t.utterance}" for t in before[-n if n else 0 :]) or "(none)"


def _state(goals: list[Goal], turn: int) -> str:
    rows = [{"goal": g.content, "status": status_at(g, turn)} for g in goals]
    return json.dumps([r for r in rows if r["status"] != "not_mentioned"], ensure_ascii=False)


def _memory(goal: Goal, turn: int) -> str:
    return json.dumps(
        {"goal": goal.content, "status": status_at(goal, turn), "slot_values": goal.slot_values},
        ensure_ascii=False,
    )


def _references(turn: Turn, goal: Goal) -> bool:
    changed = any(e.turn == turn.turn_id for e in goal.status_history)
    cues = domain_cues(goal_text(goal)) | {goal.domain}
    return changed or bool(domain_cues(turn.utterance) & cues)


def build_prompts(pred: Dialogue, gold: Dialogue, matcher: GoalMatcher) -> dict[str, list]:
    """The judge prompts of one dialogue: `{metric: [prompt or fixed score]}`.

    An `int` instead of a prompt is a score decided without the judge (MRA 0 when nothing
    was retrieved).
    """
    match = matcher.match(pred.goal_list, gold.goal_list)
    turns = sorted(gold.turns, key=lambda t: t.turn_id)
    out: dict[str, list] = {name: [] for name in METRICS}
    for j, goal in enumerate(gold.goal_list):
        column = [i for i in range(len(pred.goal_list)) if match.allowed[i, j]]
        best = max(column, key=lambda i: match.similarity[i, j]) if column else None
        for entry in goal.status_history:
            if entry.turn < 1 or entry.status == "not_mentioned":
                continue
            if best is None:
                out["mra"].append(0)
                continue
            query = f"What is the state of the goal '{goal.core_content}' after turn {entry.turn}?"
            out["mra"].append(
                MRA_PROMPT.format(
                    context=_context(turns, entry.turn + 1),
                    query=query,
                    gold=_memory(goal, entry.turn),
                    pred=_memory(pred.goal_list[best], entry.turn),
                )
            )
    for k, turn in enumerate(turns):
        if turn.speaker != "SYSTEM":
            continue
        state = _state(pred.goal_list, turn.turn_id - 1)
        context = _context(turns, turn.turn_id)
        out["turn_relevance"].append(
            RELEVANCE_PROMPT.format(context=context, response=turn.utterance, state=state)
        )
        user = turns[k - 1] if k and turns[k - 1].speaker == "USER" else None
        proactive = [
            g
            for g in pred.goal_list
            if status_at(g, turn.turn_id - 1) != "not_mentioned"
            and _references(turn, g)
            and not (user and _references(user, g))
        ]
        if proactive:
            out["pe"].append(
                PE_PROMPT.format(
                    context=_context(turns, turn.turn_id, None),
                    response=turn.utterance,
                    state=_state(proactive, turn.turn_id - 1),
                )
            )
    out["coherence"].append(
        COHERENCE_PROMPT.format(
            dialogue=_context(turns, turns[-1].turn_id + 1, None),
            state=_state(pred.goal_list, turns[-1].turn_id),
        )
    )
    return out


def _parse(metric: str, answer: str) -> float | None:
    if metric == "mra":
        return parse_score(answer, "match", 0, 1)
    if metric == "pe":
        grounded = parse_score(answer, "grounded", 0, 1)
        beneficial = parse_score(answer, "beneficial", 0, 1)
        return None if grounded is None or beneficial is None else grounded * beneficial
    if metric == "turn_relevance":
        score = parse_score(answer, "relevance", 1, 5)
        return None if score is None else score / 5
    return parse_score(answer, "coherence", 1, 5)


def judge_scores(
    pred: list[Dialogue],
    gold: list[Dialogue],
    judge: JudgeBackend,
    matcher: GoalMatcher,
    batch_size: int = 64,
) -> list[dict[str, list[float | None]]]:
    """Per gold dialogue, `{metric: [score or None per probe]}` (one batch run per metric).

    Args:
        pred (`list[Dialogue]`): Tracked states, paired by `dialogue_id` (missing -> empty).
        gold (`list[Dialogue]`): Annotated dialogues.
        judge (`JudgeBackend`): The judge.
        matcher (`GoalMatcher`): Pairs predicted and gold goals (for MRA).
        batch_size (`int`): Prompts per `complete` call.

    Returns:
        `list[dict]`: One dict per gold dialogue, in order; None marks an unreadable answer.
    """
    by_id = {d.dialogue_id: d for d in pred}
    built = [
        build_prompts(by_id.get(g.dialogue_id, g.model_copy(update={"goal_list": []})), g, matcher)
        for g in gold
    ]
    results: list[dict[str, list[float | None]]] = [{m: [] for m in METRICS} for _ in gold]
    for metric in METRICS:
        owners = [(d, p) for d, b in enumerate(built) for p in b[metric] if isinstance(p, str)]
        answers = iter(_ask(judge, [p for _, p in owners], batch_size) if owners else [])
        for d, b in enumerate(built):
            for item in b[metric]:
                value = item if isinstance(item, int) else _parse(metric, next(answers))
                results[d][metric].append(value)
    return results


def _summary(scores: list[dict[str, list]], anchor: list[float | None] | None) -> dict:
    out: dict = {}
    for metric in METRICS:
        values = [v for s in scores for v in s[metric]]
        valid = [v for v in values if v is not None]
        out[metric] = mean(valid) if valid else None
        out[f"{metric}_n"] = len(valid)
        out[f"{metric}_missing"] = len(values) - len(valid)
    if anchor is not None:
        out["correlations_with_dgcr"] = {
            metric: correlation([per_dialogue(s, metric) for s in scores], anchor)
            for metric in METRICS
        }
    return out


def per_dialogue(scores: dict[str, list], metric: str) -> float | None:
    """Mean of a dialogue's valid scores for `metric` (None when it has none)."""
    valid = [v for v in scores[metric] if v is not None]
    return mean(valid) if valid else None


def add_judge_metrics(
    report: dict,
    pred: list[Dialogue],
    gold: list[Dialogue],
    judge: JudgeBackend,
    matcher: GoalMatcher | None = None,
    batch_size: int = 64,
) -> dict:
    """Add MRA, PE, turn relevance and coherence to a `score_dialogues` report, in place.

    Adds the four keys overall and under `by_complexity`, their `_n` / `_missing` counts,
    Pearson/Spearman with per-dialogue dGCR (of the predicted states) in
    `correlations_with_dgcr`, and per-dialogue values to `per_dialogue` rows.

    Returns:
        `dict`: The same report.
    """
    matcher = matcher or GoalMatcher(mode=report.get("mode", "release"))
    scores = judge_scores(pred, gold, judge, matcher, batch_size)
    rows = report["per_dialogue"]
    for row, s in zip(rows, scores, strict=True):
        row.update({metric: per_dialogue(s, metric) for metric in METRICS})
    summary = _summary(scores, [r["dgcr"] for r in rows])
    report["correlations_with_dgcr"].update(summary.pop("correlations_with_dgcr"))
    report.update(summary)
    for split, block in report["by_complexity"].items():
        idx = [i for i, g in enumerate(gold) if g.complexity_class == split]
        part = _summary([scores[i] for i in idx], [rows[i]["dgcr"] for i in idx])
        block["correlations_with_dgcr"].update(part.pop("correlations_with_dgcr"))
        block.update(part)
    return report


def render_judge_markdown(report: dict) -> str:
    """The judge metrics of a report (after `add_judge_metrics`) as a markdown table."""
    cols = [("overall", report), *report["by_complexity"].items()]

    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    lines = [
        "",
        "### Judge metrics (MRA, PE, relevance as s/5: 0-1; coherence: 1-5)",
        "",
        "| metric | " + " | ".join(name for name, _ in cols) + " | n | missing | r | rho |",
        "| --- |" + " --- |" * (len(cols) + 4),
    ]
    for metric in METRICS:
        corr = report["correlations_with_dgcr"][metric]
        cells = " | ".join(fmt(c.get(metric)) for _, c in cols)
        lines.append(
            f"| {metric} | {cells} | {report[f'{metric}_n']} | {report[f'{metric}_missing']} "
            f"| {fmt(corr['pearson'])} | {fmt(corr['spearman'])} |"
        )
    return "\n".join(lines) + "\n"
