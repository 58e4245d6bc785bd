"""Scoring a tracker's ATOD-format predictions against gold dialogues (atod.md §6-§8).

Per dialogue, predicted goals are matched to gold goals (`matching.GoalMatcher`), then:

- goal detection precision / recall / F1 at the final state, **macro-averaged** over
  dialogues (a dialogue without predictions scores 0);
- conditional status accuracy, **micro-averaged** over pairs. `strict`: over the one-to-one
  matched pairs, exact final statuses. `release`: over all predicted goals, each compared
  with its best-matching gold goal (or with `open` when it matches none), near statuses
  counted equal (open ~ pending, completed ~ pending, failed ~ abandoned);
- dependency F1 over (prerequisite -> goal) edges mapped through the matching, micro TP/FP/FN;
- the same detection / status figures along normalised progress: at bin b of B the cut is
  turn ceil(b * T / B), and only goals whose status history has them mentioned by the cut
  take part;
- over the matched pairs: the confusion of final statuses (gold → predicted) and the mean
  absolute error, in turns, of `first_mentioned_turn` and `completion_turn` where both the
  prediction and the gold goal have one (completions only one side has are counted apart);
- dGCR and NTC of the predicted and of the gold states, and Pearson / Spearman of each
  per-dialogue metric with the per-dialogue dGCR of the predicted states.

`overall` ratios average the complexity splits (as the release does); dGCR/NTC are pooled.

Example:
    >>> from mads_bench.atod_data import load_dialogues  # doctest: +SKIP
    >>> gold = load_dialogues("medium_sample.json")  # doctest: +SKIP
    >>> score_dialogues(gold, gold)["goal_detection_f1"]  # doctest: +SKIP
    1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from evaluators.atod.matching import GoalMatch, GoalMatcher
from mads_bench.atod_data import Dialogue
from mads_bench.atod_lifecycle import dgcr, ntc, status_at

NEAR_STATUSES = {("open", "pending"), ("completed", "pending"), ("failed", "abandoned")}
PROGRESS_BINS = 10
CORRELATED = ("goal_detection_f1", "conditional_status_accuracy", "ntc")


def statuses_agree(pred: str, gold: str, mode: str) -> bool:
    """Exact equality (`strict`), or equality up to the near-status pairs (`release`)."""
    if pred == gold:
        return True
    return mode == "release" and ((pred, gold) in NEAR_STATUSES or (gold, pred) in NEAR_STATUSES)


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def snapshot(
    match: GoalMatch,
    pred_status: Sequence[str],
    gold_status: Sequence[str],
    pred_present: np.ndarray,
    gold_present: np.ndarray,
    mode: str,
) -> dict[str, float]:
    """Detection and status figures for one dialogue at one point in time.

    Args:
        match (`GoalMatch`): The dialogue's matching.
        pred_status (`Sequence[str]`): Status of each predicted goal at that point.
        gold_status (`Sequence[str]`): Status of each gold goal at that point.
        pred_present (`np.ndarray`): Which predicted goals take part (bool per goal).
        gold_present (`np.ndarray`): Which gold goals take part.
        mode (`str`): `strict` or `release`.

    Returns:
        `dict`: `precision`, `recall`, `f1`, `status_correct`, `status_total`.
    """
    allowed = match.allowed & np.outer(pred_present, gold_present)
    n_pred, n_gold = int(pred_present.sum()), int(gold_present.sum())
    precision = allowed.any(axis=1).sum() / n_pred if n_pred else 0.0
    recall = allowed.any(axis=0).sum() / n_gold if n_gold else 0.0
    correct = total = 0
    for i in np.flatnonzero(pred_present):
        if allowed[i].any():
            j = int(np.argmax(np.where(allowed[i], match.similarity[i], -np.inf)))
            target = gold_status[j]
        elif mode == "release":
            target = "open"  # the release counts an unmatched detection against gold `open`
        else:
            continue
        total += 1
        correct += statuses_agree(pred_status[i], target, mode)
    return {
        "precision": float(precision),
        "recall": float(recall),
        "f1": _f1(float(precision), float(recall)),
        "status_correct": correct,
        "status_total": total,
    }


def dependency_counts(pred: Dialogue, gold: Dialogue, match: GoalMatch) -> tuple[int, int, int]:
    """(TP, FP, FN) of dependency edges, predicted edges mapped through the matching."""
    p_index = {g.id: i for i, g in enumerate(pred.goal_list)}
    g_index = {g.id: j for j, g in enumerate(gold.goal_list)}
    gold_edges = {(g_index[d], g_index[g.id]) for g in gold.goal_list for d in g.dependencies}
    hit, fp = set(), 0
    for goal in pred.goal_list:
        for dep in goal.dependencies:
            a, b = match.pairs.get(p_index[dep]), match.pairs.get(p_index[goal.id])
            if a is not None and b is not None and (a, b) in gold_edges:
                hit.add((a, b))
            else:
                fp += 1
    return len(hit), fp, len(gold_edges - hit)


def pair_details(pred: Dialogue, gold: Dialogue, match: GoalMatch) -> dict:
    """Over the matched (predicted, gold) pairs: final statuses side by side, and the turn
    errors of ``first_mentioned_turn`` and ``completion_turn`` (where both sides have one)."""
    statuses, first, completion = [], [], []
    missed = spurious = 0
    for i, j in match.pairs.items():
        p, g = pred.goal_list[i], gold.goal_list[j]
        statuses.append([g.status, p.status])
        if p.first_mentioned_turn is not None and g.first_mentioned_turn is not None:
            first.append(abs(p.first_mentioned_turn - g.first_mentioned_turn))
        if p.completion_turn is not None and g.completion_turn is not None:
            completion.append(abs(p.completion_turn - g.completion_turn))
        missed += p.completion_turn is None and g.completion_turn is not None
        spurious += p.completion_turn is not None and g.completion_turn is None
    return {
        "status_pairs": statuses,
        "first_mentioned_turn_errors": first,
        "completion_turn_errors": completion,
        "completion_missed": missed,
        "completion_spurious": spurious,
    }


def score_dialogue(
    pred: Dialogue, gold: Dialogue, matcher: GoalMatcher, bins: int = PROGRESS_BINS
) -> dict:
    """All per-dialogue figures (see the module docstring).

    Args:
        pred (`Dialogue`): The prediction (its `goal_list` is what is scored).
        gold (`Dialogue`): The gold dialogue.
        matcher (`GoalMatcher`): Decides the mode and the matching rule.
        bins (`int`): Number of progress bins.

    Returns:
        `dict`: Figures for this dialogue, including `progress` (one dict per bin).
    """
    match = matcher.match(pred.goal_list, gold.goal_list)
    mode = matcher.mode
    final = snapshot(
        match,
        [g.status for g in pred.goal_list],
        [g.status for g in gold.goal_list],
        np.ones(len(pred.goal_list), dtype=bool),
        np.ones(len(gold.goal_list), dtype=bool),
        mode,
    )
    progress = []
    for b in range(1, bins + 1):
        cut = math.ceil(b * gold.num_turns / bins)
        p_status = [status_at(g, cut) for g in pred.goal_list]
        g_status = [status_at(g, cut) for g in gold.goal_list]
        p_present = np.array([s != "not_mentioned" for s in p_status], dtype=bool)
        g_present = np.array([s != "not_mentioned" for s in g_status], dtype=bool)
        if p_present.any() or g_present.any():
            progress.append(snapshot(match, p_status, g_status, p_present, g_present, mode))
        else:
            progress.append(None)
    tp, fp, fn = dependency_counts(pred, gold, match)
    return {
        **pair_details(pred, gold, match),
        "dialogue_id": gold.dialogue_id,
        "complexity": gold.complexity_class,
        "n_pred": len(pred.goal_list),
        "n_gold": len(gold.goal_list),
        "goal_detection_precision": final["precision"],
        "goal_detection_recall": final["recall"],
        "goal_detection_f1": final["f1"],
        "status_correct": final["status_correct"],
        "status_total": final["status_total"],
        "conditional_status_accuracy": (
            final["status_correct"] / final["status_total"] if final["status_total"] else None
        ),
        "dependency_tp_fp_fn": [tp, fp, fn],
        "dgcr": dgcr(pred.goal_list),
        "ntc": ntc(pred.goal_list),
        "gold_dgcr": dgcr(gold.goal_list),
        "gold_ntc": ntc(gold.goal_list),
        "progress": progress,
    }
