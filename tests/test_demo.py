"""The demo job: report rendering (fast) and the whole loop on the tiny model (slow)."""

import json

import pytest

from mads_bench.demo import _finished_training, render_report, run_demo


def _scores(recall, success):
    l1 = {
        "n_steps": 10,
        "action_recall_macro": recall,
        "tool_name_f1": 0.5,
        "param_exact_match": None,
        "answer_token_f1": 0.25,
        "semantic_similarity": 0.4,
        "unreadable_rate": 0.2,
    }
    return {"l1": l1, "l2": {"n_conversations": 2, "success_rate": success}}


def test_report_shows_before_after_and_training(tmp_path):
    training = {
        "sft": {
            "output_dir": "o/sft",
            "steps": 3,
            "seconds_per_step": 1.5,
            "peak_rss_mb": 900,
            "loss_first": 2.0,
            "loss_last": 1.0,
        },
        "grpo": {
            "output_dir": "o/grpo",
            "steps": 2,
            "seconds_per_step": 4.0,
            "reward_first": 0.5,
            "reward_last": 0.75,
        },
    }
    report = render_report(tmp_path, _scores(0.25, 0.0), _scores(0.75, 0.5), training, {"x": 3.0})
    assert "| L-1 action-type recall (macro) | 0.250 | 0.750 |" in report
    assert "| L-1 Pre-Act format validity | 0.800 | 0.800 |" in report
    assert "| L-2 success rate | 0.000 | 0.500 |" in report
    assert "| L-1 parameter exact match | n/a | n/a |" in report
    assert "loss 2.000 → 1.000" in report and "reward 0.500 → 0.750" in report
    assert "peak RSS" in report and "o/grpo" in report


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
    assert (tmp_path / "demo" / "train" / "grpo" / "adapter_config.json").is_file()
