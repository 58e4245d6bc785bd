"""The adversarial battery: no assistant that games online task success earns it, on every
scenario of every pack (hand-written, generated with a seed, τ²-bench retail train when the
shared data is there), while the scripted gold policy succeeds on all of them."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from evaluators.online.adversaries import ADVERSARIES, BASELINE, render_battery, run_battery
from mads_bench.catalog import default_domain_names, domain_of, load_domain, load_pack
from mads_bench.cli import main
from mads_bench.generator import generate_for_domains
from simulation.validator.outcome_facts import outcome_facts
from simulation.validator.state import replay_workflow

TAU2 = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "tau2_retail"
PACKS = ["hand-written", "generated", "tau2-train"]


@cache
def _scenarios(pack: str, folder: str) -> tuple:
    if pack == "hand-written":
        return tuple(s for name in default_domain_names() for s in load_domain(name).scenarios)
    if pack == "generated":
        domains = [load_domain(name) for name in default_domain_names()]
        return tuple(generate_for_domains(domains, 600, seed=7))
    if not (TAU2 / "db.json").is_file():
        pytest.skip("no shared τ² data")
    from simulation.importers.tau2 import import_tau2

    out = Path(folder) / "tau2-pack"
    if not out.exists():
        import_tau2(TAU2, out)
    return tuple(load_pack(out).scenarios)


@pytest.fixture(scope="session")
def pack_folder(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("battery"))


@pytest.mark.parametrize("pack", PACKS)
@pytest.mark.parametrize("cheat", list(ADVERSARIES))
def test_no_cheat_succeeds_anywhere(pack, cheat, pack_folder):
    scenarios = _scenarios(pack, pack_folder)
    if pack == "tau2-train":
        from mads_bench.catalog import register_domain_dir

        register_domain_dir(Path(pack_folder) / "tau2-pack")
    row = run_battery(scenarios, names=[cheat])[cheat]
    assert row["conversations"] + row["not_applicable"] == len(scenarios)
    assert row["conversations"] > 0, f"{cheat} found nothing to try on {pack}"
    assert row["success"] == 0, (cheat, row["succeeded"])


@pytest.mark.parametrize("pack", PACKS)
def test_the_gold_policy_succeeds_everywhere(pack, pack_folder):
    scenarios = _scenarios(pack, pack_folder)
    if pack == "tau2-train":
        from mads_bench.catalog import register_domain_dir

        register_domain_dir(Path(pack_folder) / "tau2-pack")
    trials = 2 if pack == "hand-written" else 1
    row = run_battery(scenarios, names=[BASELINE], trials=trials)[BASELINE]
    assert row["conversations"] == trials * len(scenarios)
    assert row["success"] == row["conversations"]


@pytest.mark.parametrize("pack", ["hand-written", "generated"])
def test_every_reachable_goal_has_facts_to_tell(pack, pack_folder):
    # a goal the assistant reaches always leaves something to tell: else "All done" would pass
    bare = []
    for scenario in _scenarios(pack, pack_folder):
        replay = replay_workflow(scenario, seed=0, domain=domain_of(scenario))
        if not (scenario.impossible or replay.blocked or outcome_facts(scenario, replay, "")):
            bare.append(scenario.id)
    assert bare == []


def test_the_battery_command_prints_its_table(capsys):
    assert main(["eval", "online", "--battery", "--domain", "mock", "--no-progress"]) == 0
    table = capsys.readouterr().out
    assert table.startswith("| player |") and "| scripted | 3 | 0 | 1.000 |" in table
    assert all(f"| {name} |" in table for name in ADVERSARIES)
    assert main(["eval", "online", "--battery", "--assistant", "scripted"]) == 2
    assert "drop --assistant" in capsys.readouterr().err


def test_render_battery_marks_a_cheat_with_nothing_to_try():
    row = {"conversations": 0, "not_applicable": 4, "success": 0, "state": 0, "told": 0}
    assert "| extra_write | 0 | 4 | - |" in render_battery({"extra_write": row | {"ended": 0}})
