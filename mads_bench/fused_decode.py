"""One-token decoding steps of a Llama-style model on CPU, without transformers' module stack.

A decoding step of SmolLM2-135M runs 30 layers for one token per row. Through transformers'
forward each layer is seven `nn.Linear` calls and the modules, hooks and keyword plumbing
around them; on the 2-core Zen 5 the step took 22-23 ms for two rows of ~1.1k cached tokens,
of which the matmuls' memory traffic bounds about 6 ms. `FusedDecoder` runs the same
arithmetic as a plain loop over the layers:

- q/k/v and gate/up are concatenated into one weight each (four matmuls per layer, not seven);
- on CPUs with oneDNN the weights are pre-packed in its blocked layout
  (`torch.ops.mkldnn._reorder_linear_weight`, what inductor's weight freezing uses), which
  runs skinny (1-8 row) matmuls about twice as fast as `F.linear` on plain weights in bf16,
  and about five times in float32, where `F.linear` at two rows ran once per row;
- RMSNorm, rotary embeddings and attention are the operations of transformers' Llama layers
  with `mads_decode` attention, in the same order and dtypes.

Measured side by side in one process (2 rows, ~1.1k cached tokens, SmolLM2-135M, Zen 5): a
step takes 15.5 ms against 23.3 ms in bf16 (logits identical) and 25 ms against 66 ms in
float32 (logits within 5e-5). Prefill and every multi-token forward still run through
transformers. The packed weights are a second copy of the model's weights (270 MB for
SmolLM2-135M in bf16); a decoder re-packs any layer whose source weights changed in place
(checked at each step through the tensors' version counters), so a GRPO rollout copy that is
re-merged after an optimizer step decodes with its new weights.

`fused_decoder(model)` returns the decoder (cached per model) or `None` when the model is not
a supported shape or `MADS_BENCH_FUSED_DECODE=0`; `DecodeEngine` then uses the model's own
forward.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

import torch
import torch.nn.functional as F

__all__ = ["ENV", "FusedDecoder", "fused_decoder", "unsupported_reason"]

ENV = "MADS_BENCH_FUSED_DECODE"
_STATIC_ROPE = frozenset({"default", "linear", "llama3"})  # inv_freq fixed at load time
_MODEL_TYPES = frozenset({"llama", "qwen2"})
_CACHE: weakref.WeakKeyDictionary[Any, FusedDecoder | None] = weakref.WeakKeyDictionary()


def unsupported_reason(model: Any) -> str | None:
    """Why `FusedDecoder` cannot run `model`, or `None` when it can."""
    config = getattr(model, "config", None)
    inner = getattr(model, "model", None)
    if getattr(config, "model_type", None) not in _MODEL_TYPES:
        return f"model_type {getattr(config, 'model_type', None)!r} is not Llama-style"
    if inner is None or not hasattr(model, "lm_head"):
        return "not a transformers causal LM with a `model` body and an `lm_head`"
    if model.device.type != "cpu":
        return "not on CPU"
    if model.dtype not in (torch.float32, torch.bfloat16):
        return f"dtype {model.dtype}"
    if getattr(config, "hidden_act", None) != "silu" or getattr(config, "pretraining_tp", 1) > 1:
        return "not a SiLU-gated MLP without tensor-parallel slices"
    if any(kind != "full_attention" for kind in getattr(config, "layer_types", None) or ()):
        return "sliding-window layers"
    if not getattr(inner, "layers", None):
        return "no decoder layers at `model.layers`"
    if getattr(getattr(inner, "rotary_emb", None), "rope_type", None) not in _STATIC_ROPE:
        return "rotary embeddings that change with the sequence length"
    for layer in inner.layers:
        attention, mlp = layer.self_attn, layer.mlp
        projections = (attention.q_proj, attention.k_proj, attention.v_proj, attention.o_proj,
                       mlp.gate_proj, mlp.up_proj, mlp.down_proj)  # fmt: skip
        if any(type(p) is not torch.nn.Linear for p in projections):
            return "projections that are not plain nn.Linear (quantised or adapter-wrapped)"
        if hasattr(attention, "q_norm") or attention.o_proj.bias is not None:
            return "attention with query/key norms or an output bias"
        if any(p.bias is not None for p in projections[4:]):
            return "an MLP with biases"
    if any(p.is_inference() for p in model.parameters()):
        return "weights created in inference mode (their in-place updates cannot be tracked)"
    return None


def fused_decoder(model: Any) -> FusedDecoder | None:
    """The model's `FusedDecoder` (built once per model), or `None` when it is unsupported or
    switched off with `MADS_BENCH_FUSED_DECODE=0`."""
    if os.environ.get(ENV, "1").strip().lower() in {"0", "false", "no", "off"}:
        return None
    try:
        return _CACHE[model]
    except KeyError:
        pass
    decoder = FusedDecoder(model) if unsupported_reason(model) is None else None
    _CACHE[model] = decoder
    return decoder


class _Linear:
    """One weight (and bias) ready for skinny matmuls: oneDNN-packed where that works."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None) -> None:
        self.bias = bias
        self.packed = _pack(weight)
        self.weight = None if self.packed is not None else weight

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.packed is None:
            return F.linear(x, self.weight, self.bias)
        return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")


def _pack(weight: torch.Tensor) -> torch.Tensor | None:
    if not torch.backends.mkldnn.is_available():
        return None
    try:
        packed = torch.ops.mkldnn._reorder_linear_weight(weight, 1)
        probe = torch.zeros(1, weight.shape[1], dtype=weight.dtype)
        torch.ops.mkldnn._linear_pointwise(probe, packed, None, "none", [], "")
    except (RuntimeError, AttributeError, NotImplementedError):
        return None  # no oneDNN kernel for this dtype on this CPU: plain F.linear
    return packed


def _cat(tensors: list[torch.Tensor | None]) -> torch.Tensor | None:
    if all(t is None for t in tensors):
        return None
    return torch.cat(tensors)  # type: ignore[arg-type]  # fused biases: all or none


class _Layer:
    """One decoder layer's fused weights and the source tensors they were made from."""

    def __init__(self, layer: Any) -> None:
        attention, mlp = layer.self_attn, layer.mlp
        self.sources = [p for p in layer.parameters()]
        self.signature = _signature(self.sources)
        with torch.no_grad():
            projections = (attention.q_proj, attention.k_proj, attention.v_proj)
            self.qkv = _Linear(
                torch.cat([p.weight for p in projections]), _cat([p.bias for p in projections])
            )
            self.o = _Linear(attention.o_proj.weight.detach(), None)
            self.gate_up = _Linear(torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight]), None)
            self.down = _Linear(mlp.down_proj.weight.detach(), None)
        self.input_norm = layer.input_layernorm
        self.post_norm = layer.post_attention_layernorm
        self.scaling = attention.scaling


def _signature(tensors: list[torch.Tensor]) -> tuple[tuple[int, int], ...]:
    return tuple((t.data_ptr(), t._version) for t in tensors)


class FusedDecoder:
    """Decoding steps (one new token per row) of a supported model; see the module docstring.

    Args:
        model: A Llama-style transformers causal LM on CPU (`unsupported_reason` is `None`).
    """

    def __init__(self, model: Any) -> None:
        reason = unsupported_reason(model)
        if reason is not None:
            raise ValueError(f"FusedDecoder cannot run this model: {reason}")
        inner, config = model.model, model.config
        self._model_layers = list(inner.layers)
        self.layers = [_Layer(layer) for layer in self._model_layers]
        self.embed = inner.embed_tokens
        self.norm = inner.norm
        self._head_source = model.lm_head.weight
        self._head_signature = _signature([self._head_source])
        self.head = _Linear(self._head_source.detach(), model.lm_head.bias)
        self.heads = config.num_attention_heads
        self.kv_heads = config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.intermediate = config.intermediate_size
        rotary = inner.rotary_emb
        self.inv_freq, self.rope_scaling = rotary.inv_freq, rotary.attention_scaling

    def refresh(self) -> int:
        """Re-pack every layer whose weights changed since it was packed; returns how many."""
        changed = 0
        for index, layer in enumerate(self.layers):
            if _signature(layer.sources) != layer.signature:
                self.layers[index] = _Layer(self._model_layers[index])
                changed += 1
        if _signature([self._head_source]) != self._head_signature:
            self._head_signature = _signature([self._head_source])
            self.head = _Linear(self._head_source.detach(), self.head.bias)
            changed += 1
        return changed

    @torch.inference_mode()
    def __call__(
        self,
        input_ids: torch.Tensor,
        position_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        cache: Any,
        capture: list[torch.Tensor] | None = None,
        capture_layer: int = 0,
    ) -> torch.Tensor:
        """One step: `input_ids` and `position_ids` `[rows]`, `attention_mask` `[rows,
        cached + 1]` (0 on padding), `cache` a `DynamicCache` whose layers take the new keys
        and values; returns the next-token logits `[rows, vocab]`. With `capture`, the
        hidden states entering layer `capture_layer` (`[rows, hidden]`) are appended to it."""
        self.refresh()
        rows, heads, groups, dim = input_ids.shape[0], self.heads, self.kv_heads, self.head_dim
        hidden = self.embed(input_ids)
        cos, sin = self._rotary(position_ids, hidden.dtype)
        blocked = torch.zeros(attention_mask.shape, dtype=torch.float32)  # -inf on padding
        blocked = blocked.masked_fill_(attention_mask == 0, float("-inf"))[:, None, None, :]
        query_width, key_width = heads * dim, groups * dim
        for index, (layer, cache_layer) in enumerate(zip(self.layers, cache.layers, strict=True)):
            if capture is not None and index == capture_layer:
                capture.append(hidden)
            qkv = layer.qkv(self.norm_like(layer.input_norm, hidden))
            rotated = _rotate(qkv[:, : query_width + key_width].view(rows, heads + groups, dim),
                              cos, sin)  # fmt: skip
            query = rotated[:, :heads].reshape(rows, groups, heads // groups, dim)
            key = rotated[:, heads:].view(rows, groups, 1, dim)
            value = qkv[:, query_width + key_width :].view(rows, groups, 1, dim)
            keys, values = cache_layer.update(key, value)
            # the order and dtypes of `mads_bench.decode_attention` (keys @ queries^T)
            scores = torch.matmul(keys, query.transpose(-1, -2)).transpose(-1, -2)
            scores = torch.add(blocked, scores.float(), alpha=layer.scaling)
            weights = torch.softmax(scores, dim=-1).to(values.dtype)
            attended = torch.matmul(weights, values).reshape(rows, query_width)
            hidden = hidden + layer.o(attended)
            gate_up = layer.gate_up(self.norm_like(layer.post_norm, hidden))
            activated = F.silu(gate_up[:, : self.intermediate]) * gate_up[:, self.intermediate :]
            hidden = hidden + layer.down(activated)
        return self.head(self.norm_like(self.norm, hidden))

    def norm_like(self, norm: Any, hidden: torch.Tensor) -> torch.Tensor:
        """transformers' Llama RMSNorm: in float32, then back to the input dtype, then the
        weight."""
        normed = F.rms_norm(hidden.float(), hidden.shape[-1:], eps=norm.variance_epsilon)
        return norm.weight * normed.to(hidden.dtype)

    def _rotary(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
        """cos and sin of each row's angles `[rows, 1, head_dim]`; sin's first half negated,
        so that rotating is `x * cos + roll(x, half) * sin` (transformers' `rotate_half`)."""
        frequencies = positions[:, None].float() * self.inv_freq[None, :].float()
        angles = torch.cat([frequencies, frequencies], dim=-1)
        cos = (angles.cos() * self.rope_scaling).to(dtype)[:, None, :]
        sin = (angles.sin() * self.rope_scaling).to(dtype)[:, None, :]
        half = sin.shape[-1] // 2
        return cos, torch.cat([-sin[..., :half], sin[..., half:]], dim=-1)


def _rotate(states: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    return states * cos + states.roll(states.shape[-1] // 2, dims=-1) * signed_sin
