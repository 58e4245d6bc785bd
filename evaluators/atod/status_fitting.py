"""Fitting the status model on annotated ATOD dialogues (what `mads-bench atod fit` runs).

Labelled (goal, turn) pairs come from the gold per-turn statuses: the tracker reads each
dialogue (speaker and utterance only) and records every goal's features on every turn; its goals
are matched one-to-one to gold goals (`GoalMatcher`, strict); for a matched goal on a turn where
its gold goal was still undecided the turn before, the label is the gold status on that turn if
it is decided (`completed`, `failed`, `abandoned`), else `stay`. Unmatched goals give no rows.

The features depend a little on the statuses the tracker held (which goal a follow-up joins),
so fitting runs in rounds: round 1 tracks with a model that never decides, each later round
with the previous round's model. The L2 penalty is chosen per round from `L2_GRID` by held-out
log-loss over dialogue folds. Last, the decision margin (`StatusModel.stay_margin`) is chosen
from `MARGIN_GRID`: the fit dialogues are tracked with each and the margin with the best mean of
strict and release status accuracy is kept (one number, fitted like the weights on the same
dialogues). Only the dialogues given are read: pass the fit part.

The shipped model's figures on the dialogues it was fitted on are in-sample. How well the
procedure does on fit dialogues it did not see comes from `out_of_fold_predictions`: the fit
part dealt into dialogue folds, each fold tracked with a model fitted (all of the above: rounds,
penalty, margin) on the other folds only.

Example:
    >>> model = fit_status_model(select_part(dev, "fit"))  # doctest: +SKIP
    >>> model.save("evaluators/atod/status_model.json")  # doctest: +SKIP
    >>> held_out = out_of_fold_predictions(select_part(dev, "fit"), folds=5)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from evaluators.atod.cross_validation import fold_of
from evaluators.atod.matching import EmbedFn, GoalMatcher, minilm_embedder
from evaluators.atod.predictions import prediction_dialogue
from evaluators.atod.report import score_dialogues
from evaluators.atod.status_features import FEATURES
from evaluators.atod.status_model import CLASSES, StatusModel, fit_logistic
from evaluators.atod.tracker import DEFAULT_ENCODERS, MemoryTracker, settings_for
from mads_bench.atod_data import Dialogue, Prediction, strip_gold
from mads_bench.atod_lifecycle import status_at
from mads_bench.errors import UsageError

L2_GRID = (0.3, 1.0, 3.0, 10.0, 30.0)
MARGIN_GRID = (-2.5, -2.0, -1.5, -1.0, -0.5, 0.0)
DECIDED_STATUSES = ("completed", "failed", "abandoned")


def undecided_model() -> StatusModel:
    """A model that always answers `stay` (round 1 of the fit)."""
    weights = np.zeros((len(CLASSES), len(FEATURES)), dtype=np.float32)
    weights[CLASSES.index("stay"), FEATURES.index("bias")] = 1.0
    return StatusModel(FEATURES, CLASSES, weights, {"undecided": True})


def labelled_rows(
    dialogues: list[Dialogue], tracker: MemoryTracker, matcher: GoalMatcher
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels (index into `CLASSES`) and dialogue position of every labelled pair."""
    rows, labels, groups = [], [], []
    for position, dialogue in enumerate(dialogues):
        state = tracker.track(strip_gold(dialogue))
        pred = prediction_dialogue(dialogue, state)
        pairs = matcher.match(pred.goal_list, dialogue.goal_list).pairs
        for index, turn, x in state.features:
            if index not in pairs:
                continue
            gold = dialogue.goal_list[pairs[index]]
            if status_at(gold, turn - 1) in DECIDED_STATUSES:
                continue
            now = status_at(gold, turn)
            rows.append(x)
            labels.append(CLASSES.index(now if now in DECIDED_STATUSES else "stay"))
            groups.append(position)
    if not rows:
        raise UsageError("no labelled (goal, turn) pairs: no tracked goal matched a gold goal")
    return np.stack(rows), np.array(labels), np.array(groups)


def held_out_log_loss(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray, l2: float, folds: int, seed: int
) -> float:
    """Mean log-loss of rows whose dialogue was left out of the fit (dialogue folds)."""
    fold = np.array(fold_of(list(range(groups.max() + 1)), folds, seed))[groups]
    total = 0.0
    for k in range(folds):
        train, test = fold != k, fold == k
        model = fit_logistic(x[train], y[train], FEATURES, l2=l2)
        p = model.probabilities(x[test])[np.arange(test.sum()), y[test]]
        total -= float(np.log(np.clip(p, 1e-9, 1)).sum())
    return total / len(y)


def fit_status_model(
    dialogues: list[Dialogue],
    encoders: tuple[str, str] = DEFAULT_ENCODERS,
    rounds: int = 2,
    folds: int = 5,
    seed: int = 0,
    scorer: EmbedFn | None = None,
    progress: Callable[[Iterable], Iterable] = lambda it: it,
) -> StatusModel:
    """Fit the status model on gold ``dialogues`` (see the module docstring).

    Returns:
        `StatusModel`: Weights with a `fitted` record (dialogues, rows per class, penalty,
        held-out log-loss per penalty, rounds, encoders).

    Raises:
        `UsageError`: With fewer dialogues than folds, or no labelled pair.
    """
    if len(dialogues) < folds:
        raise UsageError(f"fitting needs at least {folds} dialogues, got {len(dialogues)}")
    memory, intent = (minilm_embedder(name).encode for name in encoders)
    scorer = scorer or minilm_embedder().encode
    matcher = GoalMatcher(mode="strict", embedder=scorer)

    def tracker(model: StatusModel) -> MemoryTracker:
        return MemoryTracker(
            memory, intent_embedder=intent, status_model=model, **settings_for(*encoders)
        )

    model = undecided_model()
    for _ in progress(range(rounds)):
        x, y, groups = labelled_rows(dialogues, tracker(model), matcher)
        losses = {l2: held_out_log_loss(x, y, groups, l2, folds, seed) for l2 in L2_GRID}
        best = min(losses, key=losses.get)
        model = fit_logistic(
            x,
            y,
            FEATURES,
            l2=best,
            fitted={
                "dialogue_index": sorted(d.dialogue_index for d in dialogues),
                "rows": {c: int((y == i).sum()) for i, c in enumerate(CLASSES)},
                "held_out_log_loss": {str(k): round(v, 5) for k, v in losses.items()},
                "rounds": rounds,
                "folds": folds,
                "seed": seed,
                "encoders": list(encoders),
            },
        )
    accuracy = {
        m: status_accuracy(dialogues, tracker(model.with_margin(m)), scorer) for m in MARGIN_GRID
    }
    best = max(accuracy, key=accuracy.get)  # the first of equal margins, in grid order
    return model.with_margin(
        best, status_accuracy_by_margin={str(k): round(v, 5) for k, v in accuracy.items()}
    )


def status_accuracy(dialogues: list[Dialogue], tracker: MemoryTracker, scorer: EmbedFn) -> float:
    """Mean of strict and release conditional status accuracy of ``tracker`` on ``dialogues``."""
    preds = [prediction_dialogue(d, tracker.track(strip_gold(d))) for d in dialogues]
    reports = [
        score_dialogues(preds, dialogues, mode=m, embedder=scorer) for m in ("strict", "release")
    ]
    return sum(r["conditional_status_accuracy"] for r in reports) / 2


def out_of_fold_predictions(
    dialogues: list[Dialogue],
    encoders: tuple[str, str] = DEFAULT_ENCODERS,
    folds: int = 5,
    seed: int = 0,
    rounds: int = 2,
    scorer: EmbedFn | None = None,
    progress: Callable[[Iterable], Iterable] = lambda it: it,
) -> list[Prediction]:
    """Predictions of each dialogue by a status model fitted without it (dialogue folds).

    Args:
        dialogues (`list[Dialogue]`): Gold dialogues (the fit part).
        folds (`int`): Folds, dealt by a seeded shuffle of the dialogues (`fold_of`).
        seed (`int`): Seed of that shuffle (the inner penalty folds keep `fit_status_model`'s).

    Returns:
        `list[Prediction]`: One per dialogue, in input order, each tracked with the model
        `fit_status_model` fits on the other folds.

    Raises:
        `UsageError`: With fewer than two folds, or fewer dialogues per training set than
            the inner folds need.
    """
    if folds < 2:
        raise UsageError(f"cross-validation needs at least 2 folds, got {folds}")
    memory, intent = (minilm_embedder(name).encode for name in encoders)
    scorer = scorer or minilm_embedder().encode
    fold = fold_of(dialogues, folds, seed)
    predictions: list[Prediction | None] = [None] * len(dialogues)
    for k in progress(range(folds)):
        train = [d for d, f in zip(dialogues, fold, strict=True) if f != k]
        model = fit_status_model(
            train, encoders, rounds=rounds, folds=min(5, len(train)), scorer=scorer
        )
        tracker = MemoryTracker(
            memory, intent_embedder=intent, status_model=model, **settings_for(*encoders)
        )
        for position in (i for i, f in enumerate(fold) if f == k):
            state = tracker.track(strip_gold(dialogues[position]))
            predictions[position] = prediction_dialogue(dialogues[position], state)
    return predictions
