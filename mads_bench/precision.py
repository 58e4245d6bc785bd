"""Which float type to compute in: bf16 where the hardware runs it natively, float32 elsewhere.

CPUs differ between machines. On one with `avx512_bf16` (AMD Zen 4/5, Intel Cooper Lake and
later) or AMX, torch 2.13's bf16 matmuls run 3.7-4.6x faster than float32 (SPEC §3); on one
without, bf16 is emulated and slower than float32. So nothing here assumes: `native_bf16` asks
torch what this CPU (or GPU) can do, and `MADS_BENCH_BF16=0|1` overrides it (to compare the two
side by side, or to rule bf16 out when chasing a numerical difference).

Example:
    >>> isinstance(native_bf16("cpu"), bool)
    True
    >>> inference_dtype("cpu", checkpoint=torch.bfloat16)
    torch.bfloat16
"""

from __future__ import annotations

import os

import torch

__all__ = ["BF16_ENV", "describe_cpu", "inference_dtype", "native_bf16"]

BF16_ENV = "MADS_BENCH_BF16"
"""`1` forces bf16 where the choice is automatic, `0` forces float32; unset: detect."""


def _cpu_has_bf16() -> bool:
    cpu = getattr(torch, "cpu", None)
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(cpu, name, lambda: False)()) for name in checks)


def native_bf16(device: str | torch.device = "cpu") -> bool:
    """Whether `device` computes bf16 natively (so bf16 autocast makes it faster).

    Args:
        device (`str | torch.device`): `cpu`, `cuda`, `cuda:1`, ...

    Returns:
        `bool`: `$MADS_BENCH_BF16` when set (`1`/`true`/`0`/`false`); else, on CPU, whether
        torch reports `avx512_bf16` or AMX; on CUDA, `torch.cuda.is_bf16_supported()`.

    Raises:
        `ValueError`: When `$MADS_BENCH_BF16` holds anything else.
    """
    forced = os.environ.get(BF16_ENV, "").strip().lower()
    if forced:
        if forced not in ("0", "1", "true", "false"):
            raise ValueError(f"${BF16_ENV} must be 0 or 1, got {forced!r}")
        return forced in ("1", "true")
    kind = torch.device(device).type
    if kind == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return kind == "cpu" and _cpu_has_bf16()


def inference_dtype(device: str | torch.device, *, checkpoint: torch.dtype) -> torch.dtype:
    """The weights dtype to generate in: a float32 checkpoint runs in bf16 where that is native.

    Args:
        device (`str | torch.device`): Where the model runs.
        checkpoint (`torch.dtype`): The checkpoint's own dtype (kept unless it is float32).

    Returns:
        `torch.dtype`
    """
    if checkpoint == torch.float32 and native_bf16(device):
        return torch.bfloat16
    return checkpoint


def describe_cpu() -> str:
    """This CPU's model name and core count, and whether bf16 is native (for reports).

    Example:
        >>> "bf16" in describe_cpu()
        True
    """
    import platform

    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            name = next(
                (line.split(":", 1)[1].strip() for line in info if line.startswith("model name")),
                name,
            )
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{name}, {cores} cores, bf16 {'native' if _cpu_has_bf16() else 'not native'}"
