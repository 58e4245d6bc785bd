"""GRPO reward throughput: batched rewards vs a naive per-completion encode of the same batch.

A GRPO-sized batch: 64 prompts x 8 completions, half the prompts with a gold tool call and
half with a gold say; each group mixes exact, near and wrong tool calls, paraphrased and
unrelated says, and malformed output. "Batched" runs the rewards a GRPO config lists
(action_type, tool_call, semantic, pre_act_format) as TRL calls them, with a cold gold cache
each repeat; "naive" computes the same four values completion by completion, encoding the
predicted and gold say separately. The MiniLM encoder is loaded before timing.
"""

from __future__ import annotations

import json
import time

import numpy as np

from evaluators.step_scoring import GoldAction, arguments_equal, parse_prediction
from mads_bench.embedding import SentenceEncoder
from mads_bench.models import load_sentence_encoder
from rewards import (
    action_type_reward,
    make_semantic_reward,
    pre_act_format_reward,
    tool_call_reward,
)

PROMPTS, GENERATIONS, REPEATS = 64, 8, 3
SAYS = [
    "Your refund of {n} euros has been issued to the original card.",
    "I could not find an order with the number A-{n}; could you check it?",
    "Your meeting is booked for {n} o'clock on Tuesday in room B.",
    "The flight to Lisbon on the {n}th is full; shall I look at the next day?",
]


def _step(kind: str, body) -> str:
    if kind == "say":
        return f'<think>answer</think><action type="say">{body}</action>'
    call = json.dumps({"name": body[0], "arguments": body[1]})
    return f'<think>look it up</think><plan>1. call</plan><action type="tool">{call}</action>'


def _batch() -> tuple[list[str], dict[str, list]]:
    completions, gold = (
        [],
        {k: [] for k in ("gold_action_type", "gold_tool_name", "gold_tool_arguments", "gold_say")},
    )
    for p in range(PROMPTS):
        args = {"order_id": f"A-{p}", "amount": p}
        say = SAYS[p % 4].format(n=p)
        is_tool = p % 2 == 0
        row = ["tool", "get_order", json.dumps(args), None] if is_tool else ["say", None, None, say]
        variants = [
            _step("tool", ("get_order", args)),
            _step("tool", ("get_order", {**args, "amount": p + 1})),
            _step("tool", ("refund", args)),
            _step("say", say),
            _step("say", f"Sure, {say.lower()}"),
            _step("say", SAYS[(p + 1) % 4].format(n=p + 3)),
            f"<think>hmm</think><action type='say'>{say}",
            "I am not sure what to do.",
        ]
        for completion in variants[:GENERATIONS]:
            completions.append(completion)
            for key, value in zip(gold, row, strict=True):
                gold[key].append(value)
    return completions, gold


def _naive(completions: list[str], gold: dict[str, list], encoder) -> float:
    """Per-completion rewards with two encode calls per say pair; returns encoder seconds."""
    encode_seconds = 0.0
    for i, completion in enumerate(completions):
        g = GoldAction.from_columns(*(gold[k][i] for k in gold))
        action = parse_prediction(completion)
        _ = float(action is not None and action.type == g.type)
        if g.type == "tool" and action is not None and action.type == "tool":
            _ = action.name == g.tool_name and arguments_equal(action.arguments, g.tool_arguments)
        pre_act_format_reward([completion])
        if g.type == "say" and action is not None and action.type == "say":
            start = time.perf_counter()
            a = encoder.encode([action.text], normalize_embeddings=True, show_progress_bar=False)
            b = encoder.encode([g.say], normalize_embeddings=True, show_progress_bar=False)
            encode_seconds += time.perf_counter() - start
            _ = max(0.0, float(np.dot(a[0], b[0])))
    return encode_seconds


def run() -> list[dict]:
    completions, gold = _batch()
    n = len(completions) * REPEATS
    encoder = load_sentence_encoder("minilm")
    encoder.encode(["warm up"], show_progress_bar=False)

    batched = batched_encode = 0.0
    for _ in range(REPEATS):
        semantic = make_semantic_reward("minilm", similarity=SentenceEncoder(encoder=encoder))
        start = time.perf_counter()
        for reward in (action_type_reward, tool_call_reward, semantic, pre_act_format_reward):
            reward(completions, **gold)
        batched += time.perf_counter() - start
        batched_encode += semantic.similarity.encode_seconds

    start = time.perf_counter()
    naive_encode = sum(_naive(completions, gold, encoder) for _ in range(REPEATS))
    naive = time.perf_counter() - start
    note = f"{PROMPTS}x{GENERATIONS} mixed tool/say, 4 rewards, MiniLM, {REPEATS} repeats"
    return [
        {"measure": "batched rewards", "value": n / batched, "unit": "completions/s", "note": note},
        {
            "measure": "naive per-completion",
            "value": n / naive,
            "unit": "completions/s",
            "note": "same values, one encode per text",
        },
        {
            "measure": "batched speed-up",
            "value": naive / batched,
            "unit": "x",
            "note": "naive time / batched time",
        },
        {
            "measure": "batched encoder share",
            "value": batched_encode / batched,
            "unit": "fraction",
            "note": "time inside encoder.encode / total, batched",
        },
        {
            "measure": "naive encoder share",
            "value": naive_encode / naive,
            "unit": "fraction",
            "note": "time inside encoder.encode / total, naive",
        },
    ]
