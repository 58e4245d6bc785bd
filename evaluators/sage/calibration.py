"""Calibrating the S2 gates (threshold ``theta`` and abstention half-width ``delta``) on dev only.

Procedure (run by ``mads-bench sage calibrate``; its output is ``DEFAULT_GATES``):

1. Build a calibration slice from the SGD **dev** dialogues of the calibration partition
   (``inject.partition(id) == "calibration"``, one dialogue in five, never used by a bench
   slice), with its own seed.
2. Compile every turn, with acts and text-only, run S1, and score with the offline verifier
   every criterion S1 leaves open.
3. Label those criteria from the injection record: UV/IUV criteria are positive when they
   concern the injected slot/value, WNF/PC criteria when the turn got that injection.
4. Per class: ``theta`` maximises criterion-level F1 of "fires"; ``delta`` (from
   ``BANDS``) maximises the accuracy of the decisions left outside the band minus 0.1 × the
   share of criteria it abstains on (the smallest band wins ties). On SGD dev the errors of
   the offline verifier are mostly confident ones, so the bands come out narrow.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from evaluators.sage.compiler import compile_turn
from evaluators.sage.grounding import Gate, OfflineGroundingVerifier
from evaluators.sage.grounding_scores import gate_key
from evaluators.sage.normalize import value_similarity
from evaluators.sage.records import Criterion, TurnRecord
from evaluators.sage.symbolic import s1_decide
from evaluators.sage.tagger import ActTagger
from evaluators.sage.workflow import WorkflowSpec


def criterion_is_positive(criterion: Criterion, injection: dict[str, Any]) -> bool:
    """Whether a criterion should fire, given the turn's injection record."""
    kind = injection.get("class")
    if kind != criterion.failure_class:
        return False
    if kind == "UV":
        return criterion.args["slot"] == injection["slot"]
    if kind == "IUV" and criterion.args["value"] is None:  # a tagger reading: a slot
        return criterion.args["slot"] == injection["slot"]
    if kind == "IUV":
        return value_similarity(criterion.args["value"], injection["value"]) >= 0.8
    return True


BANDS = (0.02, 0.05, 0.08, 0.10)  # ±0.02 around theta is always too close to call
ABSTENTION_COST = 0.1


def fit_gate(
    scores: list[float],
    positive: list[bool],
    low_fires: bool,
    abstention_cost: float = ABSTENTION_COST,
) -> Gate:
    """Fit ``theta`` (best criterion F1) and ``delta`` (best accuracy net of abstention cost).

    Example:
        >>> fit_gate([0.1, 0.2, 0.9, 0.95], [True, True, False, False], low_fires=True).theta
        0.9
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(positive, dtype=bool)
    if len(s) == 0 or y.all() or not y.any():
        raise ValueError(f"need both positive and negative criteria (got {y.sum()}/{len(y)})")
    best_theta, best_f1 = float(s.mean()), -1.0
    for theta in np.unique(np.round(s, 3)):
        fires = s < theta if low_fires else s > theta
        tp = int((fires & y).sum())
        f1 = 2 * tp / max(1, int(fires.sum()) + int(y.sum()))
        if f1 > best_f1:
            best_theta, best_f1 = float(theta), f1
    best_delta, best_value = 0.0, -1.0
    for band in BANDS:
        decided = [Gate(best_theta, band, low_fires).decide(float(x))[0] for x in s]
        keep = np.array([d is not None for d in decided])
        fires = np.array([bool(d) for d in decided])
        if not keep.any():
            continue
        value = float((fires == y)[keep].mean()) - abstention_cost * float(1 - keep.mean())
        if value > best_value + 1e-9:
            best_delta, best_value = band, value
    return Gate(theta=round(best_theta, 3), delta=best_delta, low_fires=low_fires)


def calibrate(
    spec: WorkflowSpec,
    records: list[TurnRecord],
    injections: list[dict[str, Any]],
    verifier: OfflineGroundingVerifier | None = None,
    tagger: ActTagger | None = None,
) -> tuple[dict[str, Gate], dict[str, dict[str, int]]]:
    """Fit the per-class gates on a calibration slice (the ``-tag`` gates need a tagger).

    Returns:
        `tuple`: The gates and, per class, how many positive/negative criteria were used.
    """
    verifier = verifier or OfflineGroundingVerifier()
    items, labels = [], []
    text_only = [r.without_acts() for r in records]
    tags = tagger.tag(text_only, spec, verifier.encode) if tagger else [None] * len(records)
    for record, bare, tag, injection in zip(records, text_only, tags, injections, strict=True):
        for variant, variant_tags in ((record, None), (bare, tag)):
            for criterion in compile_turn(spec, variant, tags=variant_tags):
                if s1_decide(criterion, variant)[0] is None:
                    items.append((criterion, variant, spec))
                    labels.append(criterion_is_positive(criterion, injection))
    scored = verifier.scores(items)
    gates: dict[str, Gate] = {}
    counts: dict[str, dict[str, int]] = {}
    for kind, default in verifier.gates.items():
        rows = [
            (score, y)
            for (c, _, _), (score, _), y in zip(items, scored, labels, strict=True)
            if gate_key(c) == kind and not math.isnan(score)
        ]
        counts[kind] = {
            "positive": sum(y for _, y in rows),
            "negative": sum(not y for _, y in rows),
        }
        try:
            gates[kind] = fit_gate([r[0] for r in rows], [r[1] for r in rows], default.low_fires)
        except ValueError:
            gates[kind] = default  # too few criteria of this class reach S2: keep the prior
    return gates, counts
