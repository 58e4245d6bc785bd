"""Run the candidate assistant over scenarios and score it: the library behind ``eval online``.

:func:`evaluate_online` simulates ``trials`` conversations per scenario into
``OUT/trajectories.jsonl`` with :func:`simulation.simulate_run.simulate_run` (resumable:
nothing is duplicated or dropped after a kill), scores every conversation it holds with
:func:`simulation.validator.rubric.grade_conversation`, and writes ``OUT/report.json`` and
``OUT/report.md``. A resume under other settings is refused (the trajectories' run manifest).
A planned conversation that could not be simulated (a backend error, a stopped run) is not
scored as the assistant's failure: an outage is not a 0 % assistant. The report is then marked
``partial``, with ``planned`` and ``not_simulated`` counts, and its figures cover only the
conversations that ran; when none ran, no report is written (`OnlineRunError`).

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from mads_bench.catalog import load_domain
    >>> out = Path(tempfile.mkdtemp())
    >>> report = evaluate_online(load_domain("mock").scenarios, out, trials=2, progress=False)
    >>> report["overall"]["success_rate"], report["partial"]
    (1.0, False)
    >>> sorted(p.name for p in out.iterdir())
    ['report.json', 'report.md', 'trajectories.jsonl', 'trajectories.manifest.json']
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluators.online.core import (
    render_markdown,
    score_online,
)
from mads_bench.catalog import domain_of
from mads_bench.embedding import SentenceEncoder
from mads_bench.errors import MadsBenchError
from mads_bench.files import atomic_write_text
from simulation.parallel import SimulationSettings
from simulation.runner import trajectory_id
from simulation.simulate_run import simulate_run
from simulation.trajectory_io import read_trajectories
from simulation.validator.rubric import grade_conversation

__all__ = ["OnlineRunError", "evaluate_online"]


class OnlineRunError(MadsBenchError):
    """No planned conversation could be simulated: there is nothing to score."""


def evaluate_online(
    scenarios: Sequence[Any],
    out: Path | str,
    *,
    settings: SimulationSettings | None = None,
    trials: int = 1,
    concurrency: int = 1,
    resume: bool = False,
    backends: dict | None = None,
    max_failures: int | None = 3,
    progress: bool = True,
    resamples: int = 10_000,
    embedder: SentenceEncoder | None = None,
    sage: bool = False,
) -> dict[str, Any]:
    """Simulate ``trials`` conversations per scenario with the settings' agents and score them.

    Args:
        scenarios (`Sequence[Scenario]`): the evaluation scenarios (ids must be unique).
        out (`Path`): output folder (``trajectories.jsonl``, ``report.json``, ``report.md``).
        settings (`SimulationSettings`, *optional*): seed, user and assistant specs, style.
        trials (`int`): conversations per scenario (repetitions, each its own seed).
        concurrency (`int`): conversations in flight.
        resume (`bool`): continue ``OUT/trajectories.jsonl``.
        backends (`dict`, *optional*): spec -> backend, shared by all conversations.
        max_failures (`int`, *optional*): stop simulating after this many failures in a row.
        progress (`bool`): show a progress bar.
        resamples (`int`): bootstrap resamples for the CIs.
        embedder (`SentenceEncoder`, *optional*): MiniLM for the decline rules (loaded when
            omitted).
        sage (`bool`): also count SAGE-Core failures per turn.

    Returns:
        `dict`: the report of :func:`score_online`, plus ``settings``, ``planned``,
        ``not_simulated``, ``partial`` and the simulation ``failures``.

    Raises:
        `ManifestMismatchError`: ``resume`` on trajectories that other settings produced.
        `OnlineRunError`: no planned conversation ran.
    """
    settings = settings or SimulationSettings()
    out = Path(out)
    trajectories_file = out / "trajectories.jsonl"
    run = simulate_run(
        scenarios,
        trajectories_file,
        settings=settings,
        repetitions=trials,
        concurrency=concurrency,
        resume=resume,
        max_failures=max_failures,
        backends=backends,
        progress=progress,
    )
    by_id = {t.id: t for t in read_trajectories(trajectories_file)}
    embedder = embedder or SentenceEncoder()
    if sage:
        from evaluators.sage.mads_turns import sage_failures_per_turn
    counter = sage_failures_per_turn if sage else None
    outcomes = [
        grade_conversation(
            trajectory, scenario, domain=domain_of(scenario), embedder=embedder, sage=counter
        )
        for scenario in scenarios
        for trial in range(trials)
        if (trajectory := by_id.get(trajectory_id(scenario.id, trial, settings.seed)))
    ]
    planned = len(scenarios) * trials
    if not outcomes:
        last = f" (last failure: {run.failures[-1]})" if run.failures else ""
        raise OnlineRunError(
            f"eval online: none of the {planned} planned conversations ran{last}; nothing to "
            f"score: rerun with --resume once the backend answers"
        )
    report = score_online(outcomes, resamples=resamples, seed=0)
    report["settings"] = {
        "assistant": settings.assistant,
        "user": settings.user,
        "style": settings.style,
        "context": settings.context,
        "seed": settings.seed,
        "trials": trials,
    }
    report["planned"] = planned
    report["not_simulated"] = planned - len(outcomes)
    report["partial"] = report["not_simulated"] > 0
    report["failures"] = run.failures
    atomic_write_text(out / "report.json", json.dumps(report, indent=2) + "\n")
    atomic_write_text(out / "report.md", render_markdown(report))
    return report
