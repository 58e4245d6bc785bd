"""L-2 stop-on-first-error scoring: hand-computed cases, gold-vs-gold on the catalog's gold
workflows, controlled corruptions with computable effects, and `evaluate.load`."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.l2 import L2Step, score_l2, step_correct
from evaluators.step_scoring import GoldAction
from mads_bench.catalog import domain_names, load_domain
from mads_bench.loading import CatalogError
from mads_bench.pre_act import Action
from tests.rewards.conftest import step

REPO = Path(__file__).resolve().parents[3]
TOOL, SAY = GoldAction("tool", "get_order", {}), GoldAction("say", say="ok")


def test_step_correct_name_tolerance() -> None:
    # case-insensitive, one edit tolerated, two edits not, arguments ignored
    assert step_correct(Action.tool("GET_ORDER", {"x": 1}), TOOL)
    assert step_correct(Action.tool("get_ordr"), TOOL)
    assert not step_correct(Action.tool("gt_ordr"), TOOL)
    assert step_correct(Action.tool("gt_ordr"), TOOL, max_edit_distance=2)
    # type mismatch and unreadable predictions are wrong
    assert not step_correct(Action.say("hi"), TOOL) and not step_correct(None, SAY)


def test_hand_computed_conversations() -> None:
    ok_tool, ok_say, bad = Action.tool("get_order"), Action.say("x"), Action.tool("refund")
    steps = [
        # c1, 3 steps, error at index 2 -> 2/3
        L2Step("c1", ok_tool, TOOL, "bank", "normal"),
        L2Step("c1", ok_say, SAY, "bank", "normal"),
        L2Step("c1", bad, TOOL, "bank", "normal"),
        # c2, wrong first step -> 0/1, the later correct steps are not attempted
        L2Step("c2", ok_say, TOOL, "bank", "unhappy"),
        L2Step("c2", ok_say, SAY, "bank", "unhappy"),
        # c3, 1 step, correct -> 1
        L2Step("c3", ok_say, SAY, "shop", "unhappy"),
        # c4, missing prediction -> 0
        L2Step("c4", None, SAY, "shop", "normal"),
    ]
    report = score_l2(steps)
    scores = {c.conversation_id: (c.correct, c.attempted) for c in report.conversations}
    assert scores == {"c1": (2, 3), "c2": (0, 1), "c3": (1, 1), "c4": (0, 1)}
    # mean of 2/3, 0, 1, 0 (conversations weigh the same whatever their length)
    assert report.overall["success_rate"] == pytest.approx((2 / 3 + 1) / 4)
    assert report.overall["fully_correct_rate"] == 0.25 and report.overall["n_steps"] == 7
    assert report.by_domain["bank"]["success_rate"] == pytest.approx(1 / 3)
    assert report.by_domain["shop"]["success_rate"] == 0.5
    assert report.by_complexity["normal"]["success_rate"] == pytest.approx(1 / 3)
    assert report.by_complexity["unhappy"]["success_rate"] == 0.5
    assert "| domain: shop | 2 | 2 | 0.5000 | 0.5000 |" in report.to_markdown()


def test_edge_cases() -> None:
    # no steps at all
    empty = score_l2([])
    assert empty.overall["success_rate"] is None and empty.overall["n_conversations"] == 0
    # inconsistent metadata inside one conversation is an error naming it
    with pytest.raises(ValueError, match="conversation 'c' has several domains"):
        score_l2([L2Step("c", None, SAY, "a"), L2Step("c", None, SAY, "b")])


def _gold_trajectories() -> list[tuple[str, str, str, list[GoldAction]]]:
    """Each hand-written scenario's gold steps: its gold tool calls, then a closing say.

    Domain packs that do not load (being edited) are left out: this tests L-2, not the catalog.
    """
    scenarios = []
    for name in domain_names():
        try:
            scenarios.extend(load_domain(name).scenarios)
        except CatalogError:
            continue
    trajectories = []
    for scenario in scenarios:
        golds = [GoldAction("tool", call.name, call.arguments) for call in scenario.gold_workflow]
        golds.append(GoldAction("say", say=f"Done: {scenario.objective}"))
        trajectories.append((scenario.id, scenario.domain, scenario.complexity, golds))
    return trajectories


def _render(gold: GoldAction) -> str:
    body = gold.say if gold.type == "say" else (gold.tool_name, gold.tool_arguments)
    return step(gold.type, body)


def _steps(trajectories, corrupt: dict[str, int] | None = None) -> list[L2Step]:
    corrupt = corrupt or {}
    steps = []
    for cid, domain, complexity, golds in trajectories:
        for index, gold in enumerate(golds):
            prediction = _render(gold)
            if corrupt.get(cid) == index:  # flip the action type: a certain error
                prediction = step("say", "Sorry.") if gold.type == "tool" else _render(TOOL)
            steps.append(L2Step(cid, prediction, gold, domain, complexity))
    return steps


def test_gold_scores_one_and_corruptions_lower_it_exactly() -> None:
    trajectories = _gold_trajectories()
    assert len(trajectories) >= 20, "the catalog's hand-written scenarios are missing"
    # gold against itself: every conversation, domain and complexity scores 1.0
    report = score_l2(_steps(trajectories))
    assert report.overall["success_rate"] == 1.0
    assert all(v["success_rate"] == 1.0 for v in report.by_domain.values())
    # corrupt step k of a few conversations: each drops from 1 to k / (k + 1)
    lengths = {cid: len(golds) for cid, _, _, golds in trajectories}
    corrupt = {cid: (i * 2) % lengths[cid] for i, (cid, *_) in enumerate(trajectories[:9])}
    report = score_l2(_steps(trajectories, corrupt))
    expected = 1.0 - sum(1 / (k + 1) for k in corrupt.values()) / len(trajectories)
    assert report.overall["success_rate"] == pytest.approx(expected)
    for conversation in report.conversations:
        k = corrupt.get(conversation.conversation_id)
        assert conversation.score == (1.0 if k is None else k / (k + 1))


def test_evaluate_module_loads_offline() -> None:
    evaluate = pytest.importorskip("evaluate")
    l2 = evaluate.load(str(REPO / "evaluators" / "l2"))
    refs = [
        {"conversation_id": "a", "action_type": "tool", "tool_name": "get_order"},
        {"conversation_id": "a", "action_type": "say", "tool_name": ""},
        {"conversation_id": "b", "action_type": "say", "tool_name": ""},
    ]
    preds = [step("tool", ("Get_Order", {})), step("tool", ("x", {})), "garbage"]
    out = l2.compute(predictions=preds, references=refs, complexities=["normal"] * 3)
    # a: error at step 1 -> 1/2; b: error at step 0 -> 0
    assert out["conversation_scores"] == {"a": 0.5, "b": 0.0} and out["success_rate"] == 0.25
    assert out["by_complexity"]["normal"]["n_conversations"] == 2
