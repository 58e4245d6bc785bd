"""Simulate a list of scenarios into a trajectories JSONL file: the library behind ``simulate``.

:func:`simulate_run` plans the jobs (``repetitions`` per scenario, optionally one shard of the
plan), skips conversations the output already holds (``resume``), runs the rest with
:func:`simulation.parallel.run_jobs` and appends each finished trajectory in plan order. A
conversation that fails is reported and not written; ``max_failures`` failures in a row
(a backend that does not answer) stop the run, and a later ``resume`` picks it up.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from mads_bench.catalog import load_domain
    >>> out = Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> report = simulate_run(load_domain("mock").scenarios, out, progress=False)
    >>> report.written == len(load_domain("mock").scenarios), report.skipped
    (True, 0)
"""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulation.parallel import (
    SimulationSettings,
    choose_executor,
    plan_jobs,
    run_jobs,
    select_shard,
)
from simulation.runner import trajectory_id
from simulation.trajectory_io import TrajectoryWriter

__all__ = ["SimulationReport", "simulate_run", "summary_tables"]


@dataclass
class SimulationReport:
    """What a run did: the trajectories it wrote, what it skipped, failed or repaired."""

    out: Path
    executor: str
    trajectories: list = field(default_factory=list)
    skipped: int = 0
    failures: list[str] = field(default_factory=list)
    stopped_early: bool = False
    repaired_bytes: int = 0

    @property
    def written(self) -> int:
        """Conversations written by this run."""
        return len(self.trajectories)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def simulate_run(
    scenarios: Sequence[Any],
    out: Path | str,
    *,
    settings: SimulationSettings | None = None,
    repetitions: int = 1,
    concurrency: int = 1,
    executor: str = "auto",
    shard: tuple[int, int] | None = None,
    resume: bool = False,
    max_failures: int | None = 3,
    backends: dict | None = None,
    progress: bool = True,
    log: Callable[[str], None] = _stderr,
) -> SimulationReport:
    """Simulate ``repetitions`` conversations per scenario into ``out`` (JSONL, append-only).

    Args:
        scenarios (`Sequence[Scenario]`): what to simulate, in plan order.
        out (`Path`): the trajectories file (parents are created).
        settings (`SimulationSettings`, *optional*): seed, agent specs, step style, limits.
        repetitions (`int`): conversations per scenario.
        concurrency (`int`): conversations in flight.
        executor (`str`): ``auto``, ``sequential``, ``thread`` or ``process``.
        shard (`tuple[int, int]`, *optional*): run only shard ``i`` of ``n`` of the plan.
        resume (`bool`): continue an existing ``out`` (a torn last line is cut first).
        max_failures (`int`, *optional*): stop after this many failed conversations in a row
            (None: never stop).
        backends (`dict`, *optional*): spec -> backend objects, shared by all conversations.
        progress (`bool`): show a progress bar.
        log (`Callable[[str], None]`): where failures and repairs are reported.

    Returns:
        `SimulationReport`: the written trajectories and the counts.

    Raises:
        `OutputExistsError`: ``out`` holds records and ``resume`` is False.
        `TrajectoryFileError`: ``resume`` on a file with a bad line before its last one.
    """
    from tqdm import tqdm

    settings = settings or SimulationSettings()
    executor = choose_executor(settings.user, settings.assistant, concurrency, executor)
    writer = TrajectoryWriter(out, resume=resume)
    report = SimulationReport(Path(out), executor, repaired_bytes=writer.repaired_bytes)
    if writer.repaired_bytes:
        log(f"repaired a torn last line ({writer.repaired_bytes} bytes)")
    jobs = plan_jobs(scenarios, repetitions)
    if shard:
        jobs = select_shard(jobs, shard)
    todo = [
        j for j in jobs if trajectory_id(j.scenario.id, j.repetition, settings.seed) not in writer
    ]
    report.skipped = len(jobs) - len(todo)
    outcomes = run_jobs(
        todo, settings, concurrency=concurrency, executor=executor, backends=backends or {}
    )
    in_a_row = 0
    with (
        writer,
        contextlib.closing(outcomes),
        tqdm(total=len(todo), desc="simulate", disable=not progress) as bar,
    ):
        for outcome in outcomes:
            bar.update()
            if outcome.error is None:
                in_a_row = 0
                writer.write(outcome.trajectory)
                report.trajectories.append(outcome.trajectory)
                continue
            in_a_row += 1
            job = outcome.job
            report.failures.append(f"{job.scenario.id} r{job.repetition}: {outcome.error}")
            log(f"error: {report.failures[-1]}")
            if max_failures is not None and in_a_row >= max_failures:
                report.stopped_early = True
                log(
                    f"error: stopped after {in_a_row} failed conversations in a row "
                    "(--max-failures); what was written is kept: rerun with --resume"
                )
                break
    return report


def summary_tables(trajectories: list) -> str:
    """Markdown tables: conversations by complexity/end reason, behaviors seen, and the
    validator pass rate by complexity when the trajectories carry verdicts."""
    outcomes: Counter[str] = Counter(f"{t.complexity}/{t.end_reason}" for t in trajectories)
    behaviors: Counter[str] = Counter()
    for trajectory in trajectories:
        behaviors.update({i.kind for i in trajectory.injections})
    lines = ["", "| complexity/end | conversations |", "| --- | --- |"]
    lines += [f"| {key} | {count} |" for key, count in sorted(outcomes.items())]
    if behaviors:
        lines += ["", "| behavior seen | conversations |", "| --- | --- |"]
        lines += [f"| {key} | {count} |" for key, count in sorted(behaviors.items())]
    judged = [t for t in trajectories if t.verdict is not None]
    if judged:
        lines += [
            "",
            "| complexity | validator passed | judged | pass rate |",
            "| --- | --- | --- | --- |",
        ]
        for complexity in sorted({t.complexity for t in judged}):
            group = [t for t in judged if t.complexity == complexity]
            passed = sum(bool(t.verdict.get("passed")) for t in group)
            lines.append(f"| {complexity} | {passed} | {len(group)} | {passed / len(group):.1%} |")
    return "\n".join(lines)
