"""import-tau2 on the shared τ²-bench retail data (skipped where ../shared/data is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mads_bench.catalog import load_pack
from mads_bench.cli import main as cli
from mads_bench.loading import CatalogError
from simulation.importers.tau2 import first_person, import_tau2
from tests.cli_helpers import error_line, run

TAU2 = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "tau2_retail"
pytestmark = pytest.mark.skipif(not (TAU2 / "db.json").is_file(), reason="no shared τ² data")


def test_first_person():
    assert first_person("You want your refund; ask you") == "I want my refund; ask me"


def test_import_is_deterministic_and_every_gold_replays(tmp_path):
    a = import_tau2(TAU2, tmp_path / "a")
    import_tau2(TAU2, tmp_path / "b")
    assert (tmp_path / "a" / "scenarios.yaml").read_bytes() == (
        tmp_path / "b" / "scenarios.yaml"
    ).read_bytes()
    assert a.tasks == a.scenarios == 74
    assert len(a.refused_writes) <= 1  # task 105: the gift card cannot cover the exchange


def _source_with(tasks: list[dict], folder: Path) -> Path:
    """A τ²-bench folder holding the shared database and policy and only ``tasks``."""
    folder.mkdir()
    for name in ("db.json", "policy.md"):
        (folder / name).symlink_to(TAU2 / name)
    (folder / "tasks_train.json").write_text(json.dumps(tasks))
    return folder


def test_malformed_task_names_its_id(tmp_path):
    tasks = json.loads((TAU2 / "tasks_train.json").read_text())[:2]
    tasks[1]["evaluation_criteria"]["actions"][0]["name"] = "no_such_tool"
    source = _source_with(tasks, tmp_path / "src")
    with pytest.raises(CatalogError, match="task '1'.*unknown tool 'no_such_tool'"):
        import_tau2(source, tmp_path / "pack")
    assert not (tmp_path / "pack").exists()


def test_an_empty_task_list_is_an_error_naming_the_file(tmp_path, capsys):
    pack = tmp_path / "pack"
    one_task = json.loads((TAU2 / "tasks_train.json").read_text())[:1]
    import_tau2(_source_with(one_task, tmp_path / "one"), pack)
    before = (pack / "scenarios.yaml").read_bytes()
    source = _source_with([], tmp_path / "src")
    status, _, err = run(["import-tau2", "--tau2-dir", source, "--out", pack], capsys)
    assert status == 2
    tasks_file = source / "tasks_train.json"
    assert error_line(err) == f"error: {tasks_file}: no tasks (an empty list); nothing to import"
    assert (pack / "scenarios.yaml").read_bytes() == before  # the earlier import is kept


def test_adversities_add_a_marked_unhappy_variant_per_task(tmp_path):
    tasks = json.loads((TAU2 / "tasks_train.json").read_text())[:6]
    report = import_tau2(_source_with(tasks, tmp_path / "src"), tmp_path / "pack", adversities=True)
    assert report.scenarios == 2 * report.tasks == 12
    scenarios = {s.id: s for s in load_pack(tmp_path / "pack").scenarios}
    for task in tasks:
        plain, unhappy = (scenarios[f"tau2-retail-{task['id']}{e}"] for e in ("", "-unhappy"))
        assert plain.complexity == "normal" and not plain.behaviors
        assert unhappy.complexity == "unhappy" and len(unhappy.behaviors) == 2
        assert unhappy.gold_workflow == plain.gold_workflow


def test_scripted_online_success_on_imported_tasks(tmp_path, capsys):
    pack = tmp_path / "pack"
    assert cli(["import-tau2", "--tau2-dir", str(TAU2), "--out", str(pack)]) == 0
    out = tmp_path / "online"
    args = ["eval", "online", "--domain-dir", str(pack), "--assistant", "scripted",
            "--out", str(out), "--no-progress", "--json"]  # fmt: skip
    assert cli(args) == 0
    report = json.loads((out / "report.json").read_text())
    failed = [
        (t["scenario_id"], t["end_reason"])
        for t in map(json.loads, (out / "trajectories.jsonl").read_text().splitlines())
        if t["end_reason"] != "done"
    ]
    assert report["overall"]["success_rate"] == 1.0, failed
    # the longest gold workflows (13 look-ups and writes) fit in one turn
    assert load_pack(pack).manifest.max_steps_per_turn == 15


def test_a_pack_without_scenarios_is_refused_by_eval_online(tmp_path, capsys):
    pack = tmp_path / "pack"
    assert cli(["import-tau2", "--tau2-dir", str(TAU2), "--out", str(pack)]) == 0
    (pack / "scenarios.yaml").write_text("[]\n")
    capsys.readouterr()
    argv = ["eval", "online", "--domain-dir", pack, "--assistant", "scripted"]
    status, _, err = run([*argv, "--out", tmp_path / "online", "--no-progress"], capsys)
    # before: "error: unexpected ValueError: no conversation to score"
    assert status == 2
    assert error_line(err) == "error: no scenario to run: domain(s) tau2_retail hold none"
