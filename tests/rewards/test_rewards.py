"""Exact values of every reward on hand-built batches (plain text and conversational)."""

from __future__ import annotations

import pytest

from mads_bench.embedding import SentenceEncoder
from rewards import (
    action_type_reward,
    make_mads_total_reward,
    make_semantic_reward,
    pre_act_format_reward,
    tool_arguments_reward,
    tool_call_reward,
    tool_name_reward,
)
from rewards.tool_choice import tool_argument_overlap_reward, tool_choice_reward
from tests.rewards.conftest import gold_columns, step

GOLD = gold_columns(
    [
        ("tool", "get_order", {"order_id": "A-1", "qty": 1}),
        ("tool", "get_order", {"order_id": "A-1", "qty": 1}),
        ("tool", "get_order", {"order_id": "A-1", "qty": 1}),
        ("tool", "get_order", {"order_id": "A-1", "qty": 1}),
        ("say", "Your order has shipped."),
        ("say", "Your order has shipped."),
        None,
    ]
)
COMPLETIONS = [
    step("tool", ("get_order", {"qty": 1.0, "order_id": "A-1"})),  # exact after normalisation
    step("tool", ("Get_Order", {"order_id": "A-1", "qty": 1})),  # name case differs
    step("tool", ("get_order", {"order_id": "a-1", "qty": 1})),  # string value differs
    step("say", "Which order?"),  # wrong type
    step("say", "Your order has shipped."),  # identical say
    "I will not use tags",  # unreadable
    step("say", "anything"),  # row without gold
]


def test_action_type_reward() -> None:
    # tool rows: 3 tool predictions right, the say wrong; say rows: say right, garbage wrong
    assert action_type_reward(COMPLETIONS, **GOLD) == [1.0, 1.0, 1.0, 0.0, 1.0, 0.0, None]


def test_tool_rewards_and_parts() -> None:
    # only row 0 is name- and argument-exact; say rows and the no-gold row are not applicable
    assert tool_call_reward(COMPLETIONS, **GOLD) == [1.0, 0.0, 0.0, 0.0, None, None, None]
    # names compare exactly: "Get_Order" is a different name
    assert tool_name_reward(COMPLETIONS, **GOLD) == [1.0, 0.0, 1.0, 0.0, None, None, None]
    # arguments: 1.0 == 1, key order irrelevant; "a-1" != "A-1"
    assert tool_arguments_reward(COMPLETIONS, **GOLD) == [1.0, 1.0, 0.0, 0.0, None, None, None]


def test_bool_is_not_a_number() -> None:
    # JSON true is not 1, even though Python's True == 1
    gold = gold_columns([("tool", "f", {"flag": True})])
    assert tool_call_reward([step("tool", ("f", {"flag": 1}))], **gold) == [0.0]
    assert tool_call_reward([step("tool", ("f", {"flag": True}))], **gold) == [1.0]


def test_conversational_completions() -> None:
    # TRL's conversational form: a list with one assistant message
    messages = [[{"role": "assistant", "content": c}] for c in COMPLETIONS]
    assert tool_call_reward(messages, **GOLD) == tool_call_reward(COMPLETIONS, **GOLD)
    # content given as text parts is joined
    parts = [[{"role": "assistant", "content": [{"type": "text", "text": COMPLETIONS[0]}]}]]
    assert tool_call_reward(parts, **gold_columns([GOLD_ROW_0])) == [1.0]


GOLD_ROW_0 = ("tool", "get_order", {"order_id": "A-1", "qty": 1})


def test_semantic_and_total_with_fake_encoder(hash_encoder) -> None:
    similarity = SentenceEncoder("fake", encoder=hash_encoder)
    semantic = make_semantic_reward("fake", similarity=similarity)
    values = semantic(COMPLETIONS, **GOLD)
    # tool rows and the no-gold row: None; identical say: cosine 1; unreadable say row: 0
    assert values[:4] == [None] * 4 and values[6] is None
    assert values[4] == pytest.approx(1.0) and values[5] == 0.0
    # one encoder call for the batch: 1 predicted text + 1 distinct gold text
    assert hash_encoder.calls == 1
    semantic(COMPLETIONS, **GOLD)  # gold now cached: still one call per batch
    assert hash_encoder.calls == 2 and len(similarity._cache) == 1

    total = make_mads_total_reward("fake", similarity=similarity)(COMPLETIONS, **GOLD)
    # action + tool + semantic, n/a parts count 0: row 0 = 1+1, rows 1-2 = 1+0, row 3 = 0,
    # row 4 = 1 + cos 1, row 5 = 0, row 6 no gold
    assert total[:4] == [2.0, 1.0, 1.0, 0.0] and total[5] == 0.0 and total[6] is None
    assert total[4] == pytest.approx(2.0)


def test_factory_names() -> None:
    # stable names: TRL logs rewards under __name__
    assert make_semantic_reward().__name__ == "semantic_reward"
    assert make_semantic_reward("mpnet").__name__ == "semantic_reward_mpnet"
    assert make_mads_total_reward("/tmp/My-Model").__name__ == "mads_total_reward_tmp_my_model"


def test_pre_act_format_reward() -> None:
    completions = [
        step("say", "Hi", plan=True),  # clean first step with plan
        step("say", "Hi"),  # step 0 without plan
        step("say", "Hi"),  # later step without plan: clean
        '<think></think><action type="say">Hi</action>',  # empty think
        "<think>t</think><action type='say'>Hi</action>",  # recoverable quoting
        "Hi there",  # no action
        [{"role": "assistant", "content": step("say", "Hi")}],  # conversational
    ]
    assert pre_act_format_reward(completions, step_index=[0, 0, 1, 1, 1, 1, 2]) == [
        1.0,
        0.5,
        1.0,
        0.5,
        0.5,
        0.0,
        1.0,
    ]
    # without step_index the plan is not required
    assert pre_act_format_reward([step("say", "Hi")]) == [1.0]


def test_bad_gold_row_gets_none_and_a_warning(caplog) -> None:
    # a data bug on one row must not crash the run: that row gets None, the log names it
    gold = gold_columns([("tool", "f", {}), ("tool", "f", {})])
    gold["gold_tool_arguments"] = ["{not json", "{}"]
    with caplog.at_level("WARNING", logger="rewards._common"):
        assert tool_call_reward(["x", "x"], **gold) == [None, 0.0]
    assert "1 of 2 rows" in caplog.text
    assert "row 0: gold_tool_arguments is not valid JSON" in caplog.text
    bad_type = {**gold, "gold_action_type": ["answer", "tool"]}
    assert action_type_reward(["x", "x"], **bad_type) == [None, 0.0]
    assert "row 0: gold_action_type must be" in caplog.text


def test_misconfigured_columns_are_a_clear_error() -> None:
    # what every batch repeats (wrong dataset config, wrong column length) raises at once
    with pytest.raises(ValueError, match="gold_action_type"):
        action_type_reward(["x"], prompts=["p"])
    with pytest.raises(ValueError, match="column 'gold_say' has 2 values for 1 completions"):
        action_type_reward(["x"], **{**gold_columns([("say", "Hi")]), "gold_say": ["a", "b"]})


def test_graded_tool_rewards_credit_only_what_the_domain_accepts() -> None:
    gold = gold_columns([("tool", "cancel_order", {"order_id": "O1"})] * 6 + [("say", "Done.")])
    completions = [
        step("tool", ("cancel_order", {"order_id": "O1"})),  # the gold call
        step("tool", ("get_item", {"item_id": "I1"})),  # callable, another tool
        step("tool", ("get_item", {"order_id": "O1"})),  # the schema rejects it
        step("tool", ("cancel_payment", {"order_id": "O1"})),  # hallucinated name
        step("say", "I cancelled order O1."),  # claims it, calls nothing
        "no tags at all",  # unreadable
        step("say", "Done."),  # a say row: the tool rewards do not apply
    ]
    assert tool_choice_reward(completions, domain=["mock"] * 7, **gold) == [
        1.0, 0.5, 0.0, 0.0, 0.0, 0.0, None
    ]  # fmt: skip
    # without a known domain only the gold name earns credit
    assert tool_choice_reward(completions, domain=["nope"] * 7, **gold)[:2] == [1.0, 0.0]
    assert tool_choice_reward(completions, **gold)[:2] == [1.0, 0.0]
    assert tool_argument_overlap_reward(completions, **gold) == [
        1.0, 0.0, 1.0, 1.0, 0.0, 0.0, None
    ]  # fmt: skip


def test_argument_overlap_is_an_f1_over_name_value_pairs() -> None:
    gold = gold_columns([("tool", "f", {"a": 1, "b": "x"})] * 4)
    completions = [
        step("tool", ("f", {"a": 1.0})),  # 1 of 2 gold pairs, nothing extra: 2/3
        step("tool", ("f", {"a": 1, "b": "X"})),  # one value wrong: 1/2
        step("tool", ("f", {"a": 1, "b": "x", "c": 0, "d": 0})),  # two extra pairs: 2/3
        step("tool", ("f", {"a": True, "b": "x"})),  # true is no number: 1/2
    ]
    assert tool_argument_overlap_reward(completions, **gold) == pytest.approx(
        [2 / 3, 1 / 2, 2 / 3, 1 / 2]
    )
