"""`benchmarks.run grpo_gain`: the seeds it is told to train, the gain pooled over them, and the
placebo control (a random update of GRPO's size)."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from benchmarks import bench_grpo_gain
from benchmarks.bench_grpo_gain import (
    SAMPLED_TEMPERATURE,
    _clear_predictions,
    _count,
    _overrides,
    _placebo_rows,
    _seeds,
    _split,
    constrains_tool_names,
    finished_run,
    placebo_adapter,
    pool,
    reward_gain,
    sampled_evaluation,
)
from mads_bench.demo import Evaluation


def test_seeds_are_the_configs_or_distinct_integers() -> None:
    assert _seeds(None) == [None]
    assert _seeds("3") == [3]
    assert _seeds("0, 1,2") == [0, 1, 2]
    for bad in ("", "x", "1,1", "-1", "0,,1"):
        with pytest.raises(SystemExit, match="MADS_BENCH_GRPO_SEED"):
            _seeds(bad)


def test_sweep_flags_name_their_run_and_bad_ones_are_refused() -> None:
    assert _overrides("  ") == ([], "")
    args, suffix = _overrides("--beta 0.04 --reward_weights 1 1 1 2 0 0")
    assert args == ["--beta", "0.04", "--reward_weights", "1", "1", "1", "2", "0", "0"]
    assert suffix == "_beta0.04_reward_weights1-1-1-2-0-0"
    assert _overrides("--beta 0.0")[1] != _overrides("--beta 0.04")[1]
    for bad in ("beta 0.04", "--beta '0.04"):
        with pytest.raises(SystemExit, match="MADS_BENCH_GRPO_ARGS"):
            _overrides(bad)


def test_the_report_split_follows_the_selection_split_without_overlap() -> None:
    assert _split("selection", None) == (0, 16)
    assert _split("report", None) == (16, 32)  # starts where the selection split ends
    assert _split("report", "8") == (16, 8)
    with pytest.raises(SystemExit, match="MADS_BENCH_EVAL_SPLIT"):
        _split("test", None)
    for bad in ("0", "x", "-3"):
        with pytest.raises(SystemExit, match="MADS_BENCH_EVAL_CONVERSATIONS"):
            _split("report", bad)


def test_the_pooled_gain_averages_each_steps_reward_over_the_seeds_policies() -> None:
    # two conversations of two steps; SFT scores 0 everywhere (None counts 0)
    keys = [("a", 0, 0), ("a", 0, 1), ("b", 0, 0), ("b", 1, 0)]
    before = dict.fromkeys(keys, None)
    better = dict.fromkeys(keys, 1.0)
    worse = dict.fromkeys(keys, 0.0) | {("b", 1, 0): -1.0}
    assert reward_gain(before, better)["delta"] == 1.0
    pooled = reward_gain(before, better, worse)
    # per conversation: a (1 + 0)/2 = 0.5 on both steps, b (0.5 + 0)/2 = 0.25
    assert pooled["delta"] == pytest.approx(0.375)
    assert pooled["units"] == 2 and pooled["items"] == 4
    # a seed whose policy does no better than SFT pulls the pooled gain to zero
    assert reward_gain(before, dict.fromkeys(keys, 0.0))["delta"] == 0.0
    with pytest.raises(ValueError, match="no policy"):
        reward_gain(before)


def test_pooled_figures_count_every_seeds_steps_against_sft_repeated() -> None:
    from evaluators.l1.core import StepScore
    from mads_bench.demo import compare

    def named(right: bool) -> StepScore:  # a tool step that names the gold tool, or another one
        return StepScore(None, None, "tool", "tool", name_tp=int(right), name_fp=int(not right),
                         name_fn=int(not right))  # fmt: skip

    keys = [("a", 0, 0), ("b", 0, 0), ("c", 0, 0)]
    sft = Evaluation(l1={}, l2={}, steps={k: named(False) for k in keys},
                     conversations=dict.fromkeys("abc", 0.0))  # fmt: skip
    good = Evaluation(l1={}, l2={}, steps={k: named(True) for k in keys},
                      conversations=dict.fromkeys("abc", 1.0))  # fmt: skip
    figures = compare(pool([sft] * 3), pool([good, sft, sft]))
    # one seed of three names all three gold tools: 3 of 9 pooled steps right
    assert figures["tool_name_f1"]["before"] == 0.0
    assert figures["tool_name_f1"]["after"] == pytest.approx(1 / 3, abs=1e-3)
    assert figures["l2_success_rate"]["after"] == pytest.approx(1 / 3, abs=1e-3)
    # SFT repeated is SFT: its figures do not change with the number of seeds
    assert compare(pool([sft] * 3), pool([sft] * 3))["tool_name_f1"]["delta"] == 0.0
    assert compare(sft, good)["tool_name_f1"]["after"] == 1.0


def test_sampled_evaluation_keeps_every_sample_and_averages_each_steps_reward(
    tmp_path, monkeypatch
) -> None:
    tool = (
        "<think>t</think>\n<plan>1. look</plan>\n"
        '<action type="tool">{"name": "find", "arguments": {"q": "x"}}</action>'
    )
    rows = [
        {"conversation_id": "a", "scenario_id": "s", "domain": "mock", "complexity": "normal",
         "turn_index": 0, "step_index": 0, "gold_action_type": "tool", "gold_tool_name": "find",
         "gold_tool_arguments": '{"q": "x"}', "gold_say": None, "required_params": ["q"],
         "style": "pre_act"},
    ]  # fmt: skip
    calls = []

    def fake_evaluate(model, rows, predictions, max_new_tokens, *, temperature, seed,
                      constrain_tool_names, dtype, drafts):  # fmt: skip
        calls.append((predictions.name, temperature, seed, drafts and drafts.name))
        assert constrain_tool_names  # the same decoding as the GRPO run's samples
        assert dtype == "float32"  # bf16 rounding would flip steps at random
        reply = tool if seed == 0 else "no action at all"  # sample 0 right, sample 1 malformed
        predictions.write_text("".join(json.dumps(r | {"prediction": reply}) + "\n" for r in rows))
        return Evaluation(l1={}, l2={}, steps={("a", 0, 0): seed}, conversations={"a": 1.0 - seed})

    monkeypatch.setattr("mads_bench.demo.evaluate_model", fake_evaluate)
    pooled, rewards = sampled_evaluation("m", rows, tmp_path / "predictions_sft_x", 2, True)
    assert calls == [
        (f"predictions_sft_x_T{SAMPLED_TEMPERATURE}_s0.jsonl", SAMPLED_TEMPERATURE, 0, None),
        (f"predictions_sft_x_T{SAMPLED_TEMPERATURE}_s1.jsonl", SAMPLED_TEMPERATURE, 1, None),
    ]
    # a policy's samples are drafted by the SFT adapter's sample of the same seed
    calls.clear()
    sampled_evaluation("m", rows, tmp_path / "p_grpo", 1, True, drafts=tmp_path / "p_sft")
    assert calls == [(f"p_grpo_T{SAMPLED_TEMPERATURE}_s0.jsonl", SAMPLED_TEMPERATURE, 0,
                      f"p_sft_T{SAMPLED_TEMPERATURE}_s0.jsonl")]  # fmt: skip
    assert pooled.steps == {("a", 0, 0, 0): 0, ("a", 0, 0, 1): 1}
    assert pooled.conversations == {"a": 0.5}
    right = bench_grpo_gain.total_rewards(tmp_path / calls[0][0])[("a", 0, 0)]
    assert right > 0 and rewards[("a", 0, 0)] == pytest.approx(right / 2)  # the malformed one: 0
    assert _count("MADS_BENCH_EVAL_SAMPLES", None) == 0
    assert _count("MADS_BENCH_PLACEBOS", "3") == 3
    for bad in ("-1", "x", "1.5"):
        with pytest.raises(SystemExit, match="MADS_BENCH_PLACEBOS"):
            _count("MADS_BENCH_PLACEBOS", bad)


def test_a_new_run_clears_its_own_predictions_and_no_other_splits(tmp_path) -> None:
    stem = tmp_path / "predictions_grpo_15_selection_1"
    own = ["predictions_grpo_15_selection_1.jsonl", "predictions_grpo_15_selection_1.manifest.json",
           "predictions_grpo_15_selection_1_T0.7_s0.jsonl",
           "predictions_grpo_15_selection_1_T0.7_s0.manifest.json"]  # fmt: skip
    others = ["predictions_grpo_15_selection_16.jsonl", "predictions_sft_selection_1.jsonl"]
    for name in own + others:
        (tmp_path / name).write_text("{}\n")
    _clear_predictions(stem)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(others)


def test_a_finished_seed_is_reused_only_while_nothing_it_came_from_changed(tmp_path) -> None:
    import os

    config, sft = tmp_path / "config.yaml", tmp_path / "adapter_model.safetensors"
    config.write_text("beta: 0.0\n")
    sft.write_bytes(b"weights")
    adapter = _adapter(tmp_path / "grpo_15_seed0", {})
    grpo = {"output_dir": str(adapter), "steps": 15}
    result = tmp_path / "result_15_seed0.json"
    result.write_text(json.dumps({"grpo": grpo, "overrides": ["--beta", "0.04"], "seed": 0}))
    for path, age in ((config, 300), (sft, 200), (result, 100)):  # the result is the newest
        os.utime(path, (0, 1_000_000 - age))
    inputs = [config, sft]
    assert finished_run(result, 15, ["--beta", "0.04"], inputs) == grpo
    assert finished_run(result, 30, ["--beta", "0.04"], inputs) is None  # more steps asked
    assert finished_run(result, 15, [], inputs) is None  # other recipe flags
    os.utime(sft, (0, 1_000_000))  # a new SFT adapter after the run
    assert finished_run(result, 15, ["--beta", "0.04"], inputs) is None
    os.utime(sft, (0, 1_000_000 - 200))
    (adapter / "adapter_config.json").unlink()  # its adapter is gone
    assert finished_run(result, 15, ["--beta", "0.04"], inputs) is None
    result.write_text("{not json")
    assert finished_run(result, 15, ["--beta", "0.04"], inputs) is None
    assert finished_run(tmp_path / "result_15_seed1.json", 15, [], inputs) is None


def test_the_modules_examples_pass() -> None:
    assert doctest.testmod(bench_grpo_gain, report=False).failed == 0


def _adapter(folder, tensors):
    from safetensors.torch import save_file

    folder.mkdir()
    save_file(tensors, folder / "adapter_model.safetensors")
    (folder / "adapter_config.json").write_text('{"r": 2}')
    return folder


def test_a_placebo_moves_each_tensor_as_far_as_grpo_did_in_a_random_direction(tmp_path) -> None:
    import torch
    from safetensors.torch import load_file

    generator = torch.Generator().manual_seed(0)
    start = {name: torch.randn(8, 16, generator=generator) for name in ("a.lora_A", "a.lora_B")}
    step = {"a.lora_A": torch.full((8, 16), 0.01), "a.lora_B": torch.zeros(8, 16)}
    step["a.lora_B"][0, 0] = 0.5  # GRPO moved one tensor far along one entry, the other a little
    sft = _adapter(tmp_path / "sft", start)
    grpo = _adapter(tmp_path / "grpo", {name: start[name] + step[name] for name in start})
    untouched = (sft / "adapter_model.safetensors").read_bytes()

    first = load_file(placebo_adapter(sft, grpo, tmp_path / "p0", 0) / "adapter_model.safetensors")
    again = load_file(placebo_adapter(sft, grpo, tmp_path / "p0", 0) / "adapter_model.safetensors")
    other = load_file(placebo_adapter(sft, grpo, tmp_path / "p1", 1) / "adapter_model.safetensors")
    for name in start:
        moved = first[name] - start[name]
        assert moved.norm().item() == pytest.approx(step[name].norm().item(), rel=1e-5)
        assert torch.equal(first[name], again[name])  # the seed decides the direction
        assert not torch.equal(first[name], other[name])
        cosine = torch.nn.functional.cosine_similarity(moved.flatten(), step[name].flatten(), 0)
        assert abs(cosine.item()) < 0.5  # not GRPO's direction
    assert (tmp_path / "p0" / "adapter_config.json").read_text() == '{"r": 2}'
    assert (sft / "adapter_model.safetensors").read_bytes() == untouched

    with pytest.raises(SystemExit, match="not the same LoRA tensors"):
        placebo_adapter(sft, _adapter(tmp_path / "x", {"b.lora_A": start["a.lora_A"]}),
                        tmp_path / "p2", 0)  # fmt: skip


def test_grpo_is_compared_with_its_placebos_mean_step_by_step(tmp_path, monkeypatch) -> None:
    import torch

    tool = (
        "<think>t</think>\n<plan>1. look</plan>\n"
        '<action type="tool">{"name": "find", "arguments": {"q": "x"}}</action>'
    )
    rows = [
        {"conversation_id": c, "scenario_id": "s", "domain": "mock", "complexity": "normal",
         "turn_index": 0, "step_index": 0, "gold_action_type": "tool", "gold_tool_name": "find",
         "gold_tool_arguments": '{"q": "x"}', "gold_say": None, "required_params": ["q"],
         "style": "pre_act"}
        for c in ("a", "b")
    ]  # fmt: skip
    evaluated = []

    def fake_evaluate(model, rows, predictions, max_new_tokens, *, constrain_tool_names, dtype,
                      drafts):  # fmt: skip
        evaluated.append((Path(model).name, constrain_tool_names, dtype, drafts))
        right = Path(model).name == "adapter_0"  # placebo 0 right everywhere, placebo 1 never
        reply = tool if right else "no action at all"
        predictions.write_text("".join(json.dumps(r | {"prediction": reply}) + "\n" for r in rows))

    monkeypatch.setattr("mads_bench.demo.evaluate_model", fake_evaluate)
    tensors = {"a.lora_A": torch.ones(2, 2)}
    adapters = (_adapter(tmp_path / "sft", tensors), _adapter(tmp_path / "grpo", tensors))
    keys = [("a", 0, 0), ("b", 0, 0)]
    sft, grpo = dict.fromkeys(keys, 0.0), dict.fromkeys(keys, 1.0)
    drafts = tmp_path / "predictions_sft.jsonl"
    result = _placebo_rows(
        adapters, tmp_path / "placebo", rows, (sft, grpo), 2, "n", "", drafts=drafts
    )
    assert evaluated == [("adapter_0", False, "float32", drafts),
                         ("adapter_1", False, "float32", drafts)]  # fmt: skip
    first, second, versus = result
    assert first["measure"] == "held-out mean_total_reward: placebo 0 of GRPO - SFT"
    assert first["value"] > 0 and second["value"] == 0.0
    assert versus["measure"] == "held-out mean_total_reward: GRPO - its 2 placebos"
    assert versus["value"] == pytest.approx(1.0 - first["value"] / 2, abs=1e-3)
    saved = json.loads((tmp_path / "placebo" / "result.json").read_text())
    assert saved["mean_total_reward"]["delta"] == versus["value"]


def test_every_policy_is_evaluated_as_the_grpo_run_samples(tmp_path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("constrain_tool_names: true\nbeta: 0.0\n")
    assert constrains_tool_names([], config=str(config))
    assert not constrains_tool_names(["--constrain_tool_names", "false"], config=str(config))
    assert constrains_tool_names(["--beta", "0.04", "--constrain_tool_names"])
    assert not constrains_tool_names([])  # the committed config samples freely
