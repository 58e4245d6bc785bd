"""`merge_step_chains`: one sequence per chain of steps, the same per-token loss as row by row."""

from __future__ import annotations

import pytest
import torch
from datasets import Dataset

from mads_bench.models import load_causal_lm, load_tokenizer
from mads_bench.training import merge_step_chains

SYSTEM = {"role": "system", "content": "You are a banking assistant. Tools: get_balance(id)."}
CONVERSATION_A = [
    SYSTEM,
    {"role": "user", "content": "What is on ACC-1?"},
    {"role": "assistant", "content": '<think>Look it up.</think>\n<action type="tool">'
     '{"name": "get_balance", "arguments": {"id": "ACC-1"}}</action>'},
    {"role": "tool", "content": '{"balance": 12.5}'},
    {"role": "assistant", "content": '<think>Report it.</think>\n<action type="say">'
     "ACC-1 holds 12.50 EUR.</action>"},
    {"role": "user", "content": "Thanks, bye."},
    {"role": "assistant", "content": '<think></think>\n<action type="say">Goodbye!</action>'},
]  # fmt: skip
CONVERSATION_B = [
    SYSTEM,
    {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": '<think></think>\n<action type="say">Hi! How can I '
     "help?</action>"},
]  # fmt: skip


def _rows(conversation: list[dict]) -> list[dict]:
    """One `sft` row per assistant message: the conversation before it, then the message."""
    return [
        {"prompt": conversation[:i], "completion": [message]}
        for i, message in enumerate(conversation)
        if message["role"] == "assistant"
    ]


@pytest.fixture(scope="module")
def tokenizer(tiny_lm_path):
    return load_tokenizer("tiny-lm")


def _row_completion(tokenizer, row: dict) -> tuple[list[int], int]:
    prompt = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True)
    ids = tokenizer.apply_chat_template(row["prompt"] + row["completion"])
    prompt, ids = list(prompt["input_ids"]), list(ids["input_ids"])
    assert ids[: len(prompt)] == prompt
    return ids, len(prompt)


def test_each_conversation_becomes_one_sequence_with_every_completion_marked(tokenizer):
    rows = _rows(CONVERSATION_A) + _rows(CONVERSATION_B)
    merged, stats = merge_step_chains(Dataset.from_list(rows), tokenizer)
    assert merged["num_steps"] == [3, 1]
    assert (stats.rows, stats.sequences) == (4, 2)
    last_a, _ = _row_completion(tokenizer, rows[2])
    assert merged[0]["input_ids"] == last_a
    # the marked tokens are exactly the completions of the three rows, in order
    ids, mask = merged[0]["input_ids"], merged[0]["completion_mask"]
    marked = [t for t, m in zip(ids, mask, strict=True) if m]
    expected = []
    for row in rows[:3]:
        ids, start = _row_completion(tokenizer, row)
        expected += ids[start:]
    assert marked == expected
    assert stats.row_tokens == sum(len(_row_completion(tokenizer, r)[0]) for r in rows)
    assert stats.sequence_tokens == sum(len(s) for s in merged["input_ids"]) < stats.row_tokens
    assert "4 steps -> 2 sequences" in stats.describe()


def test_merged_sequence_gives_every_completion_token_its_row_loss(tokenizer):
    model = load_causal_lm("tiny-lm").eval()
    rows = _rows(CONVERSATION_A)
    merged, _ = merge_step_chains(Dataset.from_list(rows), tokenizer)
    (sequence,) = merged

    def token_logprobs(ids: list[int], mask: list[int]) -> torch.Tensor:
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0, :-1]
        logprobs = logits.log_softmax(-1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0]
        return logprobs[torch.tensor(mask[1:], dtype=torch.bool)]

    per_row = []
    for row in rows:
        ids, start = _row_completion(tokenizer, row)
        per_row.append(token_logprobs(ids, [0] * start + [1] * (len(ids) - start)))
    together = token_logprobs(sequence["input_ids"], sequence["completion_mask"])
    torch.testing.assert_close(together, torch.cat(per_row), atol=1e-5, rtol=1e-5)


def test_a_rewritten_earlier_step_starts_a_new_chain(tokenizer):
    rows = _rows(CONVERSATION_A)
    # the third row's prompt shows the first step without its reasoning (compact context)
    compact = [dict(m) for m in rows[2]["prompt"]]
    compact[2]["content"] = compact[2]["content"].replace("Look it up.", "")
    rows[2] = {"prompt": compact, "completion": rows[2]["completion"]}
    merged, stats = merge_step_chains(Dataset.from_list(rows), tokenizer)
    assert merged["num_steps"] == [2, 1] and stats.sequences == 2


def test_a_chain_ends_before_max_length_and_a_long_row_stays_alone(tokenizer):
    rows = _rows(CONVERSATION_A)
    lengths = [len(_row_completion(tokenizer, r)[0]) for r in rows]
    merged, _ = merge_step_chains(Dataset.from_list(rows), tokenizer, max_length=lengths[1])
    assert merged["num_steps"] == [2, 1]
    assert len(merged[1]["input_ids"]) == lengths[2] > lengths[1]  # left for TRL to truncate


def test_rows_that_are_not_conversational_prompt_completion_are_refused(tokenizer):
    with pytest.raises(ValueError, match="missing columns \\['completion'\\]"):
        merge_step_chains(Dataset.from_list([{"prompt": "hi"}]), tokenizer)
    with pytest.raises(ValueError, match="conversational"):
        merge_step_chains(Dataset.from_list([{"prompt": "hi", "completion": "yo"}]), tokenizer)
