"""The demo's time estimate and `--minutes`: stages scale with the measured probes."""

from __future__ import annotations

import pytest

from mads_bench.demo_budget import (
    MIN_SFT_STEPS,
    REFERENCE,
    DemoPlan,
    Rates,
    estimate,
    fit_steps,
    measure_rates,
)
from mads_bench.errors import UsageError

PLAN = DemoPlan(sft_steps=80, grpo_steps=2, eval_steps=45)


def ratios(update: float, generation: float, evaluation: float | None = None):
    base = REFERENCE.rates
    evaluation = generation if evaluation is None else evaluation
    return Rates(
        base.forward_backward_s * update,
        base.decode_s * generation,
        base.float32_decode_s * evaluation,
    ).scaled_to(base)


def test_the_reference_machine_gets_the_reference_demo() -> None:
    got = estimate(PLAN, ratios(1, 1))
    assert got.sft_s == pytest.approx(80 * REFERENCE.sft_step_s)
    assert got.evaluation_s == pytest.approx(45 * 3 * REFERENCE.eval_step_s)
    assert got.total_s == pytest.approx(got.fixed_s + got.sft_s + got.grpo_s + got.evaluation_s)


def test_each_kind_of_work_scales_with_its_own_probe() -> None:
    # a CPU without bf16: updates 3x slower, decoding 1.5x, float32 decoding 1.2x
    slow, fast = estimate(PLAN, ratios(3, 1.5, 1.2)), estimate(PLAN, ratios(1, 1))
    assert slow.sft_s == pytest.approx(3 * fast.sft_s)
    assert slow.grpo_s == pytest.approx(3 * fast.grpo_s)  # the slower of update and rollouts
    assert slow.evaluation_s == pytest.approx(1.2 * fast.evaluation_s)  # float32 predictions
    assert slow.fixed_s == pytest.approx(3 * fast.fixed_s)  # the slower of the two
    assert "min" in slow.describe()


@pytest.mark.parametrize("minutes", [8, 15, 40])
@pytest.mark.parametrize("speed", [(1, 1), (3, 1.5), (0.5, 0.5)])
def test_fitted_steps_fill_the_budget_without_passing_it(minutes, speed) -> None:
    try:
        fitted = fit_steps(minutes, PLAN, ratios(*speed))
    except UsageError as err:  # only where not even the floor fits
        floor = estimate(DemoPlan(MIN_SFT_STEPS, 1, PLAN.eval_steps), ratios(*speed))
        assert floor.total_s > minutes * 60 and "--minutes" in str(err)
        return
    spent = estimate(fitted, ratios(*speed)).total_s
    assert spent <= minutes * 60
    assert fitted.eval_steps == PLAN.eval_steps and fitted.grpo_steps >= 1
    one_more = DemoPlan(fitted.sft_steps + 2, fitted.grpo_steps, fitted.eval_steps)
    assert estimate(one_more, ratios(*speed)).total_s > minutes * 60 * 0.9  # nearly full


def test_a_budget_too_small_names_the_smallest_that_fits() -> None:
    with pytest.raises(UsageError, match=r"--minutes 1: too little for this CPU; .* at least"):
        fit_steps(1, PLAN, ratios(1, 1))


def test_probes_run_on_the_tiny_model() -> None:
    rates = measure_rates("tiny-lm")
    assert rates.forward_backward_s > 0 and rates.decode_s > 0 and rates.float32_decode_s > 0


def test_minutes_flag_is_checked_before_anything_runs(tmp_path, capsys) -> None:
    from tests.cli_helpers import run

    code, _, err = run(["demo", "--out", tmp_path / "d", "--minutes", "0"], capsys)
    assert code == 2 and "--minutes" in err.splitlines()[-1]
    assert not (tmp_path / "d").exists()
