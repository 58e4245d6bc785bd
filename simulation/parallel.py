"""Planning, sharding and running many conversations, in parallel, with deterministic output.

A run is a list of :class:`SimulationJob` s in a fixed order (scenario-major, repetitions
inner); a job's ``index`` is its position in the full plan. ``--shard i/n`` keeps the jobs with
``index % n == i`` (:func:`select_shard`), so n machines split one plan and the union of their
outputs is exactly the unsharded output: a conversation depends only on (scenario, run seed,
repetition), never on which machine or worker ran it.

:func:`run_jobs` yields outcomes IN JOB ORDER whatever the concurrency, so the output file is
byte-identical for a seed at any ``--concurrency`` (completed-out-of-order results wait in a
bounded window). Executors (measured on this project's 2-core machine, see the README):

- ``thread``: the right choice for remote backends (``openai:``, ``fake:``): each conversation
  waits on HTTP most of the time and one backend object is shared by all threads (its asyncio
  loop bounds the requests in flight).
- ``process``: the only way to use several cores for the pure-Python ``scripted`` agents;
  each worker pays the package import once (~1 s), so it pays off only for long runs.
- ``thread`` is also the choice for ``transformers:``: the conversations' steps reach the one
  in-process model together and are generated as one batch (see its backend).
- ``sequential``: concurrency 1.

Example:
    >>> jobs = plan_jobs(["a", "b"], repetitions=2)
    >>> [(j.index, j.scenario, j.repetition) for j in select_shard(jobs, (1, 2))]
    [(1, 'a', 1), (3, 'b', 1)]
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

EXECUTORS = ("auto", "sequential", "thread", "process")
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class SimulationJob:
    """One conversation to simulate: its place in the plan, its scenario and repetition."""

    index: int
    scenario: Any
    repetition: int


@dataclass(frozen=True)
class SimulationSettings:
    """Everything besides the job that ``simulation.environment.simulate`` needs (picklable)."""

    seed: int = 0
    user: str = "scripted"
    assistant: str = "scripted"
    style: str = "pre_act"
    limits: Any = None
    context: str = "full"


@dataclass
class JobOutcome:
    """The result of one job: the trajectory, or the error that stopped it."""

    job: SimulationJob
    trajectory: Any = None
    error: str | None = None
    extra: dict = field(default_factory=dict)


def plan_jobs(scenarios: Sequence[Any], repetitions: int) -> list[SimulationJob]:
    """Every (scenario, repetition) pair in run order, indexed 0..N-1."""
    if repetitions < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    pairs = [(s, r) for s in scenarios for r in range(repetitions)]
    return [SimulationJob(i, s, r) for i, (s, r) in enumerate(pairs)]


def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``"i/n"`` (0 <= i < n).

    Example:
        >>> parse_shard("2/8")
        (2, 8)
    """
    match = _SHARD.match(text)
    if match is None:
        raise ValueError(f"shard must look like 'i/n' (e.g. 0/4), got {text!r}")
    index, count = int(match[1]), int(match[2])
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"shard {text!r}: need n >= 1 and 0 <= i < n")
    return index, count


def select_shard(jobs: Iterable[SimulationJob], shard: tuple[int, int]) -> list[SimulationJob]:
    """The jobs of shard ``(i, n)``: those whose plan index is ``i`` modulo ``n``."""
    index, count = shard
    return [job for job in jobs if job.index % count == index]


def choose_executor(user: str, assistant: str, concurrency: int, requested: str = "auto") -> str:
    """The executor to use (see the module docstring for the rule behind ``auto``).

    Example:
        >>> choose_executor("scripted", "openai:m@http://localhost:8000/v1", 4)
        'thread'
        >>> choose_executor("scripted", "transformers:tiny-lm", 4)
        'thread'
    """
    if requested not in EXECUTORS:
        raise ValueError(f"unknown executor {requested!r}; expected one of {EXECUTORS}")
    specs = (user, assistant)
    if concurrency <= 1:
        return "sequential"
    if requested != "auto":
        if requested == "process" and any(spec != "scripted" for spec in specs):
            raise ValueError("the process executor runs scripted agents only")
        return requested
    return "process" if all(spec == "scripted" for spec in specs) else "thread"


def simulate_job(
    job: SimulationJob, settings: SimulationSettings, backends: dict | None = None
) -> JobOutcome:
    """Run one job; any exception is returned as the outcome's ``error`` (never raised)."""
    from simulation.environment import simulate
    from simulation.runner import RunLimits

    try:
        trajectory = simulate(
            job.scenario,
            seed=settings.seed,
            repetition=job.repetition,
            user=settings.user,
            assistant=settings.assistant,
            style=settings.style,
            context=settings.context,
            limits=settings.limits or RunLimits(),
            backends=backends,
        )
    except Exception as err:  # a backend failure must not stop the other conversations
        return JobOutcome(job, error=repr(err))
    return JobOutcome(job, trajectory=trajectory)


def _simulate_in_process(job: SimulationJob, settings: SimulationSettings) -> JobOutcome:
    # Top-level so that the process pool can pickle it; scripted agents need no backends.
    return simulate_job(job, settings)


def run_jobs(
    jobs: Sequence[SimulationJob],
    settings: SimulationSettings,
    *,
    concurrency: int = 1,
    executor: str = "sequential",
    backends: dict | None = None,
    window: int | None = None,
) -> Iterator[JobOutcome]:
    """Simulate ``jobs`` and yield their outcomes in job order.

    Args:
        jobs: the jobs, in output order.
        settings: seed, agent specs, style and limits.
        concurrency: conversations in flight at once.
        executor: ``sequential``, ``thread`` or ``process`` (see :func:`choose_executor`).
        backends: built backends by spec, shared by threads (not used by processes).
        window: jobs submitted ahead of the oldest unfinished one (default 4 x concurrency).

    Returns:
        `Iterator[JobOutcome]`: one outcome per job, in the order of ``jobs``.
    """
    if executor == "sequential" or concurrency <= 1:
        for job in jobs:
            yield simulate_job(job, settings, backends)
        return
    if executor == "thread":
        pool: Executor = ThreadPoolExecutor(concurrency, thread_name_prefix="simulate")
        submit: Callable[[SimulationJob], Future] = lambda job: pool.submit(  # noqa: E731
            simulate_job, job, settings, backends
        )
    elif executor == "process":
        pool = ProcessPoolExecutor(concurrency)
        submit = lambda job: pool.submit(_simulate_in_process, job, settings)  # noqa: E731
    else:
        raise ValueError(f"unknown executor {executor!r}")
    ahead = window or 4 * concurrency
    pending: deque[tuple[SimulationJob, Future]] = deque()
    remaining = iter(jobs)
    try:
        for job in remaining:
            pending.append((job, submit(job)))
            if len(pending) >= ahead:
                break
        while pending:
            job, future = pending.popleft()
            try:
                outcome = future.result()
            except Exception as err:  # e.g. a worker process that died
                outcome = JobOutcome(job, error=repr(err))
            nxt = next(remaining, None)
            if nxt is not None:
                pending.append((nxt, submit(nxt)))
            yield outcome
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
