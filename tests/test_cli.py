"""The `mads-bench` command line: help, info, scenario check/generate/replay, errors."""

import json
import subprocess
import sys

from mads_bench.cli import build_parser, main


def test_every_command_has_help(capsys):
    # walk the parser tree and ask every (sub)command for --help
    parser = build_parser()
    paths = [[]]
    for action in parser._subparsers._group_actions:
        for name, sub in action.choices.items():
            paths.append([name])
            for sub_action in getattr(sub._subparsers, "_group_actions", []):
                paths.extend([name, child] for child in sub_action.choices)
    assert ["models", "setup"] in paths and ["scenarios", "generate"] in paths
    for path in paths:
        assert main([*path, "--help"]) == 0
        assert "usage: mads-bench" in capsys.readouterr().out


def test_console_script_help_runs():
    # the installed entry point works as a process
    out = subprocess.run(
        [sys.executable, "-m", "mads_bench", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "scenarios" in out.stdout


def test_info_json_counts(capsys):
    assert main(["info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"domains", "personas"}
    assert len(data["domains"]) == 6 and "mock" not in data["domains"]
    assert sum(d["tools"] for d in data["domains"].values()) >= 72
    assert sum(d["scenarios"] for d in data["domains"].values()) >= 87
    assert data["personas"] >= 55


def test_check_reports_file_and_field(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "- {id: x, domain: mock, objective: o, persona: priya_raman, success_criteria: [c],\n"
        "   complexity: normal, gold_workflow: [{name: get_item, arguments: {item_id: 7}}]}\n"
    )
    assert main(["scenarios", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "[0].gold_workflow[0].arguments" in err and "not of type" in err


def test_generate_is_deterministic_and_checkable(tmp_path, capsys):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (first, second):
        assert (
            main(
                [
                    "scenarios",
                    "generate",
                    "--domain",
                    "mock",
                    "--num",
                    "6",
                    "--seed",
                    "4",
                    "--mix",
                    "normal=1,unhappy=1,impossible=1",
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
    assert first.read_bytes() == second.read_bytes()
    assert len(first.read_text().splitlines()) == 6
    assert main(["scenarios", "check", str(first)]) == 0
    assert "6 valid scenarios" in capsys.readouterr().out


def test_bad_mix_is_a_usage_error(capsys):
    assert main(["scenarios", "generate", "--domain", "mock", "--mix", "easy=1"]) == 2
    assert "bad mix entry" in capsys.readouterr().err


def test_replay_runs_gold_workflows(capsys):
    assert main(["scenarios", "replay", "--domain", "mock", "--id", "mock-buy-mug-unhappy"]) == 0
    out = capsys.readouterr().out
    # the scenario's timeout hits the first search, the order then goes through
    assert (
        "search_items" in out
        and "error timeout" in out
        and "injected: search_items timed out" in out
    )
    assert "1 scenarios, 2 gold calls, 1 error results, 1 injected adversities" in out
