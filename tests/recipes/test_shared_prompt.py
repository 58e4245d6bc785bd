"""A group's completions scored on one run of their prompt give TRL's per-row log-probabilities,
entropies and gradients (the policy: tiny-lm in 4-bit with a random LoRA adapter, float32)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from accelerate import Accelerator
from trl import GRPOTrainer
from trl.trainer.utils import add_fused_lm_head

from mads_bench.training.shared_prompt import SharedPromptGRPOTrainer, completion_batch
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


def _score(cls, model, ids, mask, keep):
    model.zero_grad()
    logps, entropy, _ = cls._get_per_token_logps_and_entropies(
        _trainer(cls), model, ids, mask, keep, compute_entropy=True
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
