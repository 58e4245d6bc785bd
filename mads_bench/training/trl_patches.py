"""One adjustment of TRL for CPU training: score only the labelled positions in the LM head.

TRL 1.16 replaces the LM head of both trainers with a chunked log-probability kernel that never
materialises the `(batch, seq, vocab)` logits. On Triton devices it scores only the positions
that carry a label; on every other device it scores *all* positions, so that tile shapes stay
fixed for graph compilers such as Neuron's. CPU eager mode gains nothing from fixed shapes, and
with completion-only loss (SFT) or completion log-probs (GRPO) a MADS row has ~10x more prompt
positions than labelled ones: the head then dominates a CPU step (29% of an SFT step on
SmolLM2-135M). `score_labelled_positions_on_cpu` makes CPU take TRL's own Triton-device branch
for that choice only; the tiles themselves still run in torch, and the loss is the same (TRL
zero-fills unlabelled positions either way). Both recipes call it before building the trainer.

Example:
    >>> score_labelled_positions_on_cpu()
    True
"""

from __future__ import annotations

__all__ = ["score_labelled_positions_on_cpu"]


def score_labelled_positions_on_cpu() -> bool:
    """Let TRL's fused LM head score only labelled positions on CPU (idempotent).

    Returns:
        `bool`: True when the TRL function this relies on exists (and is now patched); False
        when this TRL version has no such switch, in which case nothing is changed.
    """
    from trl.trainer import utils as trl_utils

    original = getattr(trl_utils, "_use_triton", None)
    if original is None:
        return False
    if getattr(original, "_mads_bench_patched", False):
        return True

    def use_compact_scoring(device):  # named for what TRL uses it for in this module
        return device.type == "cpu" or original(device)

    use_compact_scoring._mads_bench_patched = True
    trl_utils._use_triton = use_compact_scoring
    return True
