"""Registry resolution and the real MiniLM semantic reward (examples: tests/test_doctests.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from rewards import REWARD_FUNCS, get_reward_func, get_reward_funcs, semantic_reward
from tests.rewards.conftest import gold_columns, step
from tests.rewards.test_reward_properties import BATCH, check


def test_registry_names() -> None:
    # the names a GRPO config lists, mapped to functions with stable names
    assert {"action_type", "tool_call", "semantic", "pre_act_format", "mads_total"} <= set(
        REWARD_FUNCS
    )
    names = [f.__name__ for f in get_reward_funcs(["action_type", "tool_call", "mads_total"])]
    assert names == ["action_type_reward", "tool_call_reward", "mads_total_reward"]
    # a single string is accepted as a one-element list
    assert get_reward_funcs("semantic") == [semantic_reward]


def test_factory_and_dotted_paths() -> None:
    # name:setting builds the factory with that encoder
    assert get_reward_func("mads_total:mpnet").__name__ == "mads_total_reward_mpnet"
    # dotted import path, with "." or ":" before the attribute
    assert get_reward_func("rewards.tool_call.tool_name_reward").__name__ == "tool_name_reward"
    assert get_reward_func("evaluators.step_scoring:token_f1").__name__ == "token_f1"


def test_unknown_names_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown reward 'acton_type'"):
        get_reward_func("acton_type")
    with pytest.raises(ValueError, match="cannot import module 'no_such_pkg'"):
        get_reward_func("no_such_pkg.reward")
    with pytest.raises(ValueError, match="has no callable 'nope'"):
        get_reward_func("rewards.registry.nope")


def test_semantic_minilm_values(minilm_path) -> None:
    completions = [
        step("say", "Your refund has been issued."),
        step("say", "The weather is lovely today."),
        step("tool", ("refund", {})),
    ]
    gold = gold_columns([("say", "We have issued your refund.")] * 3)
    close, far, tool = semantic_reward(completions, **gold)
    # paraphrase scores high, an unrelated sentence low, a tool call on a say row 0
    assert close > 0.8 and far < 0.3 and tool == 0.0


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(BATCH)
def test_minilm_rewards_property(minilm_path, batch) -> None:
    # the same type/range checks with the real encoder on fewer batches
    from rewards import mads_total_reward

    check(batch, {semantic_reward: (1.0, {"say"}), mads_total_reward: (3.0, {"tool", "say"})})
