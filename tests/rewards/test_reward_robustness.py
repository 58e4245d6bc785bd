"""Every registered reward survives hostile completions, prompts and dataset columns.

TRL's contract is ``f(completions, **kwargs) -> list[float | None]``, and one exception loses
the whole batch: a fuzz run lost 53 of 100 batches to a lone surrogate reaching the MiniLM
tokenizer, and ``sage`` raised on plain-string prompts. Each batch below goes to every reward
of `REWARD_FUNCS` made for step rollouts (the real MiniLM included) with every column TRL
would pass, and each value must be None or a finite float in the reward's documented range.
The conversation rewards read the rollout's own summaries, not model text; their ranges are
checked in `test_conversation_rewards.py`.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mads_bench.embedding import SentenceEncoder
from rewards import REWARD_FUNCS, make_semantic_reward
from rewards._common import MAX_ENCODER_CHARS
from rewards.sage_penalty import sage_penalty_reward
from tests.rewards.conftest import HashEncoder
from tests.rewards.test_reward_properties import FRAGMENTS

STEP_REWARDS = {
    name: f for name, f in REWARD_FUNCS.items() if getattr(f, "rollout", "step") == "step"
}

RANGES = {  # reward name -> documented (lowest, highest) value
    "action_type": (0.0, 1.0),
    "tool_call": (0.0, 1.0),
    "tool_name": (0.0, 1.0),
    "tool_arguments": (0.0, 1.0),
    "tool_choice": (0.0, 1.0),
    "tool_argument_overlap": (0.0, 1.0),
    "semantic": (0.0, 1.0),
    "pre_act_format": (0.0, 1.0),
    "mads_total": (0.0, 3.0),
    "sage": (-1.0, 0.0),
}
MB = 1 << 20
SYSTEM = {"role": "system", "content": "You are a mock shop assistant."}
USER = {"role": "user", "content": "Hello, please cancel my order O1 now"}
SAY_GOLD = ("say", None, None, "Your order O1 is cancelled.")
TOOL_GOLD = ("tool", "cancel_order", '{"order_id": "O1"}', None)


def say(text: str) -> str:
    """A Pre-Act say step."""
    return f'<think>t</think><action type="say">{text}</action>'


def call(arguments: str) -> str:
    """A cancel_order call with ``arguments`` as written (raw JSON text)."""
    body = f'{{"name": "cancel_order", "arguments": {arguments}}}'
    return f'<think>t</think><action type="tool">{body}</action>'


TEXTS = {
    "lone high surrogate": say("Your order \ud800 is cancelled."),
    "lone low surrogate mid-argument": call('{"order_id": "O\udfff1"}'),
    "escaped lone surrogate in JSON": call('{"order_id": "\\ud800"}'),
    "NUL": say("Your order\x00 is cancelled."),
    "escaped NUL in JSON": call('{"order_id": "O1\\u0000"}'),
}
BIG_TEXTS = {  # plain strings only, to keep the test fast
    "1 MB say": say("cancelled " * (MB // 10)),
    "1 MB argument": call(json.dumps({"order_id": "O" * MB})),
    "1 MB say with surrogates and NUL": say("is cancelled \ud800\x00\udfff " * (MB // 18)),
}
COMPLETIONS = {
    **{f"{name} (str)": text for name, text in TEXTS.items()},
    **{f"{name} (messages)": [{"role": "assistant", "content": t}] for name, t in TEXTS.items()},
    **BIG_TEXTS,
    "text parts with a surrogate": [
        {"role": "assistant", "content": [{"type": "text", "text": TEXTS["lone high surrogate"]}]}
    ],
    "empty list": [],
    "content None": [{"role": "assistant", "content": None}],
    "content int": [{"role": "assistant", "content": 7}],
    "a dict": {"role": "assistant", "content": say("Hi")},
    "None": None,
}
PROMPTS = {
    "messages": [SYSTEM, USER],
    "plain string": "Hello, please cancel my order O1 now",
    "None": None,
    "empty list": [],
    "list of strings": ["Hello"],
    "message without role": [{"content": "Hello"}],
    "content None, int and parts": [
        {"role": "system", "content": None},
        {"role": "user", "content": 7},
        {"role": "user", "content": [{"type": "text", "text": "cancel O1"}, None]},
    ],
    "surrogates and NUL": [{"role": "user", "content": "cancel \ud800 O1\x00 \udfff"}],
    "1 MB user message": [SYSTEM, {"role": "user", "content": "cancel O1 " * (MB // 10)}],
}
READABLE_PROMPTS = {  # SAGE reads these as conversations (skipping messages of no role)
    "messages",
    "empty list",
    "message without role",
    "content None, int and parts",
    "surrogates and NUL",
    "1 MB user message",
}
GOLD_ROWS = {
    "say": SAY_GOLD,
    "tool": TOOL_GOLD,
    "no gold": (None, None, None, None),
    "arguments not JSON": ("tool", "cancel_order", "{not json", None),
    "arguments a JSON list": ("tool", "cancel_order", "[1]", None),
    "arguments nested too deep": ("tool", "cancel_order", "[" * 100_000, None),
    "arguments an int": ("tool", "cancel_order", 5, None),
    "tool name None": ("tool", None, "{}", None),
    "tool name int": ("tool", 5, "{}", None),
    "say None": ("say", None, None, None),
    "say int": ("say", None, None, 5),
    "say with surrogate and NUL": ("say", None, None, "Your order \ud800 is\x00 cancelled."),
    "1 MB say": ("say", None, None, "cancelled " * (MB // 10)),
    "unknown action type": ("answer", None, None, "Hi"),
    "action type a list": (["tool"], "cancel_order", "{}", None),
}
USABLE_GOLD = {"say", "tool", "say with surrogate and NUL", "1 MB say"}
GOLD_REWARDS = {"action_type", "tool_call", "tool_name", "tool_arguments", "semantic", "mads_total"}
DOMAINS = ["mock", None, 5, "", "no_such_domain"]
STEP_INDICES = [0, None, "0", True, -1]


def columns(rows: list[tuple[Any, Any, Any, Any]], **extra: list[Any]) -> dict[str, list[Any]]:
    """Gold columns from ``(action_type, tool_name, tool_arguments, say)`` rows, plus ``extra``."""
    names = ("gold_action_type", "gold_tool_name", "gold_tool_arguments", "gold_say")
    return {name: [row[i] for row in rows] for i, name in enumerate(names)} | extra


def check(name: str, completions: list[Any], kwargs: dict[str, list[Any]]) -> list[Any]:
    """Call reward ``name`` as TRL does and assert one valid value per completion."""
    values = STEP_REWARDS[name](completions=completions, **kwargs)
    low, high = RANGES[name]
    assert isinstance(values, list) and len(values) == len(completions), name
    for value in values:
        assert value is None or (type(value) is float and math.isfinite(value)), (name, value)
        assert value is None or low <= value <= high, (name, value)
    return values


def none_rows(name: str, kwargs: dict[str, list[Any]], n: int) -> list[bool]:
    """Where reward ``name`` gives None on a plain, unreadable completion (no encoder runs):
    None depends on the row's columns, never on the completion."""
    return [v is None for v in check(name, ["no action here"] * n, kwargs)]


def test_every_registered_reward_has_a_range() -> None:
    # a new reward must state its range here, so the cases below cover it too
    assert set(RANGES) == set(STEP_REWARDS)
    assert GOLD_REWARDS < set(STEP_REWARDS)


@pytest.mark.parametrize("name", sorted(STEP_REWARDS))
def test_hostile_completions(name: str, minilm_path) -> None:
    # each completion once on a say row and once on a tool row, with a readable prompt
    completions = [c for c in COMPLETIONS.values() for _ in range(2)]
    n = len(completions)
    kwargs = columns(
        [SAY_GOLD, TOOL_GOLD] * (n // 2),
        prompts=[[SYSTEM, USER]] * n,
        domain=["mock"] * n,
        step_index=[0] * n,
    )
    values = check(name, completions, kwargs)
    assert [v is None for v in values] == none_rows(name, kwargs, n)


@pytest.mark.parametrize("name", sorted(STEP_REWARDS))
def test_hostile_prompts_and_domains(name: str, minilm_path) -> None:
    # every prompt shape with every domain value, alternately for a say and a tool call (the
    # readable messages on "mock" come once more, to be scored with both)
    cases = [(p, d) for p in PROMPTS for d in DOMAINS] + [("messages", "mock")]
    n = len(cases)
    steps = [say("Your order O1 is cancelled."), call('{"order_id": "O7"}')]
    completions = [steps[i % 2] for i in range(n)]
    kwargs = columns(
        [(SAY_GOLD, TOOL_GOLD)[i % 2] for i in range(n)],
        prompts=[PROMPTS[p] for p, _ in cases],
        domain=[d for _, d in cases],
        step_index=[STEP_INDICES[i % len(STEP_INDICES)] for i in range(n)],
    )
    values = check(name, completions, kwargs)
    if name == "sage":  # scored only on a readable conversation of a known domain
        assert [v is not None for v in values] == [
            p in READABLE_PROMPTS and d == "mock" for p, d in cases
        ]
    else:  # the others ignore prompts and domain
        assert [v is None for v in values] == none_rows(name, kwargs, n)


@pytest.mark.parametrize("name", sorted(STEP_REWARDS))
def test_hostile_gold_columns(name: str, minilm_path) -> None:
    # every gold row against a say and a tool call; a malformed row is a data bug: None
    keys = [key for key in GOLD_ROWS for _ in range(2)]
    n = len(keys)
    completions = [say("Your order O1 is cancelled."), call('{"order_id": "O1"}')] * (n // 2)
    kwargs = columns(
        [GOLD_ROWS[key] for key in keys], prompts=[[SYSTEM, USER]] * n, domain=["mock"] * n
    )
    values = check(name, completions, kwargs)
    if name in GOLD_REWARDS:
        assert all(v is None for v, key in zip(values, keys, strict=True) if key not in USABLE_GOLD)
    if name in ("action_type", "mads_total"):  # they apply to every usable gold row
        assert all(v is not None for v, key in zip(values, keys, strict=True) if key in USABLE_GOLD)


def test_encoder_never_reads_more_than_the_cap() -> None:
    # a 1 MB say reaches the encoder cut to MAX_ENCODER_CHARS, so it costs what 64k chars do
    class Spy(HashEncoder):
        def encode(self, texts: list[str], **kwargs: Any):
            self.longest = max(len(t) for t in texts)
            return super().encode(texts, **kwargs)

    spy = Spy()
    reward = make_semantic_reward("spy", similarity=SentenceEncoder("spy", encoder=spy))
    big = "cancelled " * (MB // 10)
    values = reward([say(big)], **columns([("say", None, None, big)]))
    assert spy.longest == MAX_ENCODER_CHARS and values == [pytest.approx(1.0)]


def test_sage_plain_string_prompt_does_not_apply() -> None:
    # TRL's standard format: no roles, so no evidence SAGE can read (used to raise)
    assert sage_penalty_reward([say("Done.")], prompts=["Cancel O1"], domain=["mock"]) == [None]


HOSTILE_TEXT = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.text(st.characters(categories=["Cs", "Cc", "Ll", "Nd", "Po", "Zs"]), max_size=6),
    ),
    max_size=12,
).map("".join)
STEP = st.one_of(
    st.builds(say, HOSTILE_TEXT),
    st.builds(lambda v: call(json.dumps({"order_id": v}, ensure_ascii=False)), HOSTILE_TEXT),
)
CONTENT = st.one_of(
    STEP,
    HOSTILE_TEXT,
    st.none(),
    st.integers(),
    st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": STEP}), max_size=2),
)
MESSAGES = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["system", "user", "assistant", "tool", 5]), "content": CONTENT}
    ),
    max_size=3,
)
ROW = st.fixed_dictionaries(  # valid values drawn often enough to reach the encoders
    {
        "completions": st.one_of(
            STEP, HOSTILE_TEXT, MESSAGES, st.none(), st.dictionaries(st.text(), CONTENT)
        ),
        "prompts": st.one_of(MESSAGES, HOSTILE_TEXT, st.none()),
        "gold_action_type": st.sampled_from(["say", "tool", "say", "tool", None, "answer", 5]),
        "gold_tool_name": st.one_of(
            st.just("cancel_order"), st.none() | st.integers() | HOSTILE_TEXT
        ),
        "gold_tool_arguments": st.one_of(
            st.sampled_from(['{"order_id": "O1"}', "{not json", "[1]", None]), HOSTILE_TEXT
        ),
        "gold_say": st.one_of(HOSTILE_TEXT, st.none() | st.integers()),
        "domain": st.sampled_from(["mock", *DOMAINS]),
        "step_index": st.one_of(st.none(), st.integers(), HOSTILE_TEXT, st.booleans()),
    }
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ROW, min_size=1, max_size=4))
def test_random_hostile_batches(minilm_path, batch: list[dict[str, Any]]) -> None:
    # random completions, prompts and columns (lone surrogates and NUL included) never break
    # any reward, and None still depends on the row's columns only, never on the completion
    kwargs = {key: [row[key] for row in batch] for key in batch[0]}
    completions = kwargs.pop("completions")
    for name in STEP_REWARDS:
        values = check(name, completions, kwargs)
        assert [v is None for v in values] == none_rows(name, kwargs, len(batch)), name
