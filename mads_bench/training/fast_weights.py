"""Rollouts from fast weights: a plain copy of the GRPO policy that generates on CPU.

A QLoRA policy on CPU dequantises every 4-bit weight on every decoding step, and runs each
LoRA adapter as two more small matmuls beside its base layer: measured on SmolLM2-135M, its
decode is ~80x its hardware bound (`benchmarks/bench_profile.py`). `RolloutWeights` keeps a
plain model beside the trained one whose linear weights are the trained policy's own: the 4-bit
base dequantised once (bitsandbytes' `dequantize_4bit`, the weights the trainer computes with,
not the original checkpoint), each adapted layer's LoRA update `scaling * B @ A` added in
float32, the sum cast to the generation dtype (bf16 where the CPU runs it natively, float32
elsewhere). Only the adapted layers change during training, so `refresh` recomputes those
from a float32 cache of their dequantised base, after each optimizer step (the trainer's
`global_step` moves); nothing else is copied again.

How TRL 1.16 treats the difference: without vLLM it takes transformers samples as on-policy.
With `steps_per_generation * num_iterations` dividing `gradient_accumulation_steps` (all the
CPU configs) it keeps no old log-probabilities (the ratio is exactly 1) and its truncated
importance-sampling correction runs only with `use_vllm` (`vllm_importance_sampling_correction`).
So the copy must sample from the trained policy up to rounding: `tests/recipes/test_fast_weights.py`
bounds the difference between the copy's log-probabilities of sampled tokens and the trainer's
recomputation, and the loss still uses the trainer's own log-probabilities of those tokens.

Example:
    >>> weights = RolloutWeights(trainer.model)  # doctest: +SKIP
    >>> weights.model_for(trainer.state.global_step).generate(...)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["RolloutWeights", "rollout_dtype", "use_rollout_weights"]


def rollout_dtype() -> torch.dtype:
    """bf16 where this CPU runs it natively (`MADS_BENCH_BF16=0` says no), else float32."""
    from mads_bench.precision import inference_dtype

    return inference_dtype("cpu", checkpoint=torch.float32)


def use_rollout_weights(setting: str, training_args: Any) -> bool:
    """Whether GRPO generates from a `RolloutWeights` copy.

    Args:
        setting (`str`): `rollout_weights` of the recipe: `auto` (on CPU without vLLM),
            `copy` (always, where vLLM is off) or `trained` (TRL's default: the trained model).
        training_args (`GRPOConfig`): Its `use_cpu` and `use_vllm`.
    """
    if setting not in ("auto", "copy", "trained"):
        from mads_bench.errors import UsageError

        raise UsageError(f"rollout_weights {setting!r}: expected auto, copy or trained")
    if setting == "trained" or training_args.use_vllm:
        return False
    return setting == "copy" or bool(training_args.use_cpu or not torch.cuda.is_available())


def _dequantised(layer: torch.nn.Module) -> torch.Tensor:
    """A linear layer's weight in float32 (a bitsandbytes 4-bit one dequantised)."""
    weight = layer.weight
    state = getattr(weight, "quant_state", None)
    if state is None:
        return weight.detach().float()
    import bitsandbytes.functional as bnb_functional

    if getattr(state, "packing_format_for_cpu", False):
        # bitsandbytes 0.50 repacks a 4-bit weight for its AVX512-bf16 kernel at the first
        # forward in eval mode without grad (training never does); its inverse does not give
        # back the canonical weight, so the copy must be taken before any such forward
        raise ValueError(
            "RolloutWeights: a 4-bit weight was repacked by an eval-mode forward; build the "
            "copy before the model runs in eval mode"
        )
    return bnb_functional.dequantize_4bit(weight.data, state).float()


class RolloutWeights:
    """A plain copy of a (possibly 4-bit) PEFT policy for generation, refreshed on demand.

    Args:
        policy (`PeftModel | PreTrainedModel`): The model the trainer trains.
        dtype (`torch.dtype`, *optional*): Of the copy (default: `rollout_dtype()`).
    """

    def __init__(self, policy: Any, dtype: torch.dtype | None = None) -> None:
        from peft.tuners.lora import LoraLayer
        from transformers import AutoModelForCausalLM

        self.policy, self.dtype = policy, dtype or rollout_dtype()
        base = policy.get_base_model() if hasattr(policy, "get_base_model") else policy
        self._adapted: dict[str, tuple[Any, torch.Tensor]] = {}
        weights: dict[str, torch.Tensor] = {}
        for name, module in base.named_modules():
            if isinstance(module, LoraLayer):
                layer = module.get_base_layer()
                self._adapted[name] = (module, _dequantised(layer))
                weights[f"{name}.weight"] = self._adapted[name][1]
                if getattr(layer, "bias", None) is not None:
                    weights[f"{name}.bias"] = layer.bias.detach().float()
            elif isinstance(module, torch.nn.Linear) and ".base_layer" not in name:
                if not any(name.endswith(f".{part}") for part in ("lora_A", "lora_B")):
                    weights[f"{name}.weight"] = _dequantised(module)
        with torch.device("meta"):
            copy = AutoModelForCausalLM.from_config(base.config, dtype=self.dtype)
        state = {}
        for name, _ in copy.named_parameters(remove_duplicate=False):
            state[name] = weights.get(name)
        for name, tensor in base.state_dict().items():  # embeddings, norms (no LoRA inside)
            if name in state and state[name] is None:
                state[name] = tensor.detach().float()
        missing = sorted(n for n, t in state.items() if t is None)
        if missing:
            raise ValueError(f"RolloutWeights: no weights for {missing[:3]} in the policy")
        copy.load_state_dict(
            {n: t.to(self.dtype, copy=True) for n, t in state.items()}, assign=True
        )
        copy.tie_weights()
        copied = dict(copy.named_buffers())
        for name, buffer in base.named_buffers():  # rotary frequencies (not in state_dict)
            if name in copied:
                _set_buffer(copy, name, buffer)
        self.model = copy.eval().requires_grad_(False)
        self.model.generation_config = base.generation_config
        self._step: int | None = None
        self.refresh()

    @torch.no_grad()
    def refresh(self) -> None:
        """Copy the adapters' current weights in: `W = dequantised base + scaling * B @ A`."""
        for name, (module, base_weight) in self._adapted.items():
            weight = base_weight.clone()
            for adapter in module.active_adapters:
                if adapter in module.lora_A:
                    a = module.lora_A[adapter].weight.detach().float()
                    b = module.lora_B[adapter].weight.detach().float()
                    weight += module.scaling[adapter] * (b @ a)
            self.model.get_submodule(name).weight.copy_(weight.to(self.dtype))

    def model_for(self, step: int) -> Any:
        """The copy, refreshed first if the trainer has taken an optimizer step since."""
        if step != self._step:
            self.refresh()
            self._step = step
        return self.model


def _set_buffer(model: torch.nn.Module, name: str, value: torch.Tensor) -> None:
    owner, _, leaf = name.rpartition(".")
    module = model.get_submodule(owner) if owner else model
    if leaf in dict(module.named_buffers(recurse=False)):
        module.register_buffer(leaf, value.detach().clone(), persistent=False)
