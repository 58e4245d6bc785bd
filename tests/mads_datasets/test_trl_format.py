"""The sft/grpo rows are TRL conversational prompt-completion data that chat templates render.

Checked with the real SmolLM2 tokenizer (ChatML template, shipped with the offline ``tiny-lm``
model): tool messages render as their own turn, the prompt with the generation prompt is a
token prefix of prompt + completion (TRL's SFTTrainer computes the completion-only loss
mask from that prefix), and what follows the prefix is exactly the Pre-Act step.
"""

from __future__ import annotations

from trl.data_utils import is_conversational, maybe_apply_chat_template

from mads_bench.models import load_tokenizer


def test_rows_are_conversational(built) -> None:
    sft, grpo = built.configs["sft"]["train"][0], built.configs["grpo"]["train"][0]
    # TRL recognises both as conversational (prompt / completion lists of messages)
    assert is_conversational(sft) and is_conversational(grpo)


def test_chat_template_renders_prompt_as_a_prefix(built, tiny_lm_path) -> None:
    tokenizer = load_tokenizer(str(tiny_lm_path))
    rows = built.configs["sft"]["train"]
    after_tool = next(r for r in rows if r["prompt"][-1]["role"] == "tool")
    after_user = next(r for r in rows if r["prompt"][-1]["role"] == "user")
    for row in (after_tool, after_user):
        prompt_ids = tokenizer.apply_chat_template(
            row["prompt"], add_generation_prompt=True, tokenize=True, return_dict=True
        )["input_ids"]
        full_ids = tokenizer.apply_chat_template(
            row["prompt"] + row["completion"], tokenize=True, return_dict=True
        )["input_ids"]
        # the prompt is an exact token prefix, so no prompt token is lost from training
        assert full_ids[: len(prompt_ids)] == prompt_ids
        # the trained part is the Pre-Act step and the end-of-turn token
        completion = tokenizer.decode(full_ids[len(prompt_ids) :])
        assert completion.strip() == row["completion"][0]["content"] + "<|im_end|>"
    rendered = maybe_apply_chat_template({"prompt": after_tool["prompt"]}, tokenizer)["prompt"]
    # GRPO's prompt rendering shows the tool result as a `tool` turn and ends ready to answer
    assert "<|im_start|>tool\n" in rendered and rendered.endswith("<|im_start|>assistant\n")
