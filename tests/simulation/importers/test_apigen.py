"""Tests of the APIGen-MT importer: counts and locations on the hand-written fixture, strict
Pre-Act output, the dataset build, model narration through a fake backend, resume and CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mads_bench.cli import main
from mads_bench.pre_act import parse_step, validate_turn
from simulation.agents.prompts import restyle_prompt
from simulation.backends import get_backend
from simulation.importers import BackendNarrator, import_apigen, read_records
from simulation.trajectory_io import read_trajectories

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "apigen_mt_sample.json"


@pytest.fixture
def imported(tmp_path: Path):
    out = tmp_path / "t.jsonl"
    report = import_apigen([FIXTURE], out)
    return report, out, list(read_trajectories(out))


def test_fixture_counts_and_skipped_locations(imported) -> None:
    report, _, trajectories = imported
    # 7 records: the first two convert, the five malformed ones are skipped with file:line
    assert (report.read, report.imported, len(report.skipped)) == (7, 2, 5)
    assert [location for location, _ in report.skipped] == [
        f"apigen_mt_sample.json:{line}" for line in (4, 5, 6, 7, 8)
    ]
    reasons = [reason for _, reason in report.skipped]
    assert "observation without a function_call" in reasons[0]
    assert "function_call is not valid JSON" in reasons[1]
    assert "not a JSON object (str)" in reasons[2]
    assert "unknown role 'user'" in reasons[3]
    assert "turn 0 ends without a gpt reply" in reasons[4]
    # record 0: 3 calls + 3 replies; record 1: 1 call + 1 (merged) reply; one think folded
    assert report.steps == {"tool": 4, "say": 4}
    assert report.folded_thoughts == 1
    assert [t.id for t in trajectories] == [
        "apigen/apigen_mt_sample/0",
        "apigen/apigen_mt_sample/1",
    ]


def test_every_step_strict_parses_and_turns_are_well_formed(imported) -> None:
    _, _, trajectories = imported
    for trajectory in trajectories:
        turns: dict[int, list] = {}
        for index, message in enumerate(trajectory.messages):
            if message.role == "assistant":
                turns.setdefault(message.turn_index, []).append(parse_step(message.content))
            if message.role == "tool":
                # each tool message answers the call right before it
                call = trajectory.messages[index - 1].tool_call
                assert message.tool_result.call_id == call.id
        for steps in turns.values():
            # first step has a plan, exactly one say, at the end
            assert validate_turn(steps) == []
    first, second = trajectories
    # the think-tool thought of record 0 became the think of the next step
    step = parse_step(first.messages[6].content)
    assert step.think == (
        "The user is authenticated; I must check the order is pending before I can cancel it."
    )
    assert step.action.name == "get_order_details"
    # the error observation is a failed result; the two gpt messages were merged into one say
    assert second.messages[3].tool_result.ok is False
    assert parse_step(second.messages[4].content).action.text == (
        "I'm sorry, I could not find reservation ZZ9999.\n\n"
        "Could you double-check the reservation ID?"
    )
    # the system prompt renders the policy, the tools and the Pre-Act format (restylable)
    system = first.messages[0].content
    assert system.startswith("# Retail agent policy") and '"name": "cancel_pending_order"' in system
    assert (
        "<plan>"
        not in restyle_prompt([{"role": "system", "content": system}], "react")[0]["content"]
    )


def test_scripted_think_names_where_arguments_come_from(imported) -> None:
    _, _, trajectories = imported
    think = parse_step(trajectories[0].messages[2].content).think
    assert think == (
        'The user says: "Hi, I want to cancel an order I placed by mistake. My email is '
        'mia.lee@example.com." Next I call find_user_id_by_email with email = '
        "mia.lee@example.com (from the user)."
    )


def test_output_builds_into_a_dataset(imported) -> None:
    from mads_bench.datasets import build_dataset

    _, out, _ = imported
    built = build_dataset([out], include_unvalidated=True)
    sft = built.configs["sft"]
    # 8 assistant steps, none excluded, spread over train and test
    assert len(sft["train"]) + len(sft["test"]) == 8
    assert built.report.excluded_steps == 0
    grpo = built.configs["grpo"]
    rows = [row for split in ("train", "test") for row in grpo[split]]
    tools = sorted(r["gold_tool_name"] for r in rows if r["gold_action_type"] == "tool")
    assert tools == [
        "cancel_pending_order",
        "find_user_id_by_email",
        "get_order_details",
        "get_reservation_details",
    ]
    assert all(row["domain"] == "apigen" for row in rows)


def test_backend_narrator_batches_and_falls_back(tmp_path: Path) -> None:
    good = get_backend("fake:", replies=lambda c: "<think>model says why</think><plan>1. go</plan>")
    report = import_apigen([FIXTURE], tmp_path / "a.jsonl", narrator=BackendNarrator(good))
    # both conversations in one batch: one complete() call with 8 prompts
    assert [s["batch"] for s in good.settings] == [8]
    thinks = [
        parse_step(m.content).think
        for t in read_trajectories(tmp_path / "a.jsonl")
        for m in t.messages
        if m.role == "assistant"
    ]
    # the model's think everywhere but on the step that kept the source's thought
    assert thinks.count("model says why") == 7 and report.narrator_fallbacks == 0
    bad = get_backend("fake:", replies=lambda c: "no tags at all")
    report = import_apigen([FIXTURE], tmp_path / "b.jsonl", narrator=BackendNarrator(bad))
    # every step fell back to the scripted text (the folded one for its missing plan)
    assert report.narrator_fallbacks == 8 and report.imported == 2
    echo = get_backend("fake:")  # echoes the prompt, answer template included
    report = import_apigen([FIXTURE], tmp_path / "c.jsonl", narrator=BackendNarrator(echo))
    # the template's "..." placeholders are not taken for reasoning
    assert report.narrator_fallbacks == 8


def test_deterministic_and_resumable(tmp_path: Path, imported) -> None:
    _, out, _ = imported
    again = tmp_path / "again.jsonl"
    import_apigen([FIXTURE], again)
    # same input, same narrator: the same bytes
    assert again.read_bytes() == out.read_bytes()
    report = import_apigen([FIXTURE], again, resume=True)
    # resume writes nothing new and still reports the malformed records
    assert (report.imported, report.already_there, len(report.skipped)) == (0, 2, 5)


def test_jsonl_input_and_broken_array(tmp_path: Path) -> None:
    records = json.loads(FIXTURE.read_text())
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text(json.dumps(records[1]) + "\n{broken\n\n" + json.dumps(records[0]) + "\n")
    report = import_apigen([jsonl], tmp_path / "t.jsonl")
    # line 2 is not JSON; the blank line 3 is ignored; the record on line 4 imports
    assert report.imported == 2 and report.skipped[0][0] == "in.jsonl:2"
    broken = tmp_path / "broken.json"
    broken.write_text('[\n{"conversations": []},\n{"conversations": [\n')
    found = [(r.location, r.error is None) for r in read_records(broken)]
    # the first element reads; the syntax error ends the file with one error record
    assert found == [("broken.json:2", True), ("broken.json:4", False)]


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.jsonl"
    args = ["import-apigen", "--input", str(FIXTURE), "--out", str(out), "--no-progress"]
    assert main(args) == 0
    captured = capsys.readouterr()
    # the summary on stdout, each skipped record on stderr
    assert "7 records read: 2 imported, 0 already there, 5 skipped" in captured.out
    assert "skipped apigen_mt_sample.json:4: conversations[1]" in captured.err
    # an existing output needs --resume; a missing input is a usage error
    assert main(args) == 2
    assert main([*args, "--resume"]) == 0
    assert main(["import-apigen", "--input", str(tmp_path / "none.json"), "--out", "x"]) == 2
