"""Scoring SAGE verdicts against labels (sage.md, Metrics and Appendix H).

* Full-coverage scoring: ``failure`` is the positive prediction; ``undecided`` → acceptable.
* Precision / recall / F1 overall, and per failure class (a turn predicted class c when its
  verdict is a failure naming c) plus per-class detection recall (caught as a failure at all).
* 95% percentile bootstrap CIs over turns (10,000 resamples, seed 0) and a paired bootstrap of
  ΔF1 between two verdict sets on the same resampled turns, with a two-sided p-value (twice
  the smaller tail probability of ΔF1 taking either sign); the resampling, the interval and
  the p-value are :mod:`evaluators.bootstrap`'s, this module only supplies F1.
* Selective F1 at 100/90/80% coverage: turns ranked by their minimum decision margin, the
  least confident declined.

Example:
    >>> prf([True, False, True], [True, True, False])
    (0.5, 0.5, 0.5)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evaluators.bootstrap import percentile_interval, resample_indices, two_sided_p
from evaluators.sage.records import FAILURE_CLASSES, TurnLabel, Verdict

BOOTSTRAP_RESAMPLES = 10_000


def prf(gold: Sequence[bool], pred: Sequence[bool]) -> tuple[float, float, float]:
    """Precision, recall and F1 of the positive class (0.0 where undefined)."""
    g, p = np.asarray(gold, bool), np.asarray(pred, bool)
    tp, fp, fn = int((g & p).sum()), int((~g & p).sum()), int((g & ~p).sum())
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return precision, recall, f1


def _f1_resamples(gold: np.ndarray, pred: np.ndarray, index: np.ndarray) -> np.ndarray:
    g, p = gold[index], pred[index]
    tp = (g & p).sum(1)
    wrong = (g ^ p).sum(1)
    return np.where(tp > 0, 2 * tp / np.maximum(1, 2 * tp + wrong), 0.0)


def bootstrap_f1_ci(
    gold: Sequence[bool], pred: Sequence[bool], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
) -> tuple[float, float]:
    """95% percentile bootstrap CI of F1 over turns."""
    g, p = np.asarray(gold, bool), np.asarray(pred, bool)
    low, high = percentile_interval(_f1_resamples(g, p, resample_indices(len(g), resamples, seed)))
    return low, high


def paired_f1_bootstrap(
    gold: Sequence[bool],
    pred_a: Sequence[bool],
    pred_b: Sequence[bool],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> dict[str, float]:
    """ΔF1 = F1(a) − F1(b) on the same resampled turns: point, 95% CI and two-sided p."""
    g = np.asarray(gold, bool)
    a, b = np.asarray(pred_a, bool), np.asarray(pred_b, bool)
    index = resample_indices(len(g), resamples, seed)
    delta = _f1_resamples(g, a, index) - _f1_resamples(g, b, index)
    low, high = percentile_interval(delta)
    return {
        "delta_f1": prf(g, a)[2] - prf(g, b)[2],
        "ci_low": low,
        "ci_high": high,
        "p_value": two_sided_p(delta),
    }


def selective_f1(
    gold: Sequence[bool], pred: Sequence[bool], margins: Sequence[float], coverage: float
) -> float:
    """F1 on the most confident ``coverage`` share of turns (stable order on ties)."""
    order = np.argsort(-np.asarray(margins, float), kind="stable")
    keep = order[: max(1, round(coverage * len(order)))]
    return prf(np.asarray(gold, bool)[keep], np.asarray(pred, bool)[keep])[2]


def align(labels: list[TurnLabel], verdicts: list[Verdict]) -> list[tuple[TurnLabel, Verdict]]:
    """Pair labels and verdicts by ``(dialogue_id, turn_id)``; every label needs a verdict."""
    by_key = {(v.dialogue_id, v.turn_id): v for v in verdicts}
    missing = [
        (lb.dialogue_id, lb.turn_id) for lb in labels if (lb.dialogue_id, lb.turn_id) not in by_key
    ]
    if missing:
        raise ValueError(f"{len(missing)} labelled turns have no verdict, e.g. {missing[0]}")
    return [(lb, by_key[(lb.dialogue_id, lb.turn_id)]) for lb in labels]


def report(
    labels: list[TurnLabel],
    verdicts: list[Verdict],
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[str, Any]:
    """Every figure of a SAGE run against labels (full coverage unless said otherwise)."""
    pairs = align(labels, verdicts)
    gold = [lb.label == "failure" for lb, _ in pairs]
    pred = [v.verdict == "failure" for _, v in pairs]
    p, r, f1 = prf(gold, pred)
    low, high = bootstrap_f1_ci(gold, pred, resamples, seed)
    per_class = {}
    for c in FAILURE_CLASSES:
        gc = [lb.failure_class == c for lb, _ in pairs]
        pc = [v.verdict == "failure" and c in v.failure_classes for _, v in pairs]
        caught = [pr for g, pr in zip(gc, pred, strict=True) if g]
        cp, cr, cf = prf(gc, pc)
        per_class[c] = {
            "n": sum(gc),
            "precision": cp,
            "recall": cr,
            "f1": cf,
            "detection_recall": sum(caught) / len(caught) if caught else 0.0,
        }
    stages: dict[str, int] = {}
    for _, v in pairs:
        for k, n in v.stages.items():
            stages[k] = stages.get(k, 0) + n
    total = max(1, sum(stages.values()))
    latency = np.asarray([v.latency_s for _, v in pairs], float)
    margins = [v.margin for _, v in pairs]
    return {
        "n": len(pairs),
        "n_failure": sum(gold),
        "precision": p,
        "recall": r,
        "f1": f1,
        "f1_ci95": [low, high],
        "per_class": per_class,
        "undecided_rate": sum(v.verdict == "undecided" for _, v in pairs) / max(1, len(pairs)),
        "stage_share": {k: n / total for k, n in sorted(stages.items())},
        "selective_f1": {
            f"{int(c * 100)}%": selective_f1(gold, pred, margins, c) for c in (1.0, 0.9, 0.8)
        },
        "latency_p50_s": float(np.percentile(latency, 50)) if len(latency) else 0.0,
        "latency_p95_s": float(np.percentile(latency, 95)) if len(latency) else 0.0,
    }


def format_report(rep: dict[str, Any], title: str = "SAGE") -> str:
    """A markdown rendering of `report`."""
    lo, hi = rep["f1_ci95"]
    lines = [
        f"### {title}",
        "",
        f"n={rep['n']} ({rep['n_failure']} failures) · P {rep['precision']:.3f} · "
        f"R {rep['recall']:.3f} · **F1 {rep['f1']:.3f}** [95% CI {lo:.3f}, {hi:.3f}] · "
        f"undecided {rep['undecided_rate']:.1%} · latency p50 {rep['latency_p50_s'] * 1e3:.1f} ms,"
        f" p95 {rep['latency_p95_s'] * 1e3:.1f} ms",
        "",
        "| class | n | precision | recall | F1 | detection recall |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c, m in rep["per_class"].items():
        lines.append(
            f"| {c} | {m['n']} | {m['precision']:.3f} | {m['recall']:.3f} | "
            f"{m['f1']:.3f} | {m['detection_recall']:.3f} |"
        )
    shares = ", ".join(f"{k} {v:.1%}" for k, v in rep["stage_share"].items())
    selective = ", ".join(f"@{k} {v:.3f}" for k, v in rep["selective_f1"].items())
    lines += ["", f"criteria decided per stage: {shares}", f"selective F1: {selective}"]
    return "\n".join(lines)
