"""Simulate a list of scenarios into a trajectories JSONL file: the library behind ``simulate``.

:func:`simulate_run` plans the jobs (``repetitions`` per scenario, optionally one shard of the
plan), skips conversations the output already holds (``resume``), runs the rest with
:func:`simulation.parallel.run_jobs` and appends each finished trajectory in plan order. A
conversation that fails is reported and not written; ``max_failures`` failures in a row
(a backend that does not answer) stop the run, and a later ``resume`` picks it up. The file
gets a run manifest (:func:`run_manifest`, :mod:`mads_bench.manifest`): a ``resume`` with
another seed, agent, model, style, limit or scenario set is refused before anything is read.

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
import dataclasses
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mads_bench.manifest import check_manifest, content_hash, start_output
from simulation.backends import spec_fingerprint
from simulation.parallel import (
    SimulationSettings,
    choose_executor,
    plan_jobs,
    run_jobs,
    select_shard,
)
from simulation.runner import trajectory_id
from simulation.trajectory_io import TrajectoryWriter

__all__ = ["SimulationReport", "run_manifest", "simulate_run", "summary_tables"]


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

    planned: int = 0

    @property
    def written(self) -> int:
        """Conversations written by this run."""
        return len(self.trajectories)

    @property
    def missing(self) -> int:
        """Planned conversations the output still lacks (failed, or never reached)."""
        return self.planned - self.skipped - self.written

    @property
    def partial(self) -> bool:
        """True when the output does not hold every planned conversation."""
        return self.missing > 0


def run_manifest(
    settings: SimulationSettings,
    scenarios: Sequence[Any],
    shard: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """The settings that decide a trajectory file's records: its manifest's ``settings``.

    Seed, user and assistant specs (with the fingerprint of a local model's weights), step
    style, conversation limits, a hash of the scenarios in plan order, and the shard. The
    repetitions are not part of it: a resumed run may add trials.
    """
    limits = settings.limits
    return {
        "seed": settings.seed,
        "user": settings.user,
        "user model": spec_fingerprint(settings.user),
        "assistant": settings.assistant,
        "assistant model": spec_fingerprint(settings.assistant),
        "style": settings.style,
        # a full-context run keeps the manifest it had before contexts existed (resumable)
        **({"context": settings.context} if settings.context != "full" else {}),
        "limits": dataclasses.asdict(limits) if limits is not None else None,
        "scenarios": content_hash(s.model_dump_json() for s in scenarios),
        "shard": f"{shard[0]}/{shard[1]}" if shard else None,
    }


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
        `ManifestMismatchError`: ``resume`` on an output that other settings (or scenarios)
            produced, or that has no manifest (see :mod:`mads_bench.manifest`).
        `TrajectoryFileError`: ``resume`` on a file with a bad line before its last one.
    """
    from tqdm import tqdm

    settings = settings or SimulationSettings()
    executor = choose_executor(settings.user, settings.assistant, concurrency, executor)
    manifest = run_manifest(settings, scenarios, shard)
    if resume:
        check_manifest(out, manifest)
    writer = TrajectoryWriter(out, resume=resume)
    start_output(out, manifest, resume=resume)
    report = SimulationReport(Path(out), executor, repaired_bytes=writer.repaired_bytes)
    if writer.repaired_bytes:
        log(f"repaired a torn last line ({writer.repaired_bytes} bytes)")
    jobs = plan_jobs(scenarios, repetitions)
    if shard:
        jobs = select_shard(jobs, shard)
    todo = [
        j for j in jobs if trajectory_id(j.scenario.id, j.repetition, settings.seed) not in writer
    ]
    report.planned = len(jobs)
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
