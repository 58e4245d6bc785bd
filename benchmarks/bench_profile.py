"""Where the demo's time goes: one SFT step, one GRPO step, one evaluation step on SmolLM2-135M.

Each stage is timed in this process on the demo's model set-up (QLoRA NF4 + double
quantisation, LoRA r=16 on the top 8 of 30 layers; bf16 autocast where this CPU runs bf16
natively, float32 elsewhere, as `native_bf16: true` in the demo configs) and set against its
bound: the larger of the stage's matmul FLOPs at the matmul throughput measured here first, in
the dtype used (1024x1024 matmuls, 2 threads), and, for a decode, the bytes it must read (all
weights and the KV cache at every step) at the memory bandwidth measured here. `measured /
bound` says how far a stage is from what the CPU allows.

Stages:
- SFT step: forward over one merged sequence of 1,650 tokens (the demo's typical merged turn;
  loss on its last 250), of which bitsandbytes' 4-bit matmuls (dequantise + gemm, from the
  profiler), the backward pass (down to the lowest adapted layer), the optimizer step.
- GRPO step: generation of 2 completions of 160 tokens from one 1,350-token prompt (prefill,
  then decode), the forward + backward over both sequences for the policy loss; generated
  from the 4-bit policy itself (TRL's `generate`, `rollout_weights: trained`) and from the
  merged copy through the decode engine (what step and conversation rollouts run on CPU).
- Evaluation step: the merged model (no bitsandbytes) in the inference dtype, 8 prompts of
  1,350 tokens: prefill, then 192 decoded tokens, through the decode engine (what
  `eval`, `eval online`, `simulate` and `predict_steps` run: the transformers backend) and,
  side by side, through one padded `generate` call.
- Decoding steps through `FusedDecoder` (the engine's default for Llama-style models on CPU)
  against the model's own forward (`MADS_BENCH_FUSED_DECODE=0`), for the rollout copy and the
  evaluation model, side by side.

FLOPs count 2 per multiply-add over the linear layers and the LM head (tied to the embedding),
plus 4 * layers * T^2 * hidden for causal attention's two matmuls (halved for the mask); the
backward pass of the adapted layers is 2x their forward, the frozen layers below cost nothing.
"""

from __future__ import annotations

import os
import time
from unittest import mock

import torch

from mads_bench.models import resolve_model
from mads_bench.precision import describe_cpu, native_bf16

MODEL = "smollm2-135m"
SFT_TOKENS, SFT_LABELLED = 1650, 250
PROMPT_TOKENS, GRPO_NEW, EVAL_NEW, EVAL_BATCH = 1350, 160, 192, 8
TOP_LAYERS = 8


def matmul_gflops(dtype: torch.dtype, n: int = 1024, repeats: int = 20) -> float:
    """Measured matmul throughput in GFLOPS for `n x n` matrices of `dtype`."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    a @ b
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * n**3 * repeats / (time.perf_counter() - start) / 1e9


def memory_gbps(megabytes: int = 512, repeats: int = 5) -> float:
    """Measured read bandwidth in GB/s: summing a float32 tensor far larger than the caches."""
    x = torch.ones(megabytes * 2**20 // 4)
    x.sum()
    start = time.perf_counter()
    for _ in range(repeats):
        x.sum()
    return x.numel() * 4 * repeats / (time.perf_counter() - start) / 1e9


def _decode_bytes(
    config, steps: int, batch: int, context: int, weight_bytes: float, kv_bytes: int
) -> float:
    """Bytes a decode of `steps` tokens must read: every weight once per step (`weight_bytes`
    per parameter; the tied LM head once), and each row's KV cache as it grows."""
    h, i, kv = config.hidden_size, config.intermediate_size, config.num_key_value_heads
    head = h // config.num_attention_heads
    layers = config.num_hidden_layers
    params = layers * (2 * h * h + 2 * h * kv * head + 3 * h * i) + h * config.vocab_size
    kv_per_token = 2 * layers * kv * head * kv_bytes
    cache = sum(batch * (context + t) * kv_per_token for t in range(steps))
    return steps * params * weight_bytes + cache  # fmt: skip


def _forward_flops(
    config, tokens: int, layers: int | None = None, context: int = 0, logits: int | None = None
) -> float:
    """Matmul FLOPs of a forward pass of `tokens` new tokens after `context` cached ones.

    `layers` counts only that many decoder layers (no LM head); `logits` is the number of
    positions the LM head scores (all `tokens` by default).
    """
    h, i, kv = config.hidden_size, config.intermediate_size, config.num_key_value_heads
    head = h // config.num_attention_heads
    per_layer = 2 * tokens * (2 * h * h + 2 * h * kv * head + 3 * h * i)
    attention = 4 * tokens * (context + tokens / 2) * h
    n_layers = config.num_hidden_layers if layers is None else layers
    scored = tokens if logits is None else logits
    lm_head = 2 * scored * h * config.vocab_size if layers is None else 0
    return n_layers * (per_layer + attention) + lm_head


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _qlora_policy(bf16: bool):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    quantization = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16 if bf16 else torch.float32,
    )
    model = AutoModelForCausalLM.from_pretrained(
        resolve_model(MODEL), quantization_config=quantization, device_map="cpu",
        dtype=torch.float32,
    )  # fmt: skip
    depth = model.config.num_hidden_layers
    lora = LoraConfig(
        r=16, lora_alpha=32, task_type="CAUSAL_LM",
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                        "down_proj"],
        layers_to_transform=list(range(depth - TOP_LAYERS, depth)),
    )  # fmt: skip
    return get_peft_model(model, lora)


def _bnb_seconds(profile) -> float:
    events = profile.key_averages()
    return sum(e.self_cpu_time_total for e in events if "bitsandbytes" in e.key) / 1e6


def _sft_and_grpo(bf16: bool, gflops: float, gbps: float) -> list[dict]:
    from mads_bench.training.fast_weights import RolloutWeights

    model = _qlora_policy(bf16)
    config = model.config
    dtype = torch.bfloat16 if bf16 else torch.float32
    fast = RolloutWeights(model, dtype=dtype)  # before any eval-mode forward (see its docs)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    ids = torch.randint(0, config.vocab_size, (1, SFT_TOKENS))
    labels = ids.clone()
    labels[:, : SFT_TOKENS - SFT_LABELLED] = -100
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)

    def forward():
        with autocast:
            return model(input_ids=ids, labels=labels).loss

    model.train()
    forward().backward()  # warm-up
    optimizer.zero_grad()
    with torch.profiler.profile() as profile:
        start = time.perf_counter()
        loss = forward()
        fwd = time.perf_counter() - start
    bnb = _bnb_seconds(profile)
    bwd = _timed(loss.backward)
    opt = _timed(optimizer.step)
    optimizer.zero_grad()
    fwd_flops = _forward_flops(config, SFT_TOKENS)
    # the adapted layers twice their forward; the frozen LM head only passes the gradient on
    bwd_flops = 2 * _forward_flops(config, SFT_TOKENS, TOP_LAYERS) + 2 * SFT_TOKENS * (
        config.hidden_size * config.vocab_size
    )
    sft_total = fwd + bwd + opt
    rows = [
        ("SFT forward", fwd, fwd_flops, sft_total, None),
        ("SFT of which bitsandbytes ops (profiler self time)", bnb, None, sft_total, None),
        ("SFT backward", bwd, bwd_flops, sft_total, None),
        ("SFT optimizer", opt, None, sft_total, None),
    ]

    model.eval()
    prompt = torch.randint(0, config.vocab_size, (2, PROMPT_TOKENS))
    with torch.inference_mode(), autocast:
        prefill = _timed(lambda: model(input_ids=prompt, logits_to_keep=1))
        generate = _timed(
            lambda: model.generate(
                input_ids=prompt, attention_mask=torch.ones_like(prompt), do_sample=True,
                max_new_tokens=GRPO_NEW, min_new_tokens=GRPO_NEW, pad_token_id=0,
            )
        )  # fmt: skip
    decode = max(generate - prefill, 0.0)
    # what the rollouts run: the copy through the decode engine (temperature sampling)
    fast_prefill, fast_decode = _engine_seconds(fast.model, prompt, GRPO_NEW, temperature=0.6)
    with _unfused():
        unfused_decode = _engine_seconds(fast.model, prompt, GRPO_NEW, temperature=0.6)[1]
    refresh = _timed(fast.refresh)
    model.train()
    sequences = torch.randint(0, config.vocab_size, (2, PROMPT_TOKENS + GRPO_NEW))
    targets = sequences.clone()
    targets[:, :PROMPT_TOKENS] = -100

    def policy_step():
        with autocast:
            loss = model(input_ids=sequences, labels=targets).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    train = _timed(policy_step)
    grpo_total = prefill + decode + train
    prefill_flops = 2 * _forward_flops(config, PROMPT_TOKENS, logits=1)
    decode_flops = 2 * sum(
        _forward_flops(config, 1, context=PROMPT_TOKENS + t) for t in range(GRPO_NEW)
    )
    train_flops = 2 * (
        _forward_flops(config, PROMPT_TOKENS + GRPO_NEW)
        + 2 * _forward_flops(config, PROMPT_TOKENS + GRPO_NEW, TOP_LAYERS)
    )
    width = 2 if bf16 else 4
    # an ideal 4-bit kernel reads half a byte per weight (the adapter's are few)
    bytes_4bit = _decode_bytes(config, GRPO_NEW, 2, PROMPT_TOKENS, 0.5, width)
    bytes_copy = _decode_bytes(config, GRPO_NEW, 2, PROMPT_TOKENS, width, width)
    fast_total = fast_prefill + fast_decode + refresh + train
    rows += [
        ("GRPO prefill (2 x 1,350 tokens)", prefill, prefill_flops, grpo_total, None),
        (f"GRPO decode (2 x {GRPO_NEW} tokens), 4-bit base + adapter", decode, decode_flops,
         grpo_total, bytes_4bit),
        ("GRPO policy forward + backward + optimizer", train, train_flops, grpo_total, None),
        ("GRPO prefill from the merged copy (row by row)", fast_prefill, prefill_flops,
         fast_total, None),
        (f"GRPO decode (2 x {GRPO_NEW} tokens) from the merged copy, decode engine",
         fast_decode, decode_flops, fast_total, bytes_copy),
        ("GRPO refresh of the merged copy (per optimizer step)", refresh, None, fast_total,
         None),
    ]  # fmt: skip
    out = [
        _row(name, seconds, flops, total, gflops, bf16, nbytes, gbps)
        for name, seconds, flops, total, nbytes in rows
    ]
    out.append(_fused_ratio("GRPO decode from the merged copy", unfused_decode, fast_decode))
    out.append({
        "measure": "GRPO step, 4-bit generation / merged-copy generation", "unit": "x",
        "value": grpo_total / fast_total,
        "note": f"{grpo_total:.1f} s vs {fast_total:.1f} s, same prompt, same run "
        "(prefill + decode + policy update; the copy's refresh included)",
    })  # fmt: skip
    return out


def _evaluation(bf16: bool, gflops: float, gbps: float) -> list[dict]:
    from transformers import AutoModelForCausalLM

    dtype = torch.bfloat16 if bf16 else torch.float32
    model = AutoModelForCausalLM.from_pretrained(resolve_model(MODEL), dtype=dtype).eval()
    config = model.config
    prompts = torch.randint(0, config.vocab_size, (EVAL_BATCH, PROMPT_TOKENS))
    mask = torch.ones_like(prompts)
    with torch.inference_mode():
        model(input_ids=prompts[:, :64])  # warm-up
        prefill = _timed(lambda: model(input_ids=prompts, attention_mask=mask, logits_to_keep=1))
        generate = _timed(
            lambda: model.generate(
                input_ids=prompts, attention_mask=mask, do_sample=False, pad_token_id=0,
                max_new_tokens=EVAL_NEW, min_new_tokens=EVAL_NEW,
            )
        )  # fmt: skip
    decode = max(generate - prefill, 0.0)
    engine_prefill, engine_decode = _engine_seconds(model, prompts, EVAL_NEW, temperature=0.0)
    with _unfused():
        unfused_decode = _engine_seconds(model, prompts, EVAL_NEW, temperature=0.0)[1]
    total = engine_prefill + engine_decode
    width = 2 if bf16 else 4
    prefill_flops = EVAL_BATCH * _forward_flops(config, PROMPT_TOKENS, logits=1)
    decode_flops = EVAL_BATCH * sum(
        _forward_flops(config, 1, context=PROMPT_TOKENS + t) for t in range(EVAL_NEW)
    )
    nbytes = _decode_bytes(config, EVAL_NEW, EVAL_BATCH, PROMPT_TOKENS, width, width)
    return [
        _row(f"eval prefill ({EVAL_BATCH} x 1,350 tokens), row by row", engine_prefill,
             prefill_flops, total, gflops, bf16),
        _row(f"eval and online decode ({EVAL_BATCH} x {EVAL_NEW} tokens), decode engine",
             engine_decode, decode_flops, total, gflops, bf16, nbytes, gbps),
        _row(f"eval prefill ({EVAL_BATCH} x 1,350 tokens), one padded batch", prefill,
             prefill_flops, prefill + decode, gflops, bf16),
        _row(f"eval decode ({EVAL_BATCH} x {EVAL_NEW} tokens), plain generate", decode,
             decode_flops, prefill + decode, gflops, bf16, nbytes, gbps),
        {"measure": "eval decode, plain generate / decode engine", "unit": "x",
         "value": decode / engine_decode,
         "note": f"{decode:.1f} s vs {engine_decode:.1f} s, same prompts, same run"},
        _fused_ratio("eval decode", unfused_decode, engine_decode),
    ]  # fmt: skip


def _unfused():
    """The decode engine with its decoding steps through the model's own forward."""
    from mads_bench.fused_decode import ENV

    return mock.patch.dict(os.environ, {ENV: "0"})


def _fused_ratio(stage: str, unfused: float, fused: float) -> dict:
    return {"measure": f"{stage}, model forward / FusedDecoder", "unit": "x",
            "value": unfused / fused,
            "note": f"{unfused:.2f} s vs {fused:.2f} s, decode engine, same prompts, same run "
            "(MADS_BENCH_FUSED_DECODE=0 against the default)"}  # fmt: skip


def _engine_seconds(model, prompts: torch.Tensor, new: int, temperature: float):
    """(prefill, decode) seconds of `mads_bench.decoding.decode` on `prompts` for `new`
    tokens each (no EOS: every row runs to the end); prefill = a 1-token run."""
    from mads_bench.decoding import decode

    rows = prompts.tolist()

    def run(tokens: int) -> float:
        return _timed(lambda: decode(model, rows, max_new_tokens=tokens, eos_ids=[],
                                     temperature=temperature, generator=0,
                                     max_batch=len(rows)))  # fmt: skip

    prefill = run(1)
    return prefill, max(run(new) - prefill, 0.0)


def _row(name, seconds, flops, total, gflops, bf16, nbytes=None, gbps=None) -> dict:
    """A stage's row; its bound is the larger of its FLOPs at the matmul rate and (when
    `nbytes` is given) the bytes it must read at the measured bandwidth."""
    dtype = "bf16" if bf16 else "fp32"
    bound = None if flops is None else flops / (gflops * 1e9)
    note = f"{seconds / total:.0%} of the step; {dtype}"
    if bound is not None:
        note += f"; bound {bound:.2f} s ({flops / 1e12:.2f} TFLOP at {gflops:.0f} GFLOPS"
        if nbytes is not None:
            memory = nbytes / (gbps * 1e9)
            note += f"; {nbytes / 1e9:.1f} GB at {gbps:.0f} GB/s: {memory:.2f} s"
            bound = max(bound, memory)
        note += ")"
        return {"measure": f"{name}, measured / bound", "value": seconds / bound, "unit": "x",
                "note": f"{seconds:.2f} s measured; {note}"}  # fmt: skip
    return {"measure": name, "value": seconds, "unit": "s", "note": note}


def run() -> list[dict]:
    torch.manual_seed(0)
    bf16 = native_bf16("cpu")
    gflops = {dtype: matmul_gflops(dtype) for dtype in (torch.float32, torch.bfloat16)}
    used = gflops[torch.bfloat16 if bf16 else torch.float32]
    rows = [
        {"measure": f"matmul 1024^2 {name}", "value": gflops[dtype], "unit": "GFLOPS",
         "note": describe_cpu()}
        for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16))
    ]  # fmt: skip
    gbps = memory_gbps()
    rows.append({"measure": "memory read bandwidth", "value": gbps, "unit": "GB/s",
                 "note": "sum over a 512 MiB float32 tensor, 2 threads"})  # fmt: skip
    rows += _sft_and_grpo(bf16, used, gbps)
    rows += _evaluation(bf16, used, gbps)
    if bf16:  # what a CPU without native bf16 gets (MADS_BENCH_BF16=0)
        fp32 = gflops[torch.float32]
        rows += [_in_fp32(r) for r in _sft_and_grpo(False, fp32, gbps) if _is_generation(r)]
        rows += [_in_fp32(r) for r in _evaluation(False, fp32, gbps) if _is_generation(r)]
    return rows


def _is_generation(row: dict) -> bool:
    return any(word in row["measure"] for word in ("decode", "generation", "refresh"))


def _in_fp32(row: dict) -> dict:
    return {**row, "measure": f"{row['measure']} [float32, as MADS_BENCH_BF16=0]"}
