"""LLM-judge baselines through the backend registry (fake judges), and `sage baseline`,
`sage run --config llm --judge` and `sage compare` on their verdict files."""

from __future__ import annotations

import json

import pytest

from evaluators.sage import Verdict, read_jsonl
from evaluators.sage.baselines import BaselineJudge
from mads_bench.cli import main
from simulation.backends import FakeBackend
from tests.evaluators.sage.conftest import turn
from tests.evaluators.sage.test_cli import write_inputs


def test_single_judge_verdicts_and_one_batched_call(spec):
    # three turns, one backend call; the third reply is malformed → undecided, no crash
    backend = FakeBackend(replies=["VERDICT: failure\nCLASS: PC", "verdict: Acceptable", "hmm"])
    judge = BaselineJudge("single", backend, spec)
    records = [turn(turn_id=str(i)) for i in range(3)]
    verdicts = judge.evaluate(records)
    assert [v.verdict for v in verdicts] == ["failure", "acceptable", "undecided"]
    assert verdicts[0].failure_classes == ["PC"] and verdicts[0].margin == 1.0
    assert verdicts[2].margin == 0.0 and verdicts[2].stages == {"abstained": 1}
    assert verdicts[2].evidence[0]["span"] == {"reply": "hmm"}
    assert backend.settings[0]["batch"] == 3 and len(backend.settings) == 1


def test_prompts_transcript_only_vs_state_aware(spec):
    # `single` never shows the state; `single-state` and `geval` show it with required fields
    record = turn()
    single = BaselineJudge("single", FakeBackend(), spec).prompt(record)
    state = BaselineJudge("single-state", FakeBackend(), spec).prompt(record)
    geval = BaselineJudge("geval", FakeBackend(), spec).prompt(record)
    assert "State after the turn" not in single and "Sino" in single
    assert '"time": "7 pm"' in state and "['restaurant_name', 'city', 'time']" in state
    assert geval.rstrip().endswith("Failure type (IUV, WNF, PC, UV or none):")
    assert "Score (1-5):" in geval and "restaurant_name, city, time" in geval


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Score (1-5): 1\nFailure type: UV", ("failure", ["UV"], 0.6)),  # |1 − 2.5| / 2.5
        ("Score (1-5): **2**\nFailure type: none", ("failure", [], 0.2)),  # at the threshold
        ("Score (1-5): 5\nFailure type: none", ("acceptable", [], 1.0)),
        ("Score: 4.5", ("acceptable", [], 0.8)),
        ("Score (1-5): 7", ("undecided", [], 0.0)),  # out of range: unreadable
        ("I cannot rate this.", ("undecided", [], 0.0)),
        ("Score (1-5): 5 ... on reflection, Score (1-5): 2", ("failure", [], 0.2)),  # last wins
    ],
)
def test_geval_form_parsing(reply, expected):
    # a score <= 2 is a failure; margin = distance to 2.5 over 2.5, capped at 1
    verdict, classes, margin, _ = BaselineJudge("geval", FakeBackend()).parse(reply)
    assert (verdict, classes, round(margin, 6)) == expected


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown baseline kind 'gpt'"):
        BaselineJudge("gpt", FakeBackend())


def _run(tmp_path, *extra):
    return main(
        [
            "sage",
            *extra[:1],
            "--turns",
            str(tmp_path / "turns.jsonl"),
            "--schema",
            str(tmp_path / "schema.json"),
            "--labels",
            str(tmp_path / "labels.jsonl"),
            *extra[1:],
        ]
    )


def test_baseline_cli_writes_verdicts(tmp_path, capsys):
    write_inputs(tmp_path)
    out_a, out_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    code = _run(
        tmp_path, "baseline", "--kind", "single-state", "--judge", "fake:VERDICT: failure",
        "--out", str(out_a), "--report", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert code == 0
    # the constant judge calls both turns failures: P 0.5, R 1.0, F1 2/3
    assert [v.verdict for v in read_jsonl(out_a, Verdict)] == ["failure", "failure"]
    report = json.loads((tmp_path / "r.json").read_text())
    assert round(report["f1"], 6) == round(2 / 3, 6)
    assert "baseline single-state" in capsys.readouterr().out
    code = _run(
        tmp_path, "baseline", "--kind", "geval", "--judge", "fake:Score (1-5): 4", "--out",
        str(out_b),
    )  # fmt: skip
    assert code == 0 and [v.verdict for v in read_jsonl(out_b, Verdict)] == ["acceptable"] * 2
    capsys.readouterr()
    labels = str(tmp_path / "labels.jsonl")
    code = main(["sage", "compare", "--labels", labels, "--a", str(out_a), "--b", str(out_b)])
    # ΔF1 = 2/3 − 0 (the G-Eval run finds nothing)
    assert code == 0 and "ΔF1 (A − B) = +0.667" in capsys.readouterr().out


def test_baseline_cli_errors(tmp_path, capsys):
    write_inputs(tmp_path)
    out = str(tmp_path / "v.jsonl")
    # an unknown backend prefix is a clear error, exit 2
    code = _run(tmp_path, "baseline", "--kind", "single", "--judge", "nope:x", "--out", out)
    assert code == 2 and "nope" in capsys.readouterr().err
    # `fake:` echoes the prompt: the instruction line is no answer
    code = main(
        ["sage", "baseline", "--kind", "single", "--judge", "fake:", "--out", out, "--turns",
         str(tmp_path / "turns.jsonl"), "--schema", str(tmp_path / "schema.json")]
    )  # fmt: skip
    assert code == 0  # unreadable → undecided, never a crash
    assert {v.verdict for v in read_jsonl(tmp_path / "v.jsonl", Verdict)} == {"undecided"}


@pytest.mark.parametrize(("reply", "expected"), [("true", "failure"), ("abstain", "undecided")])
def test_run_llm_with_judge(tmp_path, capsys, minilm_static_path, reply, expected):
    # S2 off: the unsupported city "SJ" abstains in S1 and goes to the S3 judge
    write_inputs(tmp_path)
    (tmp_path / "turns.jsonl").write_text(
        turn(state_after={"restaurant_name": "Sino", "city": "SJ", "time": "7 pm"})
        .model_dump_json() + "\n"
    )  # fmt: skip
    out = tmp_path / "v.jsonl"
    code = main(
        ["sage", "run", "--turns", str(tmp_path / "turns.jsonl"), "--schema",
         str(tmp_path / "schema.json"), "--out", str(out), "--config", "llm", "--no-s2",
         "--judge", f"fake:{reply}"]
    )  # fmt: skip
    assert code == 0
    (verdict,) = read_jsonl(out, Verdict)
    assert verdict.verdict == expected
    uv = next(e for e in verdict.evidence if e["criterion"] == "UV:city")
    assert uv["trace"][-1] == f"S3: {'abstain' if reply == 'abstain' else True}"
    # --judge without --config llm is refused
    code = main(
        ["sage", "run", "--turns", str(tmp_path / "turns.jsonl"), "--schema",
         str(tmp_path / "schema.json"), "--out", str(out), "--judge", "fake:true"]
    )  # fmt: skip
    assert code == 2 and "--config llm" in capsys.readouterr().err
