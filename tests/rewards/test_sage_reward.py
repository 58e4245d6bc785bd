"""The SAGE penalty reward: −fired/checked criteria per step, None where it cannot apply."""

from __future__ import annotations

from rewards import get_reward_funcs
from rewards.sage_penalty import sage_penalty_reward

SYSTEM = {"role": "system", "content": "You are a mock shop assistant.\nTools (...)"}
USER = {"role": "user", "content": "Hello, please cancel my order O1 now"}
CANCEL = '<think>t</think><action type="tool">{"name": "cancel_order", "arguments": %s}</action>'
WRITE_DONE = [
    {"role": "assistant", "content": CANCEL % '{"order_id": "O1"}'},
    {"role": "tool", "content": '{"order_id": "O1", "refund": 12.5}'},
]


def say(text: str) -> str:
    return f'<think>t</think><action type="say">{text}</action>'


def test_penalties(minilm_path):
    completions = [
        say("Your order O1 is cancelled."),  # claim, no cancel call: PC fires, 1 of 1 → −1
        say("Shall I cancel order O1?"),  # a question is no claim: PC checked, not fired → 0
        CANCEL % '{"order_id": "O1"}',  # O1 occurs in the user turn (S1): UV not fired → 0
        CANCEL % '{"order_id": "O7"}',  # O7 was never said nor returned: UV fires → −1
        "no action tags at all",  # unreadable: left to the format rewards → 0
    ]
    prompts = [[SYSTEM, USER]] * len(completions)
    rewards = sage_penalty_reward(completions, prompts=prompts, domain=["mock"] * 5)
    assert rewards == [-1.0, 0.0, 0.0, -1.0, 0.0]


def test_an_unknown_tool_scores_no_better_than_an_invented_id(minilm_path):
    unknown = CANCEL.replace("cancel_order", "refund_everything")
    completions = [
        CANCEL % '{"order_id": "O7"}',  # a real tool, one invented id: UV fires, 1 of 1 → −1
        unknown % '{"order_id": "O7", "card": "4111"}',  # no such tool, invented ids → −1
        unknown % "{}",  # no such tool and nothing to check → −1, not 0
    ]
    rewards = sage_penalty_reward(completions, prompts=[[SYSTEM, USER]] * 3, domain=["mock"] * 3)
    assert rewards == [-1.0, -1.0, -1.0]
    assert max(rewards[1:]) <= rewards[0]


def test_claim_after_the_write_is_not_penalised(minilm_path):
    # the prompt already holds the successful cancel_order call: O(s) holds, PC does not fire
    prompt = [SYSTEM, USER, *WRITE_DONE]
    completions = [
        say("Your order O1 is cancelled."),
        [{"role": "assistant", "content": say("Done.")}],
    ]
    assert sage_penalty_reward(completions, prompts=[prompt] * 2, domain=["mock"] * 2) == [0.0, 0.0]


def test_not_applicable_rows():
    # no prompts, no domain column, an empty or unknown domain: None (does not apply)
    assert sage_penalty_reward([say("Hi")]) == [None]
    assert sage_penalty_reward([say("Hi")], prompts=[[USER]]) == [None]
    rows = sage_penalty_reward([say("Hi"), say("Hi")], prompts=[[USER]] * 2, domain=["", "nope"])
    assert rows == [None, None]


def test_registered_as_sage():
    # GRPO configs list it as "sage"
    assert get_reward_funcs(["sage"]) == [sage_penalty_reward]
