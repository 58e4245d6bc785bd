"""How long the demo takes on this CPU, and the step counts that fit a time budget.

The demo's time is training updates (forward + backward through the QLoRA policy),
generation (three policies predicting the held-out steps, GRPO's rollouts) and a part that
is neither (simulation, validation, dataset, loading models). `measure_rates` times one
piece of each on this machine with the demo model: a forward + backward over a
`PROBE_TOKENS`-token sequence and `PROBE_DECODE_STEPS` decoding steps of `PROBE_ROWS` rows
after a prompt of that length, in the dtype training and GRPO's rollouts use (bf16 where
native, float32 elsewhere), and the same decoding in float32, the precision every held-out
prediction of the demo is made in (`mads_bench.demo.EVAL_DTYPE`).
`REFERENCE` holds the same two measurements beside a whole demo's stage times, measured on
the machine the defaults were chosen on; `estimate` scales each reference stage by the ratio
of its kind of work (updates: forward + backward; generation: decoding; the rest by the
slower of the two), and `fit_steps` picks the SFT and GRPO step counts that fill a budget.
It is a linear model of a few measured seconds, not a promise: it says what it assumed.

Example:
    >>> here = Rates(forward_backward_s=1.0, decode_s=1.0, float32_decode_s=2.0)
    >>> twice_as_slow = here.scaled_to(Rates(0.5, 0.5, 1.0))
    >>> plan = DemoPlan(sft_steps=80, grpo_steps=2, eval_steps=45)
    >>> estimate(plan, twice_as_slow).total_s == 2 * estimate(plan, Ratios(1, 1, 1)).total_s
    True
    >>> fitted = fit_steps(20, plan, twice_as_slow)
    >>> fitted.sft_steps < plan.sft_steps, estimate(fitted, twice_as_slow).total_s <= 20 * 60
    (True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from mads_bench.errors import UsageError

__all__ = [
    "REFERENCE",
    "DemoPlan",
    "Estimate",
    "Rates",
    "Ratios",
    "estimate",
    "fit_steps",
    "measure_rates",
]

PROBE_TOKENS = 1024
PROBE_ROWS = 8
PROBE_DECODE_STEPS = 32
MIN_SFT_STEPS = 10
"""Fewer SFT updates teach the format to nobody: `fit_steps` refuses a smaller budget."""


@dataclass(frozen=True)
class Rates:
    """Seconds of the probes (see the module docstring) on one machine."""

    forward_backward_s: float
    decode_s: float
    float32_decode_s: float

    def scaled_to(self, reference: Rates) -> Ratios:
        """How many times slower than ``reference`` this machine is, per kind of work."""
        return Ratios(
            self.forward_backward_s / reference.forward_backward_s,
            self.decode_s / reference.decode_s,
            self.float32_decode_s / reference.float32_decode_s,
        )


@dataclass(frozen=True)
class Ratios:
    """This machine's seconds over the reference's, per kind of work."""

    update: float
    generation: float
    evaluation: float  # float32 decoding


@dataclass(frozen=True)
class DemoPlan:
    """The demo's sizes that its time depends on."""

    sft_steps: int
    grpo_steps: int
    eval_steps: int


@dataclass(frozen=True)
class Reference:
    """A whole demo measured on one machine, beside its probes."""

    cpu: str
    rates: Rates
    fixed_s: float  # simulation, validation, dataset, model setup
    sft_step_s: float
    grpo_step_s: float
    eval_step_s: float  # one held-out step predicted and scored, per evaluated policy
    evaluations: int = 3  # base, SFT adapter alone, SFT + GRPO


REFERENCE = Reference(
    cpu="AMD EPYC (Zen 5), 2 cores, bf16 native",
    rates=Rates(forward_backward_s=2.51, decode_s=6.14, float32_decode_s=12.94),
    fixed_s=70.0,  # simulate + validate + dataset 42 s, the launches, loading, the probes
    sft_step_s=3.30,  # the demo's 80 SFT updates
    grpo_step_s=4.33,  # the demo's GRPO steps
    eval_step_s=2.68,  # in float32: base 119 s, SFT 123 s, trained 120 s for 45 held-out steps
)
"""A whole demo on the 2-core Zen 5 the defaults were chosen on (README, "make demo"; 705 s in
all, with `FusedDecoder`, the GRPO update on the rollouts' frozen-layer states and the
held-out predictions in float32, 2026-12-07): its stage times, and the probes timed on the
idle machine minutes before."""


@dataclass(frozen=True)
class Estimate:
    """Seconds per stage on this machine."""

    fixed_s: float
    sft_s: float
    grpo_s: float
    evaluation_s: float

    @property
    def total_s(self) -> float:
        return self.fixed_s + self.sft_s + self.grpo_s + self.evaluation_s

    def describe(self) -> str:
        """One line: the total and its parts in minutes."""
        parts = (("data", self.fixed_s), ("SFT", self.sft_s), ("GRPO", self.grpo_s),
                 ("evaluation", self.evaluation_s))  # fmt: skip
        inner = ", ".join(f"{name} {seconds / 60:.1f}" for name, seconds in parts)
        return f"about {self.total_s / 60:.0f} min ({inner} min)"


def estimate(plan: DemoPlan, ratios: Ratios, reference: Reference = REFERENCE) -> Estimate:
    """Each stage's reference seconds scaled by this machine's ratio for its kind of work."""
    slower = max(ratios.update, ratios.generation)
    return Estimate(
        fixed_s=reference.fixed_s * slower,
        sft_s=plan.sft_steps * reference.sft_step_s * ratios.update,
        grpo_s=plan.grpo_steps * reference.grpo_step_s * slower,
        evaluation_s=plan.eval_steps * reference.evaluations * reference.eval_step_s
        * ratios.evaluation,
    )  # fmt: skip


def fit_steps(
    minutes: float, plan: DemoPlan, ratios: Ratios, reference: Reference = REFERENCE
) -> DemoPlan:
    """``plan`` with SFT and GRPO steps scaled together to fill ``minutes`` (at least 1 GRPO step).

    Raises:
        `UsageError`: When not even `MIN_SFT_STEPS` SFT updates and one GRPO step fit, naming
            the smallest budget that does.
    """
    unit = estimate(replace(plan, sft_steps=1, grpo_steps=0), ratios, reference)
    per_sft = unit.sft_s
    per_grpo = estimate(replace(plan, sft_steps=0, grpo_steps=1), ratios, reference).grpo_s
    left = minutes * 60 - unit.fixed_s - unit.evaluation_s
    default = plan.sft_steps * per_sft + plan.grpo_steps * per_grpo
    scale = left / default if default > 0 else 0.0
    grpo_steps = max(1, int(plan.grpo_steps * scale))
    sft_left = (left - grpo_steps * per_grpo) / per_sft if per_sft > 0 else 0.0
    fitted = replace(
        plan, sft_steps=max(0, int(min(plan.sft_steps * scale, sft_left))), grpo_steps=grpo_steps
    )
    if fitted.sft_steps < MIN_SFT_STEPS:
        smallest = estimate(replace(plan, sft_steps=MIN_SFT_STEPS, grpo_steps=1), ratios, reference)
        raise UsageError(
            f"--minutes {minutes:g}: too little for this CPU; the demo needs at least "
            f"{smallest.total_s / 60:.0f} min here ({smallest.describe()})"
        )
    return fitted


def measure_rates(model: str) -> Rates:
    """Time the probes with ``model`` (an offline name or path) on this CPU."""
    import torch
    from transformers import AutoModelForCausalLM

    from mads_bench.models import resolve_model
    from mads_bench.precision import native_bf16

    dtype = torch.bfloat16 if native_bf16("cpu") else torch.float32
    path = resolve_model(model)
    lm = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(100, lm.config.vocab_size, (1, PROBE_TOKENS), generator=generator)
    lm.train()
    lm(tokens, labels=tokens).loss.backward()  # warm-up
    started = time.perf_counter()
    lm(tokens, labels=tokens).loss.backward()
    forward_backward = time.perf_counter() - started
    lm.eval()
    prompts = [tokens[0].roll(row).tolist() for row in range(PROBE_ROWS)]  # no shared prefill
    decoding = _decode_seconds(lm, prompts)
    if dtype == torch.float32:
        exact = decoding
    else:  # a model of its own: the fused decoder packs each model's weights once
        exact = _decode_seconds(
            AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval(), prompts
        )
    return Rates(round(forward_backward, 3), round(decoding, 3), round(exact, 3))


def _decode_seconds(lm, prompts: list[list[int]]) -> float:
    import torch

    from mads_bench.decoding import decode

    with torch.no_grad():
        decode(lm, prompts[:1], max_new_tokens=2, eos_ids=[-1])  # warm-up (packs the weights)
        started = time.perf_counter()
        decode(lm, prompts, max_new_tokens=PROBE_DECODE_STEPS, eos_ids=[-1])
        return time.perf_counter() - started
