"""Fixtures: scripted trajectories of every domain, written to JSONL and built once per session.

The trajectories come from the offline, deterministic scripted simulation (one conversation
per hand-written scenario of the six domains, run seed 0), so every test sees the same data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mads_bench.catalog import domain_names, load_domain
from mads_bench.data_model import Trajectory
from mads_bench.datasets import BuiltDataset, build_dataset


def write_jsonl(path: Path, trajectories: list[Trajectory]) -> Path:
    """Write trajectories one per line (the simulator's format)."""
    path.write_text("".join(t.model_dump_json() + "\n" for t in trajectories), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def trajectories() -> list[Trajectory]:
    """One scripted conversation per scenario of the six domains (mock excluded)."""
    from simulation.environment import simulate

    scenarios = [s for d in domain_names() if d != "mock" for s in load_domain(d).scenarios]
    return [simulate(scenario, seed=0) for scenario in scenarios]


@pytest.fixture(scope="session")
def trajectory_file(tmp_path_factory: pytest.TempPathFactory, trajectories) -> Path:
    """The session trajectories as a JSONL file."""
    return write_jsonl(tmp_path_factory.mktemp("traj") / "t.jsonl", trajectories)


@pytest.fixture(scope="session")
def built(trajectory_file: Path) -> BuiltDataset:
    """The dataset built from the session file with the default split settings."""
    return build_dataset([trajectory_file], include_unvalidated=True)
