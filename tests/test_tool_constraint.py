"""Tool-name constrained decoding: a filtered row can only write a tool its prompt offers.

The filter is checked on the SmolLM2 tokenizer (tiny-lm's): random walks through the allowed
tokens always end in an offered name, whatever split they take; the engine applies it to the
rows that carry names, greedy and sampled, and leaves the others and the log-probabilities
alone.
"""

from __future__ import annotations

import random
import re

import pytest
import torch

from mads_bench.decoding import DecodeEngine, _Row
from mads_bench.models import load_tokenizer
from mads_bench.tool_constraint import ToolNameFilter, offered_tools

START = '<think>look it up</think>\n<action type="tool">{"name":'
NAMES = ("list_customer_accounts", "list_cards", "get_account_balance")


@pytest.fixture(scope="module")
def tokenizer(tiny_lm_path):
    return load_tokenizer(str(tiny_lm_path))


@pytest.fixture(scope="module")
def names_filter(tokenizer):
    return ToolNameFilter(tokenizer)


def test_the_offered_tools_are_the_system_messages_tool_lines() -> None:
    system = (
        "You are a bank's assistant.\n\nTools (name(arguments) [read or write]):\n"
        "- list_cards(customer_id: string) [read]\n- set_card_lock(card_id: string) [write]\n"
        "\nRules:\n- One action per step."
    )
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "- x(y)"}]
    assert offered_tools(messages) == ("list_cards", "set_card_lock")
    assert offered_tools([{"role": "user", "content": "- list_cards(a)"}]) == ()


def test_every_walk_through_the_allowed_tokens_ends_in_an_offered_name(
    names_filter, tokenizer
) -> None:
    rng = random.Random(0)
    ends = set()
    for _ in range(300):
        text = START
        for _ in range(40):
            allowed = names_filter.allowed(text, NAMES)
            if allowed is None:
                break
            text += tokenizer.decode([rng.choice(allowed)])
        name = re.search(r'"name":\s?"([^"]*)"', text)
        assert name is not None and name.group(1) in NAMES, text
        ends.add(name.group(1))
    assert ends == set(NAMES)  # every name stays reachable


def test_outside_a_name_nothing_is_filtered(names_filter) -> None:
    assert names_filter.allowed('<action type="say">Which card', NAMES) is None
    assert names_filter.allowed("<think>a</think>\n<plan>1. Call", NAMES) is None
    assert names_filter.allowed(START + ' "list_cards", "arguments": {"', NAMES) is None
    assert names_filter.allowed(START + ' "refund_', NAMES) is None  # cannot become a name
    assert names_filter.allowed(START, ()) is None  # no tools offered, nothing to enforce


def test_the_name_may_be_split_any_way_and_closed_by_a_longer_token(
    names_filter, tokenizer
) -> None:
    allowed = {tokenizer.decode([i]) for i in names_filter.allowed(START + ' "list_', NAMES)}
    assert {"c", "cards", "customer"} <= allowed
    assert not {"account", "get"} & allowed
    closing = {tokenizer.decode([i]) for i in names_filter.allowed(START + ' "list_cards', NAMES)}
    assert {'"', '",'} <= closing and not any(t[0] != '"' for t in closing)


def _row(tokens: list[int], names: tuple[str, ...], temperature: float = 0.0) -> _Row:
    generator = torch.Generator().manual_seed(1) if temperature else None
    return _Row(0, [1], 64, temperature, 1.0, (), generator, True, names, list(tokens))


def test_the_engine_filters_rows_with_names_only_and_keeps_the_models_logprobs(
    tiny_lm_path, tokenizer, names_filter
) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_lm_path, dtype=torch.float32).eval()
    engine = DecodeEngine(model, eos_ids=[0], tokenizer=tokenizer)
    written = tokenizer(START + ' "list_', add_special_tokens=False).input_ids
    allowed = set(names_filter.allowed(START + ' "list_', NAMES))
    logits = torch.randn(4, len(tokenizer), generator=torch.Generator().manual_seed(0))
    logits[:, 0] = 50.0  # the model's favourite: not a way to go on with a name
    rows = [_row(written, NAMES), _row(written, ()), _row(written, NAMES, 1.0), _row([], NAMES)]
    tokens = engine._choose(rows, logits.clone())
    assert tokens[0] in allowed and tokens[2] in allowed
    assert tokens[1] == 0 and tokens[3] == 0  # no names, or not inside a name: unfiltered
    reference = torch.log_softmax(logits[0], dim=-1)[tokens[0]].item()
    assert rows[0].logprobs == [pytest.approx(reference)]


def test_tool_names_need_a_tokenizer(tiny_lm_path) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_lm_path, dtype=torch.float32).eval()
    with pytest.raises(ValueError, match="tokenizer"):
        DecodeEngine(model, eos_ids=[0]).submit([1], max_new_tokens=2, tool_names=NAMES)
