"""Conversation-level GRPO rollouts: token alignment, masks, limits and the outcome rewards.

Policies here are fake token streams or the scripted gold assistant's steps tokenised (so a
rollout can succeed), and, once, the real tiny-lm model through `HFPolicy`.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from mads_bench.catalog import domain_of, load_domain
from mads_bench.errors import UsageError
from mads_bench.models import load_tokenizer, resolve_model
from mads_bench.training.rollout import (
    ChatTokens,
    ConversationRollout,
    HFPolicy,
    RolloutLimits,
    TokenConversation,
    check_reward_modes,
    conversation_rows,
    parse_rollout_key,
    play_rollouts,
)
from rewards import get_reward_funcs, summarise_conversation
from simulation.agents.assistant import ScriptedAssistant
from simulation.runner import RunLimits

TOOL_STEP = (
    "<think>Look the item up.</think>\n<plan>1. Look up I1.</plan>\n"
    '<action type="tool">{"name": "get_item", "arguments": {"item_id": "I1"}}</action>'
)
SAY_STEP = '<think>Tell the user.</think>\n<action type="say">The blue mug costs 12.5.</action>'


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer(str(resolve_model("tiny-lm")))


@pytest.fixture(scope="module")
def chat(tokenizer) -> ChatTokens:
    return ChatTokens(tokenizer)


def mock(scenario_id: str = "mock-cancel-normal"):
    return next(s for s in load_domain("mock").scenarios if s.id == scenario_id)


def runs(mask: list[int], ids: list[int]) -> list[tuple[int, list[int]]]:
    """Consecutive (mask value, ids) runs."""
    out: list[tuple[int, list[int]]] = []
    for value, token in zip(mask, ids, strict=True):
        if out and out[-1][0] == value:
            out[-1][1].append(token)
        else:
            out.append((value, [token]))
    return out


def chat_text(messages) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def test_hand_built_rollout_has_exact_prompt_completion_and_mask_alignment(tokenizer, chat):
    # one fake policy token stream: a tool step, then a say, then the same again (the runner
    # then ends the run: the same say in two consecutive turns is a loop); the generator pads
    # finished rows, as `generate` does after a stop string
    streams = [chat.encode(TOOL_STEP), chat.encode(SAY_STEP)]
    pad = [tokenizer.pad_token_id] * 3
    calls = []

    def policy(contexts, max_new_tokens):
        calls.append(len(contexts))
        return [streams[(len(calls) - 1) % 2] + pad for _ in contexts]

    (rollout,) = play_rollouts([(mock(), 11)], policy, chat, RolloutLimits())
    messages = rollout.trajectory.messages
    assert rollout.trajectory.end_reason == "loop"
    steps = [m for m in messages if m.role == "assistant"]
    assert [m.content for m in steps] == [TOOL_STEP, SAY_STEP, TOOL_STEP, SAY_STEP]
    # prompt: system prompt and the user's opening, with the assistant header
    assert rollout.prompt_ids == chat.encode(
        tokenizer.apply_chat_template(chat_text(messages[:2]), tokenize=False,
                                      add_generation_prompt=True)
    )  # fmt: skip
    # policy runs are exactly the generated streams (padding cut), in order
    pieces = runs(rollout.env_mask, rollout.completion_ids)
    assert [ids for value, ids in pieces if value == 1] == [s for s in streams for _ in (0,)] * 2
    # environment runs are the template text between the steps: end of message, the tool
    # result or user message, the next assistant header; the last one closes the message
    env = [tokenizer.decode(ids) for value, ids in pieces if value == 0]
    assert env[0] == "<|im_end|>\n<|im_start|>tool\n" + messages[3].content + (
        "<|im_end|>\n<|im_start|>assistant\n"
    )
    assert env[1].startswith("<|im_end|>\n<|im_start|>user\n") and env[-1] == "<|im_end|>"
    # and the whole sequence is the chat template of the conversation up to its last step
    last = max(i for i, m in enumerate(messages) if m.role == "assistant")
    text = tokenizer.apply_chat_template(chat_text(messages[: last + 1]), tokenize=False)
    assert rollout.prompt_ids + rollout.completion_ids == chat.encode(text.rstrip("\n"))
    assert calls == [1, 1, 1, 1]  # one generate per round


def play_scripted(chat, scenario, limits):
    """Drive one conversation with the scripted gold assistant's steps as the policy."""
    conversation = TokenConversation(scenario, 5, chat, limits)
    shadow = ScriptedAssistant(scenario, 5, domain=domain_of(scenario))
    while conversation.active:
        step = shadow.respond(conversation.view).content
        conversation.take(chat.encode(step) + [2])
    return conversation.rollout()


def test_scripted_policy_succeeds_and_a_token_capped_one_gets_no_credit(chat):
    scenario = mock()
    full = play_scripted(chat, scenario, RolloutLimits())
    outcome = summarise_conversation(full.trajectory, scenario, max_steps=16)
    assert full.trajectory.end_reason == "done" and outcome["success"] is True
    assert outcome["gold_steps"] == 1.0 and outcome["partial_credit"] == 1.0
    assert full.completion_ids[-1] == 2  # ends with the end of message: TRL sees it terminated
    # the same conversation with too few tokens for it: truncated, counted, no success
    capped = play_scripted(chat, scenario, RolloutLimits(max_tokens=len(full.completion_ids) - 60))
    outcome = summarise_conversation(capped.trajectory, scenario, max_steps=16)
    assert capped.trajectory.end_reason == "truncated" and outcome["truncated"] is True
    assert outcome["success"] is False and outcome["ended"] is False
    assert len(capped.completion_ids) <= len(full.completion_ids) - 60
    assert capped.completion_ids[-1] != 2  # no end of message: TRL counts it as clipped too
    assert get_reward_funcs(["task_success"])[0](["t"], outcome=[outcome]) == [0.0]


def test_the_step_cap_truncates_a_conversation(chat):
    rollout = play_scripted(chat, mock(), RolloutLimits(max_assistant_steps=2))
    steps = [m for m in rollout.trajectory.messages if m.role == "assistant"]
    assert rollout.trajectory.end_reason == "truncated" and len(steps) == 2


def test_group_members_share_the_user_and_backend_seed(chat):
    rows = conversation_rows([mock(), mock("mock-buy-mug-unhappy")], repetitions=2, seed=3)
    keys = [parse_rollout_key(p) for p in rows["prompt"]]
    assert len(set(keys)) == 4 and rows["conversation_seed"] == [k[1] for k in keys]
    stream = chat.encode(SAY_STEP)
    twins = play_rollouts([(mock(), keys[0][1])] * 2, lambda c, n: [stream for _ in c], chat,
                          RolloutLimits())  # fmt: skip
    assert twins[0].trajectory.messages == twins[1].trajectory.messages


def test_a_malformed_policy_follows_the_runners_rule(chat):
    garbage = chat.encode("no tags at all")
    (rollout,) = play_rollouts(
        [(mock(), 1)], lambda c, n: [garbage for _ in c], chat,
        RolloutLimits(run=RunLimits(max_malformed_turns=2)),
    )  # fmt: skip
    steps = [m for m in rollout.trajectory.messages if m.role == "assistant"]
    assert rollout.trajectory.end_reason == "error" and len(steps) == 2
    assert all(m.parse_problems for m in steps)
    outcome = summarise_conversation(rollout.trajectory, mock(), max_steps=16)
    assert outcome["format"] == 0.0 and outcome["malformed_steps"] == 2


def test_rollout_func_with_the_real_model_masks_only_assistant_steps(tokenizer):
    import torch
    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM, GenerationConfig

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(str(resolve_model("tiny-lm")))
    trainer = SimpleNamespace(
        processing_class=tokenizer,
        model_wrapped=model,
        accelerator=Accelerator(cpu=True),
        args=SimpleNamespace(ds3_gather_for_generation=True, gradient_checkpointing_kwargs=None),
        generation_config=GenerationConfig(
            do_sample=True,
            temperature=1.0,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=[tokenizer.eos_token_id],
        ),  # fmt: skip
        generation_kwargs={},
    )
    scenarios = load_domain("mock").scenarios
    limits = RolloutLimits(max_step_tokens=12, max_tokens=600)
    rollout = ConversationRollout({s.id: s for s in scenarios}, limits, sage=False)
    prompts = list(conversation_rows(scenarios[:2])["prompt"])
    out = rollout([prompts[0], prompts[0], prompts[1], prompts[1]], trainer)
    assert out["logprobs"] is None and len(out["completion_ids"]) == 4
    for ids, mask, outcome, raw in zip(out["completion_ids"], out["env_mask"], out["outcome"],
                                       out["trajectory"], strict=True):  # fmt: skip
        steps = [m["content"] for m in json.loads(raw)["messages"] if m["role"] == "assistant"]
        policy = [t for t, m in zip(ids, mask, strict=True) if m == 1]
        # the masked-in tokens are the assistant steps and nothing else (the trajectory keeps
        # each step stripped of surrounding whitespace)
        decoded = tokenizer.decode(policy, skip_special_tokens=True)
        assert "".join(decoded.split()) == "".join("".join(steps).split())
        assert outcome["policy_tokens"] == len(policy) and outcome["steps"] == len(steps)
        assert isinstance(HFPolicy(trainer), HFPolicy)


def test_reward_modes_are_checked():
    with pytest.raises(UsageError, match="step-mode reward"):
        check_reward_modes(get_reward_funcs(["task_success", "action_type"]), "conversation")
    with pytest.raises(UsageError, match="conversation-mode reward"):
        check_reward_modes(get_reward_funcs(["turn_cost"]), "step")
    with pytest.raises(ValueError, match="outcome"):
        get_reward_funcs(["gold_steps"])[0](["a transcript"], prompts=["p"])
    with pytest.raises(UsageError, match="conversation_rows"):
        parse_rollout_key([{"role": "user", "content": "hi"}])


class StandInVLLM:
    """Stands in for TRL 1.16's `VLLMGeneration` (no GPU here): the documented
    `generate(prompts, images, num_generations) -> (prompt_ids, completion_ids, logprobs,
    logprob_token_ids)` with top-1 logprobs per token, replaying fixed streams."""

    def __init__(self, streams):
        self.streams, self.calls = streams, []

    def generate(self, prompts, images, num_generations):
        self.calls.append((len(prompts), images, num_generations))
        stream = self.streams[(len(self.calls) - 1) % len(self.streams)]
        ids = [list(stream) for _ in prompts]
        logprobs = [[[-0.5 - i / 100] for i in range(len(stream))] for _ in prompts]
        return prompts, ids, logprobs, [[[t] for t in row] for row in ids]


def test_vllm_policy_passes_sampling_logprobs_for_policy_tokens_only(tokenizer, chat):
    streams = [chat.encode(TOOL_STEP), chat.encode(SAY_STEP)]
    engine = StandInVLLM(streams)
    trainer = SimpleNamespace(processing_class=tokenizer, use_vllm=True, vllm_generation=engine)
    scenario = mock()
    rollout = ConversationRollout({scenario.id: scenario}, RolloutLimits(), sage=False)
    key = conversation_rows([scenario])["prompt"][0]
    out = rollout([key, key], trainer)
    # one generate per round, token prompts, one completion per (already repeated) prompt
    assert engine.calls and all(call == (2, None, 1) for call in engine.calls)
    for ids, mask, logprobs in zip(out["completion_ids"], out["env_mask"], out["logprobs"],
                                   strict=True):  # fmt: skip
        assert len(logprobs) == len(ids)
        policy = [lp for lp, m in zip(logprobs, mask, strict=True) if m == 1]
        assert policy and all(lp < 0 for lp in policy)  # the engine's sampling log-probs
        assert all(lp == 0.0 for lp, m in zip(logprobs, mask, strict=True) if m == 0)


def test_vllm_settings_are_checked():
    from trl import GRPOConfig

    from mads_bench.training.rollout import check_vllm_settings

    args = GRPOConfig(output_dir="unused", use_vllm=False, use_cpu=True)
    with pytest.raises(UsageError, match="generation_kwargs"):
        check_vllm_settings(args, 192)
    args.generation_kwargs = {"stop": ["</action>"], "include_stop_str_in_output": True}
    check_vllm_settings(args, 192)
