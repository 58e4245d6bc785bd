"""`score_labelled_positions_on_cpu`: the same loss from a fraction of the LM-head work on CPU."""

from __future__ import annotations

import importlib

import torch
from trl.kernels import chunked_logprob
from trl.trainer import utils as trl_utils

from mads_bench.models import load_causal_lm
from mads_bench.training import score_labelled_positions_on_cpu

APPLY = chunked_logprob.ChunkedLogProbFunction.apply


def _fused_loss(monkeypatch, patched: bool) -> tuple[float, list[int]]:
    """Loss of a completion-only batch through TRL's fused head, and the positions scored."""
    importlib.reload(trl_utils)  # a fresh, unpatched TRL module each time
    if patched:
        assert score_labelled_positions_on_cpu() is True
    scored: list[int] = []

    def spy(hidden, *args):
        scored.append(hidden.shape[0])
        return APPLY(hidden, *args)

    monkeypatch.setattr(trl_utils._ChunkedLogProbFunction, "apply", spy)
    model = load_causal_lm("tiny-lm")
    trl_utils.add_fused_lm_head(model)
    torch.manual_seed(0)
    ids = torch.randint(0, 1000, (2, 40))
    labels = ids.clone()
    labels[:, :32] = -100  # a long prompt, 8 completion tokens per row
    loss = model(input_ids=ids, labels=labels, fused_lm_head=True).loss
    return loss.item(), scored


def test_patched_head_scores_only_completion_positions_with_the_same_loss(monkeypatch) -> None:
    full_loss, full_scored = _fused_loss(monkeypatch, patched=False)
    loss, scored = _fused_loss(monkeypatch, patched=True)
    # unpatched TRL scores all 2 x 39 shifted positions on CPU; patched, only the 2 x 8 labelled
    assert full_scored == [78] and scored == [16]
    assert abs(loss - full_loss) < 1e-5
    # a second call changes nothing
    assert score_labelled_positions_on_cpu() is True
    importlib.reload(trl_utils)
