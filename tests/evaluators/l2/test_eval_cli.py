"""``mads-bench eval l1|l2`` over a predictions JSONL file: ordering, reports, errors."""

from __future__ import annotations

import json
from pathlib import Path

from mads_bench.cli import main
from tests.rewards.conftest import step

ROWS = [
    # written out of order: L-2 sorts s1 by (turn_index, step_index), so the tool step is first
    {
        "prediction": step("say", "Done."),
        "gold_action_type": "say",
        "gold_say": "Done.",
        "scenario_id": "s1",
        "domain": "banking",
        "complexity": "normal",
        "turn_index": 0,
        "step_index": 1,
    },
    {
        "prediction": step("tool", ("Get_Order", {"id": 1})),
        "gold_action_type": "tool",
        "gold_tool_name": "get_order",
        "gold_tool_arguments": '{"id": 1}',
        "scenario_id": "s1",
        "domain": "banking",
        "complexity": "normal",
        "turn_index": 0,
        "step_index": 0,
    },
    {
        "prediction": "junk",
        "gold_action_type": "say",
        "gold_say": "Hi",
        "scenario_id": "s2",
        "domain": "travel",
        "complexity": "unhappy",
        "turn_index": 0,
        "step_index": 0,
    },
]


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_eval_l2_and_l1(tmp_path: Path, capsys) -> None:
    path, out = _write(tmp_path, ROWS), tmp_path / "l2.json"
    assert main(["eval", "l2", "--predictions", str(path), "--out", str(out)]) == 0
    # s1 fully correct (tool name within tolerance), s2 wrong at its first step -> mean 0.5
    report = json.loads(out.read_text())
    assert report["overall"]["success_rate"] == 0.5
    assert report["by_domain"]["banking"]["success_rate"] == 1.0
    assert "| overall | 2 | 3 | 0.5000 | 0.5000 |" in capsys.readouterr().out
    assert (
        main(["eval", "l1", "--predictions", str(path), "--similarity-model", "none", "--json"])
        == 0
    )
    l1 = json.loads(capsys.readouterr().out)["overall"]
    # L-1 names are exact: "Get_Order" is a false positive and a false negative
    assert l1["tool_name_f1"] == 0.0 and l1["param_exact_match"] == 1.0
    assert l1["action_recall_say"] == 0.5


def test_eval_errors_name_the_line(tmp_path: Path, capsys) -> None:
    path = _write(
        tmp_path, [ROWS[0], {"prediction": "x", "gold_action_type": "answer", "scenario_id": "s3"}]
    )
    assert main(["eval", "l2", "--predictions", str(path)]) == 2
    assert "predictions.jsonl:2: gold_action_type must be" in capsys.readouterr().err
