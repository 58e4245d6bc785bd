"""Continuous batching: each row gets what it would alone, and a finished row leaves the batch.

tiny-lm in float32 (random weights: greedy tokens are far from ties, so batching cannot change
them). The references are plain one-row `generate` calls with transformers' SDPA attention
(the engine switches the model it decodes with to `mads_decode`).
"""

from __future__ import annotations

import copy
import threading

import pytest
import torch

from mads_bench.decoding import DecodeEngine, _sample, decode, row_generators
from mads_bench.fused_decode import ENV as FUSED_ENV
from mads_bench.models import load_tokenizer


@pytest.fixture(scope="module")
def lm(tiny_lm_path):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_lm_path, dtype=torch.float32).eval()
    return model, load_tokenizer(str(tiny_lm_path))


def _prompts(tokenizer) -> list[list[int]]:
    texts = [
        "Hi.",
        "Cancel order A-1001 now, please, it is late.",
        "Where is my parcel?",
        "Book a table for two at seven tonight at the harbour place, thank you.",
        "No.",
    ]
    return [tokenizer(t, add_special_tokens=False).input_ids for t in texts]


def _alone(model, prompt: list[int], max_new_tokens: int) -> list[int]:
    reference = copy.deepcopy(model)
    reference.set_attn_implementation("sdpa")
    with torch.no_grad():
        out = reference.generate(
            input_ids=torch.tensor([prompt]), max_new_tokens=max_new_tokens, do_sample=False,
            pad_token_id=0, eos_token_id=None,
        )  # fmt: skip
    return out[0, len(prompt) :].tolist()


def test_greedy_rows_get_their_one_row_tokens_while_rows_leave_and_join(lm) -> None:
    model, tokenizer = lm
    prompts = _prompts(tokenizer)
    bounds = [9, 3, 7, 5, 12]  # rows leave at different steps; two slots, so three wait
    results = decode(model, prompts, max_new_tokens=bounds, eos_ids=[-1], max_batch=2)
    for prompt, bound, result in zip(prompts, bounds, results, strict=True):
        assert result.tokens == _alone(model, prompt, bound)
        assert result.finish_reason == "length"


def test_a_row_ends_at_its_eos_and_at_its_stop_string(lm) -> None:
    model, tokenizer = lm
    prompt = _prompts(tokenizer)[1]
    free = _alone(model, prompt, 10)
    eos = free[4]  # pretend the fifth token is the end of message
    [ended] = decode(model, [prompt], max_new_tokens=10, eos_ids=[eos])
    assert ended.tokens == free[: free.index(eos) + 1] and ended.finish_reason == "eos"
    text = tokenizer.decode(free)
    stop = text[len(tokenizer.decode(free[:6])) - 2 :][:2]  # ends inside the sixth token
    [stopped] = decode(model, [prompt], max_new_tokens=10, eos_ids=[-1], stop_strings=[stop],
                       tokenizer=tokenizer)  # fmt: skip
    assert stopped.finish_reason == "stop"
    assert stop in tokenizer.decode(stopped.tokens)
    assert stop not in tokenizer.decode(stopped.tokens[:-1])  # not one token later


def test_samples_follow_the_seed_not_the_batch(lm) -> None:
    model, tokenizer = lm
    prompts = _prompts(tokenizer)
    settings = {"max_new_tokens": 8, "eos_ids": [-1], "temperature": 1.0}
    one = decode(model, prompts, generator=5, max_batch=1, **settings)
    four = decode(model, prompts, generator=5, max_batch=4, **settings)
    assert [r.tokens for r in one] == [r.tokens for r in four]
    other = decode(model, prompts, generator=6, max_batch=4, **settings)
    assert [r.tokens for r in other] != [r.tokens for r in one]
    # the global RNG is not consumed
    torch.manual_seed(0)
    expected = torch.rand(1)
    torch.manual_seed(0)
    decode(model, prompts[:1], generator=None, **settings)
    assert torch.equal(torch.rand(1), expected)


def test_a_sample_follows_the_distribution_and_never_picks_an_excluded_token() -> None:
    # softmax of these logits: 0.5, 0.3, 0.2, then tokens with zero probability (-inf logits)
    probs = torch.tensor([0.5, 0.3, 0.2, 0.0, 0.0])
    scaled = probs.log()
    generator = torch.Generator().manual_seed(0)
    draws = [_sample(scaled, 1.0, generator) for _ in range(4000)]
    counts = torch.bincount(torch.tensor(draws), minlength=5).float() / len(draws)
    assert counts[3:].sum() == 0
    # binomial standard error at 4,000 draws is at most 0.008: four of them
    assert torch.allclose(counts[:3], probs[:3], atol=0.032), counts
    # nucleus 0.6: 0.5 alone is short of it, 0.5 + 0.3 reaches it, so 0.2 is dropped
    nucleus = [_sample(scaled, 0.6, generator) for _ in range(2000)]
    assert set(nucleus) == {0, 1}
    share = nucleus.count(0) / len(nucleus)
    assert abs(share - 0.5 / 0.8) < 0.045, share


def test_log_probabilities_are_the_forward_pass_ones(lm) -> None:
    model, tokenizer = lm
    prompts = _prompts(tokenizer)[:3]
    results = decode(model, prompts, max_new_tokens=6, eos_ids=[-1], temperature=0.7,
                     generator=1, return_logprobs=True, max_batch=3)  # fmt: skip
    for prompt, result in zip(prompts, results, strict=True):
        ids = torch.tensor([prompt + result.tokens])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1] / 0.7
        expected = logits.log_softmax(-1).gather(-1, torch.tensor(result.tokens)[:, None])[:, 0]
        assert torch.allclose(torch.tensor(result.logprobs), expected, atol=1e-4)


def test_requests_submitted_from_other_threads_join_the_running_batch(lm) -> None:
    model, tokenizer = lm
    prompts = _prompts(tokenizer)
    engine = DecodeEngine(model, eos_ids=[-1], max_batch=4)
    first = engine.submit(prompts[0], max_new_tokens=12)
    engine.step()
    late = []
    worker = threading.Thread(
        target=lambda: late.append(engine.submit(prompts[1], max_new_tokens=3))
    )
    worker.start()
    worker.join()
    widths, done = [], {}
    while not engine.idle:
        done.update(engine.step())
        widths.append(engine.active_rows)
    assert max(widths) == 2 and widths[-1] == 0  # it joined, then the batch drained
    assert (engine.tokens, engine.steps) == (12 + 3, 1 + len(widths))  # the counters
    assert done[late[0]].tokens == _alone(model, prompts[1], 3)
    assert done[first].tokens == _alone(model, prompts[0], 12)


def test_bad_requests_are_refused(lm) -> None:
    engine = DecodeEngine(lm[0], eos_ids=[0])
    with pytest.raises(ValueError, match="at least one token"):
        engine.submit([], max_new_tokens=2)
    with pytest.raises(ValueError, match="max_new_tokens"):
        engine.submit([1], max_new_tokens=0)
    with pytest.raises(ValueError, match="tokenizer"):
        engine.submit([1], max_new_tokens=2, stop_strings=["x"])
    assert len(row_generators(3, 4)) == 4


@pytest.mark.parametrize("drafted", [False, True], ids=["decoded", "drafted"])
def test_a_prompt_that_continues_a_finished_row_prefills_only_the_rest(
    lm, monkeypatch, drafted
) -> None:
    model, tokenizer = lm
    first = _prompts(tokenizer)[3]
    plain = DecodeEngine(model, eos_ids=[-1])
    cached = DecodeEngine(model, eos_ids=[-1], prefix_cache=2)
    if drafted:  # the whole reply comes from its draft: the row finishes at its prefill
        [reply] = _run(plain, [first], 6)
        cached.submit(first, max_new_tokens=6, draft=reply)
        cached.step()
        assert cached.idle and cached.accepted == 5
    else:
        [reply] = _run(cached, [first], 6)
    follow_up = first + reply + tokenizer(" And a window seat.", add_special_tokens=False).input_ids
    widths = []
    original = model.forward

    def spy(*args, **kwargs):
        widths.append(kwargs["input_ids"].shape[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(model, "forward", spy)
    [again] = _run(cached, [follow_up], 5)
    # the stored prompt + reply (all but its last token, never fed back) was not computed again
    assert widths[0] == len(follow_up) - (len(first) + len(reply) - 1)
    monkeypatch.undo()
    # and the continuation is what a fresh prefill gives (float32)
    assert again == _run(plain, [follow_up], 5)[0] == _alone(model, follow_up, 5)


def _run(engine: DecodeEngine, prompts: list[list[int]], new: int) -> list[list[int]]:
    tickets = [engine.submit(p, max_new_tokens=new) for p in prompts]
    done = {}
    while not engine.idle:
        done.update(engine.step())
    return [done[t].tokens for t in tickets]


def test_a_groups_copies_of_one_prompt_share_its_prefill(lm, monkeypatch) -> None:
    model, tokenizer = lm
    prompt = _prompts(tokenizer)[3] + _prompts(tokenizer)[1]
    widths = []
    original = model.forward

    def spy(*args, **kwargs):
        widths.append(kwargs["input_ids"].shape[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(model, "forward", spy)
    monkeypatch.setenv(FUSED_ENV, "0")  # decoding steps through the forward too, to count them
    results = decode(
        model, [prompt] * 3, max_new_tokens=6, eos_ids=[-1], temperature=0.8, generator=5
    )
    # one full prefill, then the last prompt token once for each copy, then 5 decode steps
    assert widths[:3] == [len(prompt), 1, 1] and widths[3:] == [1] * 5
    monkeypatch.undo()
    # the same samples as three full prefills (one row admitted per step: nothing shared)
    alone = decode(model, [prompt] * 3, max_new_tokens=6, eos_ids=[-1], temperature=0.8,
                   generator=5, max_batch=1)  # fmt: skip
    assert [r.tokens for r in results] == [r.tokens for r in alone]


@pytest.mark.parametrize("fused", [True, False], ids=["fused-steps", "forward-steps"])
def test_captured_states_are_what_enters_the_layer_in_a_full_forward(lm, fused, monkeypatch):
    model, tokenizer = lm
    if not fused:
        monkeypatch.setenv(FUSED_ENV, "0")
    layer = model.config.num_hidden_layers - 1
    prompts = _prompts(tokenizer)
    prompts = [prompts[1], prompts[3], prompts[1]]  # a shared prompt, prefilled once
    results = decode(model, prompts, max_new_tokens=[6, 4, 5], eos_ids=[-1], max_batch=2,
                     temperature=0.9, generator=3, capture_layer=layer)  # fmt: skip
    for prompt, result in zip(prompts, results, strict=True):
        fed = prompt + result.tokens[:-1]
        with torch.no_grad():
            out = model(input_ids=torch.tensor([fed]), output_hidden_states=True)
        assert result.hidden.shape == (len(fed), model.config.hidden_size)
        torch.testing.assert_close(result.hidden, out.hidden_states[layer][0], atol=1e-4, rtol=1e-4)
    assert decode(model, prompts[:1], max_new_tokens=2, eos_ids=[-1])[0].hidden is None
    with pytest.raises(ValueError, match="prefix_cache"):
        DecodeEngine(model, eos_ids=[-1], prefix_cache=2, capture_layer=layer)
    with pytest.raises(ValueError, match="not a layer"):
        DecodeEngine(model, eos_ids=[-1], capture_layer=layer + 1)


def _drafts_of(replies: list[list[int]]) -> dict[str, list[list[int]]]:
    """Drafts that hold wholly, up to a wrong token halfway, from the first token, and none."""
    return {
        "right": replies,
        "wrong halfway": [r[: len(r) // 2] + [(r[len(r) // 2] + 1) % 50] + r for r in replies],
        "wrong first": [[(r[0] + 1) % 50] + r[1:] for r in replies],
        "none": [[] for _ in replies],
    }


@pytest.mark.parametrize("kind", ["right", "wrong halfway", "wrong first", "none"])
def test_a_draft_changes_no_reply_and_saves_the_steps_it_got_right(lm, kind) -> None:
    model, tokenizer = lm
    prompts = _prompts(tokenizer)
    bounds = [9, 3, 7, 5, 12]
    plain = decode(model, prompts, max_new_tokens=bounds, eos_ids=[-1], max_batch=2)
    drafts = _drafts_of([r.tokens for r in plain])[kind]
    engine = DecodeEngine(model, eos_ids=[-1], max_batch=2)
    tickets = [engine.submit(p, max_new_tokens=b, draft=d)
               for p, b, d in zip(prompts, bounds, drafts, strict=True)]  # fmt: skip
    done = {}
    while not engine.idle:
        done.update(engine.step())
    assert [done[t].tokens for t in tickets] == [r.tokens for r in plain]
    right = sum(
        min(_common(d, r.tokens), b - 1) for d, r, b in zip(drafts, plain, bounds, strict=True)
    )
    assert engine.accepted == right  # every token the draft got right came from the prefill
    assert engine.tokens == sum(bounds)


def _common(a: list[int], b: list[int]) -> int:
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def test_drafted_samples_stop_strings_and_log_probabilities_are_the_undrafted_ones(lm) -> None:
    model, tokenizer = lm
    prompts = _prompts(tokenizer)
    settings = {"max_new_tokens": 8, "eos_ids": [-1], "temperature": 0.9, "generator": 3,
                "return_logprobs": True}  # fmt: skip
    plain = decode(model, prompts, **settings)
    for drafts in _drafts_of([r.tokens for r in plain]).values():
        drafted = decode(model, prompts, drafts=drafts, **settings)
        assert [r.tokens for r in drafted] == [r.tokens for r in plain]
        for one, other in zip(drafted, plain, strict=True):
            assert torch.allclose(torch.tensor(one.logprobs), torch.tensor(other.logprobs),
                                  atol=1e-4)  # fmt: skip
    free = plain[1].tokens
    stop = tokenizer.decode(free[3:5])  # ends the row in the middle of a right draft
    settings = {"max_new_tokens": 8, "eos_ids": [-1], "stop_strings": [stop],
                "tokenizer": tokenizer}  # fmt: skip
    greedy = decode(model, [prompts[1]], **settings)[0]
    [stopped] = decode(model, [prompts[1]], drafts=[greedy.tokens + [1, 2, 3]], **settings)
    assert stopped.tokens == greedy.tokens and stopped.finish_reason == greedy.finish_reason


def test_a_draft_is_refused_where_states_are_captured(lm) -> None:
    engine = DecodeEngine(lm[0], eos_ids=[0], capture_layer=0)
    with pytest.raises(ValueError, match="draft"):
        engine.submit([1, 2], max_new_tokens=2, draft=[3])
