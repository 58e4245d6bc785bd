"""Property test: thousands of random and adversarial completions never break any reward.

Every reward must return one ``float`` in its range or ``None`` per completion, never raise,
and give ``None`` exactly on the rows where it does not apply (decided by the gold row only).
The semantic parts use a deterministic stand-in encoder here (negative cosines included, to
check the clamp); `test_semantic_minilm_property` runs the real MiniLM on fewer examples.
"""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
from tests.rewards.conftest import HashEncoder, gold_columns

FRAGMENTS = [
    "<think>",
    "</think>",
    "<plan>",
    "</plan>",
    '<action type="tool">',
    '<action type="say">',
    "<action type='say'>",
    "<action>",
    "</action>",
    "< action type=tool >",
    "{",
    "}",
    '"name"',
    '"arguments"',
    ":",
    ",",
    '"get_order"',
    '{"order_id": "A-1"}',
    "[",
    "]",
    "null",
    "true",
    "1",
    "1.0",
    "NaN",
    "\\u0000",
    "```json",
    "\n",
    " ",
    "Hello",
    "</think",
    "<<",
    "é",
    "\U0001f600",
]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
TOOL_STEP = st.builds(
    lambda name, args: (
        '<think>t</think><action type="tool">'
        + json.dumps({"name": name, "arguments": args})
        + "</action>"
    ),
    st.sampled_from(["get_order", "GET_ORDER", "refund", ""]),
    st.dictionaries(st.sampled_from(["order_id", "qty", "flag"]), JSON_VALUES, max_size=3),
)
SAY_STEP = st.builds(
    lambda text: f'<think>t</think><action type="say">{text}</action>', st.text(max_size=30)
)
TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join),
    TOOL_STEP,
    SAY_STEP,
)
CONTENT = st.one_of(
    TEXT,
    st.none(),
    st.integers(),
    st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), max_size=2),
)
COMPLETION = st.one_of(
    TEXT,
    st.lists(
        st.fixed_dictionaries({"role": st.sampled_from(["assistant", "user"]), "content": CONTENT}),
        max_size=3,
    ),
    st.none(),
    st.integers(),
)
GOLD_ROW = st.one_of(
    st.none(),
    st.tuples(
        st.just("tool"),
        st.sampled_from(["get_order", "refund"]),
        st.dictionaries(st.sampled_from(["order_id", "qty", "flag"]), JSON_VALUES, max_size=3),
    ),
    st.tuples(st.just("say"), st.text(max_size=30)),
)
BATCH = st.lists(st.tuples(COMPLETION, GOLD_ROW), min_size=1, max_size=16)

SIMILARITY = SentenceEncoder("fake", encoder=HashEncoder())
REWARDS = {  # reward -> (range max, gold types where it applies)
    action_type_reward: (1.0, {"tool", "say"}),
    tool_call_reward: (1.0, {"tool"}),
    tool_name_reward: (1.0, {"tool"}),
    tool_arguments_reward: (1.0, {"tool"}),
    make_semantic_reward("fake", similarity=SIMILARITY): (1.0, {"say"}),
    make_mads_total_reward("fake", similarity=SIMILARITY): (3.0, {"tool", "say"}),
}


def check(batch, rewards) -> None:
    completions = [c for c, _ in batch]
    gold = gold_columns([g for _, g in batch])
    for reward, (top, applies) in rewards.items():
        values = reward(completions, **gold)
        assert isinstance(values, list) and len(values) == len(batch), reward.__name__
        for value, (_, row) in zip(values, batch, strict=True):
            if row is None or row[0] not in applies:
                assert value is None, reward.__name__  # not applicable: exactly None
            else:
                assert type(value) is float and 0.0 <= value <= top and math.isfinite(value)
    formats = pre_act_format_reward(completions, step_index=[0] * len(batch))
    assert all(type(v) is float and v in (0.0, 0.5, 1.0) for v in formats)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(BATCH)
def test_rewards_never_raise_and_stay_in_range(batch) -> None:
    # ~3,400 completions per run (400 batches x 8.5 on average) through every reward
    check(batch, REWARDS)
