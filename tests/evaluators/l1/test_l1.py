"""L-1 metrics on hand-built steps with hand-computed values, edge cases, and `evaluate.load`."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.l1 import L1Step, score_l1
from evaluators.step_scoring import GoldAction
from mads_bench.embedding import SentenceEncoder
from tests.rewards.conftest import HashEncoder, step

REPO = Path(__file__).resolve().parents[3]
ORDER = GoldAction("tool", "get_order", {"order_id": "A-1", "email": "x@y.z"})
REFUND = GoldAction("tool", "refund", {"order_id": "A-1", "amount": 5})
SAY = GoldAction("say", say="Your order has shipped.")

STEPS = [
    # 0: exact tool call (1.0 == 1 style normalisation not needed here)
    L1Step(step("tool", ("get_order", ORDER.tool_arguments)), ORDER, domain="shop"),
    # 1: right name, one of two args right; required = ["order_id"] from the schema
    L1Step(
        step("tool", ("refund", {"order_id": "A-1", "amount": 7})),
        REFUND,
        ["order_id"],
        domain="shop",
        complexity="unhappy",
    ),
    # 2: wrong name, exact args (params exact counts it: args are scored apart from the name)
    L1Step(step("tool", ("get_orders", ORDER.tool_arguments)), ORDER, domain="bank"),
    # 3: say instead of a tool
    L1Step(step("say", "Which order?"), ORDER, domain="bank"),
    # 4: say, token F1 = 2PR/(P+R) with P=2/2, R=2/4 -> 2/3
    L1Step(step("say", "Order shipped."), SAY, domain="bank"),
    # 5: tool call on a say step (a false positive for tool-name F1)
    L1Step(step("tool", ("get_order", {})), SAY, domain="bank"),
    # 6: unreadable prediction on a say step
    L1Step("no tags", SAY, domain="bank"),
]


def test_hand_computed_metrics() -> None:
    m = score_l1(STEPS).overall
    # gold tool steps 0-3: predicted tool on 0,1,2 -> 3/4; gold say 4-6: say on 4 -> 1/3
    assert m["action_recall_tool"] == 0.75
    assert m["action_recall_say"] == pytest.approx(1 / 3)
    assert m["action_recall_macro"] == pytest.approx((0.75 + 1 / 3) / 2)
    # TP = steps 0, 1; FP = 2 (wrong name), 5 (tool on say); FN = 2, 3 -> P = R = F1 = 1/2
    assert (m["tool_name_precision"], m["tool_name_recall"], m["tool_name_f1"]) == (0.5, 0.5, 0.5)
    # exact args on steps 0 and 2 of the 4 gold tool steps
    assert m["param_exact_match"] == 0.5
    # completeness: step 0 2/2, step 1 1/1 (schema says only order_id), step 2 2/2, step 3 0
    assert m["required_param_completeness"] == 0.75
    # token F1 over say steps: 2/3, 0, 0
    assert m["answer_token_f1"] == pytest.approx(2 / 9)
    assert m["semantic_similarity"] is None  # no similarity model given
    assert m["unreadable_rate"] == pytest.approx(1 / 7)
    assert m["n_steps"] == 7


def test_breakdowns() -> None:
    report = score_l1(STEPS)
    shop, bank = report.by_domain["shop"], report.by_domain["bank"]
    # shop: steps 0, 1 -> both exact names; bank: steps 2-6
    assert shop["tool_name_f1"] == 1.0 and shop["action_recall_say"] is None
    assert bank["action_recall_tool"] == 0.5 and bank["param_exact_match"] == 0.5
    # only step 1 has a complexity
    assert list(report.by_complexity) == ["unhappy"]
    assert report.by_complexity["unhappy"]["param_exact_match"] == 0.0
    assert "| tool_name_f1 | 0.5000 | 1.0000 |" in report.to_markdown()


def test_semantic_similarity_with_encoder() -> None:
    sim = SentenceEncoder("fake", encoder=HashEncoder())
    steps = [
        L1Step(step("say", "Your order has shipped."), SAY),  # identical: 1
        L1Step(step("tool", ("f", {})), SAY),  # not a say: 0
    ]
    assert score_l1(steps, similarity=sim).overall["semantic_similarity"] == pytest.approx(0.5)


def test_edge_cases() -> None:
    # empty predictions: every metric undefined
    empty = score_l1([]).overall
    assert empty["n_steps"] == 0 and empty["action_recall_macro"] is None
    assert empty["tool_name_f1"] is None and empty["answer_token_f1"] is None
    # no tool steps and no tool predictions: tool metrics undefined, macro = say recall
    says = score_l1([L1Step(step("say", "Your order has shipped."), SAY)]).overall
    assert says["tool_name_f1"] is None and says["param_exact_match"] is None
    assert says["action_recall_macro"] == 1.0 and says["answer_token_f1"] == 1.0
    # a missing prediction (None) is wrong on every metric
    missing = score_l1([L1Step(None, ORDER)]).overall
    assert missing["action_recall_tool"] == 0.0 and missing["tool_name_f1"] == 0.0
    assert missing["unreadable_rate"] == 1.0
    # a tool without required parameters is left out of completeness
    no_args = score_l1([L1Step(step("tool", ("list", {})), GoldAction("tool", "list", {}))])
    assert no_args.overall["required_param_completeness"] is None
    assert no_args.overall["param_exact_match"] == 1.0


def test_evaluate_module_loads_offline() -> None:
    evaluate = pytest.importorskip("evaluate")
    l1 = evaluate.load(str(REPO / "evaluators" / "l1"))
    refs = [
        {"action_type": "tool", "tool_name": "get_order", "tool_arguments": '{"id": 1}', "say": ""},
        {"action_type": "say", "tool_name": "", "tool_arguments": "", "say": "Done."},
    ]
    preds = [step("tool", ("get_order", {"id": 1.0})), step("say", "Done.")]
    out = l1.compute(predictions=preds, references=refs, domains=["a", "b"], similarity_model=None)
    # everything right; the by-domain breakdown comes through
    assert out["param_exact_match"] == 1.0 and out["action_recall_macro"] == 1.0
    assert sorted(out["by_domain"]) == ["a", "b"]
    with pytest.raises(ValueError, match="domains has 1 entries for 2 predictions"):
        l1.compute(predictions=preds, references=refs, domains=["a"], similarity_model=None)


@pytest.mark.slow
def test_mpnet_semantic_similarity() -> None:
    # the paper's L-1 encoder: a paraphrase scores well above an unrelated answer
    sim = SentenceEncoder("mpnet")
    close, far = sim.pairs(["Your package is on its way.", "I like turtles."], [SAY.say] * 2)
    assert close > 0.6 and far < 0.2


@pytest.mark.parametrize(
    "name",
    [
        "evaluators.l1.core",
        "evaluators.l1.l1",
        "evaluators.report",
        "evaluators.l2.core",
        "evaluators.l2.l2",
    ],
)
def test_doctests(name: str) -> None:
    # every docstring example runs (L-2's too: one place for the evaluator doctests)
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0, name
