"""The demo job: report rendering (fast) and the whole loop on the tiny model (slow)."""

import json
from pathlib import Path

import pytest

from evaluators.l1.core import L1Step
from evaluators.step_scoring import GoldAction
from mads_bench.demo import (
    FIGURES,
    HEADLINE,
    Evaluation,
    _finished_training,
    compare,
    eval_rows,
    render_report,
    run_demo,
)


def _step(gold_type, predicted):
    gold = (
        GoldAction.from_columns("tool", "get_order", '{"order_id": "A-1"}')
        if gold_type == "tool"
        else GoldAction.from_columns("say", say="Your order has shipped.")
    )
    text = {
        "tool": '<think>t</think><action type="tool">{"name": "get_order", '
        '"arguments": {"order_id": "A-1"}}</action>',
        "say": '<think>t</think><action type="say">Your order has shipped.</action>',
        None: "3. Call the repair company. 4. Call the repair company.",
    }[predicted]
    return L1Step(text, gold)


def _evaluation(predicted_by_conversation):
    from evaluators.l1.core import score_l1

    steps, conversations = {}, {}
    for cid, pairs in predicted_by_conversation.items():
        report = score_l1([_step(g, p) for g, p in pairs])
        for i, score in enumerate(report.steps):
            steps[(cid, 0, i)] = score
        conversations[cid] = sum(g == p for g, p in pairs) / len(pairs)
    return Evaluation(l1={}, l2={}, steps=steps, conversations=conversations)


def test_compare_gives_paired_cis_that_exclude_zero_only_for_a_consistent_gain():
    gold = [("tool", None), ("say", None), ("tool", None)]
    before = _evaluation({f"c{i}": gold for i in range(8)})
    fixed = [(g, g) for g, _ in gold]
    after = _evaluation({f"c{i}": fixed for i in range(8)})
    figures = compare(before, after)
    validity = figures["format_validity"]
    assert (validity["before"], validity["after"], validity["delta"]) == (0.0, 1.0, 1.0)
    assert validity["excludes_zero"] and validity["units"] == 8 and validity["items"] == 24
    assert figures["action_recall_macro"]["ci_low"] == 1.0
    # one conversation better, one worse, the rest equal: no reliable difference
    mixed = {f"c{i}": gold for i in range(8)} | {"c0": fixed}
    worse = {f"c{i}": gold for i in range(8)} | {"c1": fixed}
    figures = compare(_evaluation(worse), _evaluation(mixed))
    assert figures["format_validity"]["delta"] == 0.0
    assert not figures["format_validity"]["excludes_zero"]


def _result(before, after, low, high):
    figure = {"before": before, "after": after, "delta": after - before, "ci_low": low,
              "ci_high": high, "excludes_zero": low > 0 or high < 0}  # fmt: skip
    na = {"before": None, "after": None, "delta": None, "ci_low": None, "ci_high": None,
          "excludes_zero": False}  # fmt: skip
    return {
        "figures": {key: figure if key in HEADLINE else na for key, _ in FIGURES},
        "held_out": {"conversations": 8, "steps": 45, "domains": {"home_services": 3}},
        "bf16": True,
        "cpu": "AMD EPYC, 2 cores, bf16 native",
        "stages_s": {"x": 3.0},
        "training": {
            "sft": {"output_dir": "o/sft", "steps": 3, "seconds_per_step": 1.5,
                    "peak_rss_mb": 900, "bf16": True, "loss_first": 2.0, "loss_last": 1.0},
            "grpo": {"output_dir": "o/grpo", "steps": 2, "seconds_per_step": 4.0,
                     "reward_first": 0.5, "reward_last": 0.75},
        },
    }  # fmt: skip


def test_report_shows_figures_with_cis_training_and_the_verdict(tmp_path):
    report = render_report(tmp_path, _result(0.25, 0.75, 0.3, 0.7))
    assert "| L-1 action-type recall (macro) | 0.250 | 0.750 | 0.500 * | [0.300, 0.700] |" in report
    assert "| L-1 parameter exact match | n/a | n/a | n/a | n/a |" in report
    assert "45 assistant steps" in report and "bf16 (native on this CPU)" in report
    assert "**The trained agent is better**: 3 of the 3" in report
    assert "GRPO vs SFT-only" not in report  # no SFT-only evaluation in this result
    assert "loss 2.000 → 1.000" in report and "reward 0.500 → 0.750" in report
    assert "peak RSS" in report and "o/grpo" in report
    report = render_report(tmp_path, _result(0.25, 0.35, -0.05, 0.3))
    assert "**No reliable gain**: 0 of the 3" in report
    result = _result(0.25, 0.75, 0.3, 0.7)
    result["grpo_vs_sft"] = result["figures"]
    report = render_report(tmp_path, result)
    assert "GRPO vs SFT-only" in report and "GRPO changed" not in report
    result["grpo_moved"] = {"steps_changed": 15, "largest_weight_change": 2.288818359375e-05}
    report = render_report(tmp_path, result)
    assert "GRPO changed 15 of the 45 predicted steps" in report and "was 2.3e-05." in report
    assert "| L-1 tool-name F1 | 0.250 | 0.750 | 0.500 * | [0.300, 0.700] |" in report


def test_eval_rows_span_every_domain_and_reach_the_step_floor(tmp_path):
    from datasets import Dataset, DatasetDict

    rows = []
    for domain, count in (("home_services", 6), ("banking", 3), ("travel", 2)):
        for c in range(count):
            for step in range(2):
                rows.append({"conversation_id": f"{domain}-{c}", "domain": domain,
                             "turn_index": 0, "step_index": step})  # fmt: skip
    DatasetDict({"test": Dataset.from_list(rows)}).save_to_disk(tmp_path / "grpo")
    chosen = eval_rows(tmp_path, 3, seed=0, min_steps=0)
    assert sorted({r["domain"] for r in chosen}) == ["banking", "home_services", "travel"]
    assert len({r["conversation_id"] for r in chosen}) == 3
    more = eval_rows(tmp_path, 3, seed=0, min_steps=13)
    assert len(more) == 14 and len({r["conversation_id"] for r in more}) == 7
    assert eval_rows(tmp_path, 3, seed=0, min_steps=0) == chosen  # seeded
    # skip passes over the first conversations of the same order: no conversation in both
    later = eval_rows(tmp_path, 4, seed=0, min_steps=0, skip=3)
    ids = {r["conversation_id"] for r in later}
    assert len(ids) == 4 and not ids & {r["conversation_id"] for r in chosen}
    first_seven = {r["conversation_id"] for r in eval_rows(tmp_path, 7, seed=0, min_steps=0)}
    assert ids | {r["conversation_id"] for r in chosen} == first_seven


def test_a_finished_training_run_is_reused_only_when_it_matches(tmp_path):
    grpo = tmp_path / "grpo"
    grpo.mkdir()
    summary = {"model": "smollm2-135m", "sft": {"steps": 40}, "grpo": {"steps": 3,
               "output_dir": str(grpo)}}  # fmt: skip
    file = tmp_path / "train_summary.json"
    file.write_text(json.dumps(summary))
    # the adapter is missing: nothing to reuse
    assert _finished_training(file, "smollm2-135m", 40, 3) is None
    (grpo / "adapter_config.json").write_text("{}")
    assert _finished_training(file, "smollm2-135m", 40, 3) == summary
    # another model or other step counts train again
    assert _finished_training(file, "tiny-lm", 40, 3) is None
    assert _finished_training(file, "smollm2-135m", 41, 3) is None
    assert _finished_training(file, "smollm2-135m", 40, 2) is None
    assert _finished_training(tmp_path / "absent.json", "smollm2-135m", 40, 3) is None


@pytest.mark.slow
def test_demo_runs_end_to_end_on_the_tiny_model(tmp_path):
    # every stage for real, kept small: 1 conversation per scenario, 2 + 1 training steps
    report = run_demo(
        tmp_path / "demo",
        model="tiny-lm",
        conversations_per_scenario=1,
        sft_steps=2,
        grpo_steps=1,
        eval_conversations=2,
        max_new_tokens=8,
    )
    assert (tmp_path / "demo" / "REPORT.md").read_text() == report
    assert "| L-2 success rate |" in report
    result = json.loads((tmp_path / "demo" / "REPORT.json").read_text())
    assert set(result["figures"]) == set(result["grpo_vs_sft"]) == {key for key, _ in FIGURES}
    moved = result["grpo_moved"]
    assert 0 <= moved["steps_changed"] <= result["held_out"]["steps"]
    assert moved["largest_weight_change"] >= 0
    assert result["held_out"]["steps"] >= 40 and result["held_out"]["conversations"] >= 6
    assert (tmp_path / "demo" / "train" / "grpo" / "adapter_config.json").is_file()


def test_how_far_grpo_moved_counts_changed_steps_and_the_largest_weight_change(tmp_path):
    import torch
    from safetensors.torch import save_file

    from mads_bench.adapters import largest_weight_change
    from mads_bench.demo import changed_steps

    def predictions(name: str, replies: list[str]) -> Path:
        path = tmp_path / f"{name}.jsonl"
        rows = [{"conversation_id": "c", "turn_index": 0, "step_index": i, "prediction": reply}
                for i, reply in enumerate(replies)]  # fmt: skip
        path.write_text("".join(json.dumps(row) + "\n" for row in reversed(rows)))
        return path

    assert changed_steps(predictions("a", ["x", "y", "z"]), predictions("b", ["x", "y!", "z"])) == 1
    for name, shift in (("sft", 0.0), ("grpo", 0.25)):
        (tmp_path / name).mkdir()
        weights = {"a": torch.zeros(2, 2), "b": torch.ones(3) + torch.tensor([0.0, shift, 0.0])}
        save_file(weights, str(tmp_path / name / "adapter_model.safetensors"))
    assert largest_weight_change(tmp_path / "sft", tmp_path / "grpo") == 0.25
    assert largest_weight_change(tmp_path / "sft", tmp_path / "sft") == 0.0
    (tmp_path / "other").mkdir()
    save_file({"a": torch.zeros(2, 2)}, str(tmp_path / "other" / "adapter_model.safetensors"))
    with pytest.raises(ValueError, match="different adapter tensors"):
        largest_weight_change(tmp_path / "sft", tmp_path / "other")


def test_predictions_of_another_precision_are_redone_and_the_demos_own_resumed(tmp_path):
    from mads_bench.demo import EVAL_DTYPE, _in_eval_precision
    from mads_bench.manifest import manifest_path, write_manifest

    old, own = tmp_path / "predictions_base.jsonl", tmp_path / "predictions_sft.jsonl"
    for path, settings in ((old, {"model": "m"}), (own, {"model": "m", "dtype": EVAL_DTYPE})):
        path.write_text('{"prediction": "x"}\n')
        write_manifest(path, settings)
    assert _in_eval_precision(old) == old and not old.exists()
    assert not manifest_path(old).exists()
    assert _in_eval_precision(own).read_text() == '{"prediction": "x"}\n'
    assert _in_eval_precision(tmp_path / "none.jsonl") == tmp_path / "none.jsonl"
