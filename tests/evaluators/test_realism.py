"""Language-variety figures (`mads-bench stats`): definitions, repetitions, the CLI."""

from __future__ import annotations

import json

from evaluators.realism import (
    distinct_n,
    duplicate_rate,
    identical_repetitions,
    realism_stats,
    text_figures,
    texts_by_kind,
)
from mads_bench.catalog import load_domain
from simulation.environment import simulate
from simulation.trajectory_io import read_trajectories
from tests.cli_helpers import error_line, run


def test_definitions():
    # unique n-grams over all n-grams, not across texts; punctuation is not a token
    assert distinct_n(["a b a b", "a b c"], 2) == 3 / 5
    assert distinct_n(["Hi, hi!"], 1) == 0.5
    assert duplicate_rate(["x", "x", "y", "z"]) == 0.5
    # a seeded sample: the same figures for the same seed
    texts = [f"text number {i % 7}" for i in range(50)]
    assert text_figures(texts, sample=20, seed=1) == text_figures(texts, sample=20, seed=1)
    assert text_figures(texts, sample=20)["sampled"] == 20


def test_kinds_and_repetitions_of_scripted_conversations():
    scenario = load_domain("mock").scenarios[0]
    runs = [simulate(scenario, seed=0, repetition=r) for r in range(2)]
    kinds = texts_by_kind(runs)
    # the user's messages without [DONE], the say texts and the thinks of every step
    assert all("[DONE]" not in t for t in kinds["user"]) and kinds["say"] and kinds["think"]
    assert len(kinds["think"]) == sum(m.role == "assistant" for t in runs for m in t.messages)
    same, repeated = identical_repetitions(runs)
    assert repeated == 1 and same in (0, 1)
    # the verdict-less runs report no acceptance
    assert realism_stats(runs)["acceptance"] == {}


def test_stats_cli(tmp_path, capsys):
    scenario = load_domain("mock").scenarios[0]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(simulate(scenario, repetition=r).model_dump_json() + "\n"
                            for r in range(3)))  # fmt: skip
    status, out, _ = run(["stats", path, "--json"], capsys)
    stats = json.loads(out)
    assert status == 0 and stats["conversations"] == 3
    assert set(stats["texts"]) == {"user", "say", "think"}
    status, out, _ = run(["stats", path], capsys)
    assert status == 0 and "| user |" in out and "repeated scenarios" in out
    status, _, err = run(["stats", tmp_path / "none.jsonl"], capsys)
    assert status == 2 and "none.jsonl" in error_line(err)


def test_the_demo_simulation_meets_the_realism_targets(tmp_path):
    # `make demo`'s simulation (3 conversations per hand-written scenario, seed 0) against
    # the realism issue's bars; the figures are deterministic for the seed
    from mads_bench.catalog import load_all_scenarios
    from simulation.parallel import SimulationSettings
    from simulation.simulate_run import simulate_run

    path = tmp_path / "demo.jsonl"
    simulate_run(
        load_all_scenarios(), path, settings=SimulationSettings(seed=0), repetitions=3,
        progress=False,
    )  # fmt: skip
    stats = realism_stats(list(read_trajectories(path)))
    texts = stats["texts"]
    assert texts["user"]["distinct_2"] >= 0.30 and texts["say"]["distinct_2"] >= 0.30
    assert texts["think"]["distinct_2"] >= 0.20
    assert all(figures["exact_dup"] <= 0.20 for figures in texts.values())
    assert stats["identical_repetitions"] == {"scenarios": 0, "of_repeated": 90}
