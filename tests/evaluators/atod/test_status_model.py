"""The status model: features, the logistic fit, the shipped weights, and a fit on the sample."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaluators.atod.status_features import (
    FEATURES,
    GoalRecord,
    TurnContext,
    goal_features,
    remember,
)
from evaluators.atod.status_fitting import (
    fit_status_model,
    labelled_rows,
    out_of_fold_predictions,
    undecided_model,
)
from evaluators.atod.status_model import (
    CLASSES,
    MODEL_FILE,
    fit_logistic,
    load_status_model,
)
from evaluators.atod.tracker import MemoryTracker
from mads_bench.atod_data import load_dialogues
from mads_bench.errors import UsageError
from mads_bench.loading import CatalogError


def _on(x: np.ndarray) -> set[str]:
    return {FEATURES[i] for i in np.flatnonzero(x)} - {"bias", "age", "idle", "informational"}


def test_features_see_replacement_moving_on_and_a_done_report():
    record = GoalRecord(first_turn=1, last_touch=1, last_user_touch=1)
    system = TurnContext(turn=2, speaker="SYSTEM", closing=False)
    x = goal_features(
        record,
        ["I've booked your table for 7 PM."],
        True,
        system,
        "Restaurants",
        False,
        "pending",
        0,
    )
    assert _on(x) >= {"system_touched", "system_done_report", "system_cue_completed", "pending"}
    remember(record, x, system)
    assert record.done_before and record.previous["done_report"] == 1.0
    # the user opens another restaurant goal and leaves this one alone: replaced, moved on
    user = TurnContext(
        turn=3, speaker="USER", closing=True, others_touched=True, opened={1: "Restaurants"}
    )
    x = goal_features(record, [], False, user, "Restaurants", False, "pending", 0)
    assert {
        "moved_on",
        "replaced",
        "closing_untouched",
        "closing_done_before",
        "previous_done_report",
    } <= _on(x)
    # the goal just opened is not its own replacement
    fresh = GoalRecord(first_turn=3, last_touch=3, last_user_touch=3)
    assert "replaced" not in _on(
        goal_features(fresh, ["x"], True, user, "Restaurants", False, "open", 1)
    )


def test_logistic_fit_learns_a_rule_and_the_margin_shifts_it():
    rng = np.random.default_rng(0)
    done = rng.integers(0, 2, 200)
    x = np.stack([np.ones(200), done, rng.random(200)], axis=1)
    model = fit_logistic(x, done, ("bias", "done", "noise"), ("stay", "completed"), l2=0.1)
    assert model.decide(np.array([1.0, 1.0, 0.5])) == "completed"
    assert model.decide(np.array([1.0, 0.0, 0.5])) == "stay"
    # a large positive stay margin keeps everything undecided
    assert model.with_margin(50.0).decide(np.array([1.0, 1.0, 0.5])) == "stay"
    assert np.allclose(model.probabilities(x).sum(axis=1), 1.0)


def test_shipped_model_fits_the_features_and_bad_files_are_refused(tmp_path):
    model = load_status_model(features=FEATURES)
    shipped = json.loads(MODEL_FILE.read_text())
    # fitted on the 59 fit dialogues of the recorded split only
    assert len(shipped["fitted"]["dialogue_index"]) == 59
    assert model.classes == CLASSES and model.weights.shape == (4, len(FEATURES))
    path = tmp_path / "model.json"
    model.save(path)
    assert np.allclose(load_status_model(path).weights, model.weights, atol=1e-6)
    with pytest.raises(CatalogError, match="other features"):
        load_status_model(path, features=FEATURES[:-1])
    path.write_text("{}")
    with pytest.raises(CatalogError, match="not a status model file"):
        load_status_model(path)


def test_fit_on_the_sample_decides_statuses(sample_path):
    gold = load_dialogues(sample_path)
    # an undecided model leaves every goal open or pending: a do-nothing status tracker
    tracker = MemoryTracker(status_model=undecided_model())
    state = tracker.track([(t.speaker, t.utterance) for t in gold[0].turns])
    assert {g.status for g in state.goals} <= {"open", "pending"}
    from evaluators.atod.matching import GoalMatcher

    x, y, groups = labelled_rows(gold, tracker, GoalMatcher(mode="strict"))
    # labels come from gold: every sample goal is completed, so some rows are
    assert x.shape[1] == len(FEATURES) and CLASSES.index("completed") in set(y.tolist())
    assert sorted(set(groups.tolist())) == [0, 1, 2]
    model = fit_status_model(gold, rounds=1, folds=3)
    assert model.fitted["dialogue_index"] == [0, 1, 2] and model.fitted["rounds"] == 1
    decided = MemoryTracker(status_model=model).track(
        [(t.speaker, t.utterance) for t in gold[0].turns]
    )
    assert "completed" in {g.status for g in decided.goals}


def test_out_of_fold_predictions_track_each_dialogue_without_it(sample_path):
    gold = load_dialogues(sample_path)
    # three folds of one dialogue: each is tracked by a model fitted on the other two
    held_out = out_of_fold_predictions(gold, folds=3, rounds=1)
    assert [p.dialogue_id for p in held_out] == [d.dialogue_id for d in gold]
    assert all(p.goal_list for p in held_out)
    with pytest.raises(UsageError, match="at least 2 folds"):
        out_of_fold_predictions(gold, folds=1)
