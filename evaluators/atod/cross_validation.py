"""K-fold cross-validation of the memory tracker's thresholds on gold ATOD dialogues.

The tracker has three thresholds (existence match, intent with and without a domain word).
`cross_validate` splits the dialogues into ``folds`` by a seeded shuffle; for each fold it picks
the grid setting with the best objective (mean of strict goal-detection F1 and strict status
accuracy) on the other folds, tracks the fold's dialogues with it, and scores the pooled
held-out predictions in both modes. The figures are therefore never tuned on the dialogues they
are measured on.

Every setting tracks every dialogue once; both the tracker's and the scorer's embeddings are
cached across settings, so a grid costs little more than one run per setting. The scorer always
matches goals with MiniLM, whichever encoder the tracker reads.

Example:
    >>> result = cross_validate(load_dialogues("medium_dev.json"))  # doctest: +SKIP
    >>> result["strict"]["goal_detection_f1"], result["folds"][0]["settings"]  # doctest: +SKIP
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable

import numpy as np

from evaluators.atod.matching import EmbedFn, minilm_embedder
from evaluators.atod.predictions import prediction_dialogue
from evaluators.atod.report import score_dialogues
from evaluators.atod.tracker import DEFAULT_ENCODERS, MemoryTracker, settings_for
from mads_bench.atod_data import Dialogue, strip_gold

GRID: dict[str, tuple[float, ...]] = {
    "threshold": (0.40, 0.50),
    "intent_threshold": (0.35, 0.45, 0.55),
    "unnamed_intent_threshold": (0.50, 0.60, 0.70),
}


def objective(strict: dict) -> float:
    """What a fold's setting is chosen by: mean of strict detection F1 and status accuracy."""
    return (strict["goal_detection_f1"] + strict["conditional_status_accuracy"]) / 2


def fold_of(dialogues: list[Dialogue], folds: int, seed: int) -> list[int]:
    """The fold of each dialogue: a seeded shuffle dealt round-robin (sizes differ by ≤ 1)."""
    order = list(range(len(dialogues)))
    random.Random(seed).shuffle(order)
    fold = [0] * len(dialogues)
    for rank, index in enumerate(order):
        fold[index] = rank % folds
    return fold


def cross_validate(
    dialogues: list[Dialogue],
    encoders: tuple[str, str] = DEFAULT_ENCODERS,
    folds: int = 5,
    seed: int = 0,
    grid: dict[str, Iterable[float]] | None = None,
    scorer: EmbedFn | None = None,
    progress: Callable[[Iterable], Iterable] = lambda it: it,
) -> dict:
    """Cross-validate the tracker's thresholds for the (memory, intent) ``encoders``.

    Returns:
        `dict`: ``folds`` (per fold: its dialogues, the chosen ``settings`` and their
        objective on the other folds), ``strict`` and ``release`` reports of the pooled
        held-out predictions, ``predictions`` (the held-out prediction per dialogue).

    Raises:
        `ValueError`: With fewer dialogues than folds, fewer than 2 folds, or an encoder
            pair without tracker settings.
    """
    if folds < 2 or len(dialogues) < folds:
        raise ValueError(
            f"need at least 2 folds and a dialogue per fold (got {folds} folds, "
            f"{len(dialogues)} dialogues)"
        )
    settings_for(*encoders)  # a known pair
    grid = grid or GRID
    names = list(grid)
    settings = [
        dict(zip(names, values, strict=True)) for values in itertools.product(*grid.values())
    ]
    memory, intent = (minilm_embedder(name).encode for name in encoders)
    score_embed = scorer or minilm_embedder().encode
    predictions = []
    for setting in progress(settings):
        tracker = MemoryTracker(memory, intent_embedder=intent, **setting)
        predictions.append(
            [prediction_dialogue(d, tracker.track(strip_gold(d))) for d in dialogues]
        )
    fold = fold_of(dialogues, folds, seed)
    held_out = [None] * len(dialogues)
    chosen = []
    for k in range(folds):
        train = [i for i, f in enumerate(fold) if f != k]
        gold = [dialogues[i] for i in train]
        scores = [
            objective(
                score_dialogues([p[i] for i in train], gold, mode="strict", embedder=score_embed)
            )
            for p in predictions
        ]
        best = int(np.argmax(scores))  # the first of equal settings, in grid order
        test = [i for i, f in enumerate(fold) if f == k]
        for i in test:
            held_out[i] = predictions[best][i]
        chosen.append(
            {
                "fold": k,
                "dialogues": [dialogues[i].dialogue_id for i in test],
                "settings": settings[best],
                "train_objective": scores[best],
            }
        )
    reports = {
        mode: score_dialogues(held_out, dialogues, mode=mode, embedder=score_embed)
        for mode in ("strict", "release")
    }
    for report in reports.values():
        report.pop("per_dialogue", None)
    return {
        "encoders": list(encoders),
        "folds": chosen,
        "seed": seed,
        "grid": {k: list(v) for k, v in grid.items()},
        **reports,
        "predictions": held_out,
    }
