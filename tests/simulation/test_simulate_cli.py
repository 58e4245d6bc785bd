"""Tests of `mads-bench simulate` at scale: generated scenarios, output folders, shards,
concurrency (same bytes in the same order), resume, flag errors and the summary tables."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from mads_bench.catalog import domain_names, load_domain
from mads_bench.cli import main
from mads_bench.cli.simulate import output_path
from mads_bench.data_model import Trajectory
from simulation.environment import simulate
from simulation.parallel import (
    SimulationSettings,
    choose_executor,
    parse_shard,
    plan_jobs,
    run_jobs,
    select_shard,
)
from simulation.runner import RunLimits
from simulation.simulate_run import summary_tables

BASE = ["simulate", "--seed", "1", "--no-progress"]


def run(out: Path, *extra: str) -> int:
    return main([*BASE, "--out", str(out), *extra])


def test_generated_scenarios_spread_over_domains(tmp_path: Path) -> None:
    assert run(tmp_path / "run", "--num-scenarios", "8") == 0
    lines = (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    scenarios = [json.loads(s) for s in (tmp_path / "run" / "scenarios.jsonl").open()]
    six = [d for d in domain_names() if d != "mock"]
    # 8 over six domains: the first two get 2, the others 1; one conversation each
    assert Counter(s["domain"] for s in scenarios) == {
        d: 2 if i < 2 else 1 for i, d in enumerate(six)
    }
    assert [json.loads(line)["scenario_id"] for line in lines] == [s["id"] for s in scenarios]
    # the mix decides the complexities of generated scenarios
    mix = ["--num-scenarios", "4", "--domain", "banking", "--mix", "normal=1,unhappy=0"]
    assert run(tmp_path / "normal", *mix) == 0
    normal = (tmp_path / "normal" / "trajectories.jsonl").read_text().splitlines()
    assert {json.loads(line)["complexity"] for line in normal} == {"normal"}


def test_with_hand_written_puts_them_first(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    assert run(out, "--domain", "mock", "--num-scenarios", "2", "--with-hand-written") == 0
    ids = [json.loads(line)["scenario_id"] for line in out.read_text().splitlines()]
    hand = [s.id for s in load_domain("mock").scenarios]
    # hand-written mock scenarios, then two generated ones; a file --out gets a sibling file
    assert ids[: len(hand)] == hand and len(ids) == len(hand) + 2
    assert (tmp_path / "t.scenarios.jsonl").read_text().count("\n") == 2


def test_shards_concatenate_to_the_unsharded_run(tmp_path: Path) -> None:
    args = ["--num-scenarios", "9", "-k", "2"]
    assert run(tmp_path / "all", *args) == 0
    full = (tmp_path / "all" / "trajectories.jsonl").read_text().splitlines()
    parts = []
    for index in range(3):
        extra = ["--concurrency", "2", "--executor", "thread"] if index == 1 else []
        assert run(tmp_path / "split", *args, "--shard", f"{index}/3", *extra) == 0
        name = f"trajectories.shard-{index}-of-3.jsonl"
        parts.append((tmp_path / "split" / name).read_text().splitlines())
    # shard i holds conversations i, i+3, ... of the plan, byte for byte
    assert [part == full[index::3] for index, part in enumerate(parts)] == [True, True, True]
    # together: exactly the unsharded set, nothing twice
    assert sorted(line for part in parts for line in part) == sorted(full) and len(full) == 18


def test_concurrency_gives_the_same_bytes(tmp_path: Path) -> None:
    args = ["--domain", "mock", "-k", "3"]
    assert run(tmp_path / "seq.jsonl", *args) == 0
    assert run(tmp_path / "threads.jsonl", *args, "--concurrency", "3", "--executor", "thread") == 0
    assert run(tmp_path / "procs.jsonl", *args, "--concurrency", "2") == 0
    expected = (tmp_path / "seq.jsonl").read_bytes()
    # threads and (auto-chosen) processes write the same records in the same order
    assert (tmp_path / "threads.jsonl").read_bytes() == expected
    assert (tmp_path / "procs.jsonl").read_bytes() == expected


def test_resume_in_a_folder_with_concurrency(tmp_path: Path) -> None:
    args = ["--domain", "mock", "-k", "4", "--concurrency", "2", "--executor", "thread"]
    assert run(tmp_path / "full", *args) == 0
    full = (tmp_path / "full" / "trajectories.jsonl").read_bytes()
    lines = full.decode().splitlines(keepends=True)
    partial = tmp_path / "partial" / "trajectories.jsonl"
    partial.parent.mkdir()
    partial.write_text("".join(lines[:5]) + lines[5][:40])
    manifest = "trajectories.manifest.json"  # the run manifest says which settings wrote it
    shutil.copy(tmp_path / "full" / manifest, partial.parent / manifest)
    # resuming a torn run completes it; in-order writing makes it byte-identical
    assert run(tmp_path / "partial", *args, "--resume") == 0
    assert partial.read_bytes() == full


@pytest.mark.parametrize(
    "extra",
    [
        ["--num-scenarios", "2", "--scenarios", "x.jsonl"],
        ["--domain", "mock", "--shard", "3/3"],
        ["--domain", "mock", "--shard", "one/two"],
        ["--domain", "mock", "--with-hand-written"],
        ["--domain", "mock", "--mix", "normal=1"],
        ["--domain", "mock", "--concurrency", "0"],
        ["--concurrency", "2", "--executor", "process", "--assistant", "fake:"],
    ],
)
def test_bad_flags_are_usage_errors(tmp_path: Path, extra: list[str]) -> None:
    # each combination is refused with exit status 2 before anything runs
    assert run(tmp_path / "out", *extra) == 2
    assert not (tmp_path / "out").exists()


def test_executor_choice_and_shard_parsing() -> None:
    # scripted pairs use processes, remote backends threads, transformers never runs parallel
    assert choose_executor("scripted", "scripted", 4) == "process"
    assert choose_executor("scripted", "fake:", 4) == "thread"
    assert choose_executor("transformers:tiny-lm", "scripted", 4) == "thread"
    assert choose_executor("scripted", "scripted", 1) == "sequential"
    assert parse_shard(" 1 / 4 ") == (1, 4)
    jobs = plan_jobs(["a", "b", "c"], repetitions=1)
    assert [j.scenario for j in select_shard(jobs, (0, 2))] == ["a", "c"]


class SlowRemoteBackend:
    """Stands for a remote LLM: each call waits, and calls may overlap (no lock held)."""

    spec = "slow:"

    def __init__(self) -> None:
        self.lock, self.now, self.peak = threading.Lock(), 0, 0

    def generate(self, conversations: list[list[dict]], **settings: object) -> list[str]:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(0.02)
        with self.lock:
            self.now -= 1
        turn = sum(m["role"] == "user" for m in conversations[0])
        return [f'<think>t</think><plan>1. answer</plan><action type="say">Answer {turn}']


def test_threads_overlap_and_outcomes_stay_in_order() -> None:
    backend = SlowRemoteBackend()
    jobs = plan_jobs(load_domain("mock").scenarios, repetitions=2)
    settings = SimulationSettings(seed=0, assistant="slow:", limits=RunLimits(max_turns=2))
    outcomes = list(
        run_jobs(jobs, settings, concurrency=4, executor="thread", backends={"slow:": backend})
    )
    # one outcome per job, in job order, and several conversations were in flight at once
    assert [o.job.index for o in outcomes] == list(range(len(jobs)))
    assert all(o.error is None for o in outcomes) and backend.peak > 1


def test_output_path_rules(tmp_path: Path) -> None:
    # a suffix means a file; no suffix (or an existing folder) means a folder
    assert output_path(tmp_path / "t.jsonl", (0, 2)) == tmp_path / "t.jsonl"
    assert output_path(tmp_path / "run", None) == tmp_path / "run" / "trajectories.jsonl"
    assert output_path(tmp_path, (0, 2)) == tmp_path / "trajectories.shard-0-of-2.jsonl"


def test_summary_has_pass_rate_when_verdicts_exist() -> None:
    base = simulate(load_domain("mock").scenarios[0])
    plain = summary_tables([base])
    verdicts = [{"passed": True}, {"passed": False}, {"passed": True}]
    judged: list[Trajectory] = [base.model_copy(update={"verdict": v}) for v in verdicts]
    table = summary_tables(judged)
    # no verdicts: no pass-rate table; 2 of 3 passed: 66.7%
    assert "pass rate" not in plain and "| normal/done | 1 |" in plain
    assert "| normal | 2 | 3 | 66.7% |" in table
