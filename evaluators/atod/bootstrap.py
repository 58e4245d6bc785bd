"""Per-status figures and bootstrap confidence intervals over dialogues for an ATOD report.

Both read the per-dialogue rows of `tracker_scoring.score_dialogue`:

- `per_status`: for each final status, over the matched (gold, predicted) pairs, how many gold
  goals have it, how many predictions say it, how many agree exactly, and the precision, recall
  and F1 of that status (exact statuses in both modes: these are the confusion table's margins);
- `bootstrap_intervals`: dialogues are resampled with replacement (a dialogue's goals travel
  together, so the intervals reflect that goals within a dialogue are not independent), the
  headline figures and per-status recalls are recomputed on each resample, and the 2.5th and
  97.5th percentiles are reported. Dialogues of all complexity splits are pooled.

Example:
    >>> rows = [{"goal_detection_f1": 1.0, "status_correct": 2, "status_total": 2,
    ...          "status_pairs": [["completed", "completed"], ["abandoned", "abandoned"]]},
    ...         {"goal_detection_f1": 0.5, "status_correct": 0, "status_total": 1,
    ...          "status_pairs": [["abandoned", "completed"]]}]
    >>> per_status(rows)["abandoned"]["recall"], per_status(rows)["completed"]["precision"]
    (0.5, 0.5)
    >>> ci = bootstrap_intervals(rows, resamples=200, seed=0)["goal_detection_f1"]
    >>> 0.5 <= ci[0] <= ci[1] <= 1.0
    True
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from evaluators.bootstrap import percentile_interval, resample_indices

LEVEL = 0.95


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def per_status(rows: list[dict]) -> dict[str, dict]:
    """Gold / predicted / agreeing counts and precision, recall, F1 per final status."""
    pairs = [pair for row in rows for pair in row["status_pairs"]]
    gold = Counter(g for g, _ in pairs)
    predicted = Counter(p for _, p in pairs)
    correct = Counter(g for g, p in pairs if g == p)
    figures = {}
    for status in sorted(set(gold) | set(predicted)):
        precision = _ratio(correct[status], predicted[status])
        recall = _ratio(correct[status], gold[status])
        f1 = _ratio(2 * correct[status], gold[status] + predicted[status])
        figures[status] = {
            "gold": gold[status],
            "predicted": predicted[status],
            "correct": correct[status],
            "precision": precision,
            "recall": recall,
            "f1": f1,
        }
    return figures


def _headline(rows: list[dict]) -> dict[str, float | None]:
    f1 = [r["goal_detection_f1"] for r in rows]
    figures = {
        "goal_detection_f1": float(np.mean(f1)) if f1 else None,
        "conditional_status_accuracy": _ratio(
            sum(r["status_correct"] for r in rows), sum(r["status_total"] for r in rows)
        ),
    }
    for status, cell in per_status(rows).items():
        figures[f"{status}_recall"] = cell["recall"]
    return figures


def bootstrap_intervals(rows: list[dict], resamples: int = 1000, seed: int = 0) -> dict:
    """95% percentile intervals of the headline figures over dialogue resamples.

    Args:
        rows (`list[dict]`): Per-dialogue rows (`goal_detection_f1`, `status_correct`,
            `status_total`, `status_pairs`).
        resamples (`int`): Number of resamples.
        seed (`int`): Seed of the resampling.

    Returns:
        `dict`: figure -> `[low, high]` (`None` where a figure is undefined on most resamples:
        a status no resample has).
    """
    samples: dict[str, list[float]] = {name: [] for name in _headline(rows)}
    for index in resample_indices(len(rows), resamples, seed):
        drawn = [rows[i] for i in index]
        for name, value in _headline(drawn).items():
            if name in samples and value is not None:
                samples[name].append(value)
    return {
        name: percentile_interval(v, LEVEL) if len(v) * 2 >= resamples else None
        for name, v in samples.items()
    }
