"""A group's completions scored on one run of their prompt give TRL's per-row log-probabilities,
entropies and gradients (the policy: tiny-lm in 4-bit with a random LoRA adapter, float32)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from accelerate import Accelerator
from trl import GRPOTrainer
from trl.trainer.utils import add_fused_lm_head

from mads_bench.training.shared_prompt import (
    SharedPromptGRPOTrainer,
    completion_batch,
    first_trained_layer,
)
from tests.recipes.test_fast_weights import _policy


def _trainer(cls, checkpointing: bool = False):
    trainer = object.__new__(cls)  # only what the scoring method reads
    trainer.accelerator = Accelerator(cpu=True)
    trainer.args = SimpleNamespace(gradient_checkpointing=checkpointing)
    return trainer


def _batch(prompts: list[list[int]], completions: list[list[int]], pad: int = 0):
    """TRL's layout: prompts left-padded, completions right-padded, one attention mask."""
    width = max(map(len, prompts))
    keep = max(map(len, completions))
    ids, mask = [], []
    for prompt, completion in zip(prompts, completions, strict=True):
        left, right = width - len(prompt), keep - len(completion)
        ids.append([pad] * left + prompt + completion + [pad] * right)
        mask.append([0] * left + [1] * (len(prompt) + len(completion)) + [0] * right)
    return torch.tensor(ids), torch.tensor(mask), keep


@pytest.fixture(scope="module")
def policy(tiny_lm_path):
    model = _policy(tiny_lm_path, seed=3)
    add_fused_lm_head(model.get_base_model(), temperature=0.7, outputs=("log_probs", "entropy"))
    return model


def _score(cls, model, ids, mask, keep, trainer=None):
    model.zero_grad()
    logps, entropy, _ = cls._get_per_token_logps_and_entropies(
        trainer or _trainer(cls), model, ids, mask, keep, compute_entropy=True
    )
    (logps * torch.linspace(0.5, 1.5, logps.numel()).view_as(logps)).sum().backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    return logps.detach(), entropy.detach(), grads


def test_shared_prompt_equals_trls_rows(policy, monkeypatch) -> None:
    prompt = [5, 17, 23, 42, 8, 99, 61]
    other = [11, 12, 13, 14]
    prompts = [prompt, prompt, other, prompt]
    completions = [[3, 4, 5, 6, 7], [9, 8], [1, 2, 3], [30, 31, 32, 33]]
    ids, mask, keep = _batch(prompts, completions)
    mask[1, -1] = 0  # a token after the row's end (as after an EOS) is not scored
    trl = _score(GRPOTrainer, policy, ids, mask, keep)
    packs = []
    monkeypatch.setattr(
        "mads_bench.training.shared_prompt.completion_batch",
        lambda prompt, rows: packs.append(len(rows)) or completion_batch(prompt, rows),
    )
    packed = _score(SharedPromptGRPOTrainer, policy, ids, mask, keep)
    assert packs == [3, 1]  # the shared prompt run once for its 3 rows, the other row alone
    torch.testing.assert_close(packed[0], trl[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(packed[1], trl[1], atol=1e-5, rtol=1e-5)
    assert trl[2].keys() == packed[2].keys() and trl[2]
    for name, grad in trl[2].items():
        torch.testing.assert_close(packed[2][name], grad, atol=1e-5, rtol=1e-4, msg=name)
    assert (packed[0][~mask[:, -keep:].bool()] == 0).all()


def test_rows_with_different_prompts_take_trls_path(policy, monkeypatch) -> None:
    ids, mask, keep = _batch([[5, 6, 7], [8, 9]], [[1, 2], [3, 4]])
    monkeypatch.setattr("mads_bench.training.shared_prompt.completion_batch", None)  # never called
    logps, _, _ = _score(SharedPromptGRPOTrainer, policy, ids, mask, keep)
    assert logps.shape == (2, keep)


def test_gradient_checkpointing_takes_trls_path(policy, monkeypatch) -> None:
    ids, mask, keep = _batch([[5, 6, 7], [5, 6, 7]], [[1, 2], [3, 4]])
    monkeypatch.setattr("mads_bench.training.shared_prompt.completion_batch", None)  # never called
    logps, _, _ = SharedPromptGRPOTrainer._get_per_token_logps_and_entropies(
        _trainer(SharedPromptGRPOTrainer, checkpointing=True), policy, ids, mask, keep
    )
    assert logps.shape == (2, keep)


def test_completion_batch_layout() -> None:
    ids, positions, mask, labels = completion_batch([7, 8, 9], [[1], [2, 3]], pad=5)
    assert ids.tolist() == [[9, 1, 5], [9, 2, 3]]  # the prompt's last token, then the row
    assert positions.tolist() == [[2, 3, 4], [2, 3, 4]]  # after the 2 cached prompt tokens
    assert mask.tolist() == [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]  # cache + row, padding masked
    assert labels.tolist() == [[1, -100, -100], [2, 3, -100]]


def test_the_trained_layers_alone_on_rollout_states_give_the_same_scores(tiny_lm_path) -> None:
    """States that entered the first trained layer (here from the policy itself, so exact)
    replace the frozen layers below: same log-probabilities, entropies and gradients, and the
    frozen layer never runs; a group missing a state runs every layer."""
    model = _policy(tiny_lm_path, seed=4, layers=[1])  # tiny-lm: 2 layers, layer 1 adapted
    add_fused_lm_head(model.get_base_model(), temperature=0.7, outputs=("log_probs", "entropy"))
    assert first_trained_layer(model) == 1
    prompt, other = [5, 17, 23, 42, 8, 99, 61], [11, 12, 13, 14]
    prompts = [prompt, prompt, prompt, other]
    completions = [[3, 4, 5, 6, 7], [9, 8], [30, 31, 32, 33], [1, 2]]
    ids, mask, keep = _batch(prompts, completions)
    full = _score(SharedPromptGRPOTrainer, model, ids, mask, keep)
    states = []
    with torch.no_grad():
        for p, c in zip(prompts[:3], completions[:3], strict=True):  # `other` has none
            out = model(input_ids=torch.tensor([p + c[:-1]]), output_hidden_states=True)
            states.append(out.hidden_states[1][0])
    trainer = _trainer(SharedPromptGRPOTrainer)
    trainer.model = model
    assert trainer.frozen_below == 1
    trainer.keep_rollout_states(prompts[:3], completions[:3], states)
    bottom_runs = []
    layer = model.get_base_model().model.layers[0]
    handle = layer.register_forward_hook(lambda *args: bottom_runs.append(1))
    try:
        above = _score(SharedPromptGRPOTrainer, model, ids, mask, keep, trainer)
    finally:
        handle.remove()
    assert len(bottom_runs) == 2  # only the group without states: its prompt, its completion
    torch.testing.assert_close(above[0], full[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(above[1], full[1], atol=1e-5, rtol=1e-5)
    assert above[2].keys() == full[2].keys() and full[2]
    for name, grad in full[2].items():
        torch.testing.assert_close(above[2][name], grad, atol=1e-5, rtol=1e-4, msg=name)
    assert [layer.self_attn.layer_idx for layer in model.get_base_model().model.layers] == [0, 1]
