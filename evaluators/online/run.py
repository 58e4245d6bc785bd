"""Run the candidate assistant over scenarios and score it: the library behind ``eval online``.

:func:`evaluate_online` simulates ``trials`` conversations per scenario into
``OUT/trajectories.jsonl`` with :func:`simulation.simulate_run.simulate_run` (resumable:
nothing is duplicated or dropped after a kill), scores every conversation of the plan with
:func:`evaluators.online.core.conversation_outcome`, and writes ``OUT/report.json`` and
``OUT/report.md``. A planned conversation that could not be simulated (a backend error) is
scored as a failure with its reason, never left out.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from mads_bench.catalog import load_domain
    >>> out = Path(tempfile.mkdtemp())
    >>> report = evaluate_online(load_domain("mock").scenarios, out, trials=2, progress=False)
    >>> report["overall"]["success_rate"], sorted(p.name for p in out.iterdir())
    (1.0, ['report.json', 'report.md', 'trajectories.jsonl'])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluators.online.core import (
    OnlineOutcome,
    conversation_outcome,
    render_markdown,
    score_online,
)
from mads_bench.files import atomic_write_text
from simulation.parallel import SimulationSettings
from simulation.runner import trajectory_id
from simulation.simulate_run import simulate_run
from simulation.trajectory_io import read_trajectories
from simulation.validator.embedding import Embedder

__all__ = ["evaluate_online"]


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
    embedder: Embedder | None = None,
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
        embedder (`Embedder`, *optional*): MiniLM for the decline rules (loaded when omitted).
        sage (`bool`): also count SAGE-Core failures per turn.

    Returns:
        `dict`: the report of :func:`score_online`, plus ``settings`` and ``not_simulated``.
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
    embedder = embedder or Embedder()
    outcomes, missing = [], 0
    for scenario in scenarios:
        for trial in range(trials):
            trajectory = by_id.get(trajectory_id(scenario.id, trial, settings.seed))
            if trajectory is None:
                missing += 1
                outcomes.append(_not_simulated(scenario, trial))
            else:
                outcomes.append(
                    conversation_outcome(trajectory, scenario, embedder=embedder, sage=sage)
                )
    report = score_online(outcomes, resamples=resamples, seed=0)
    report["settings"] = {
        "assistant": settings.assistant,
        "user": settings.user,
        "style": settings.style,
        "seed": settings.seed,
        "trials": trials,
    }
    report["not_simulated"] = missing
    report["failures"] = run.failures
    atomic_write_text(out / "report.json", json.dumps(report, indent=2) + "\n")
    atomic_write_text(out / "report.md", render_markdown(report))
    return report


def _not_simulated(scenario: Any, trial: int) -> OnlineOutcome:
    return OnlineOutcome(
        scenario_id=scenario.id,
        trial=trial,
        domain=scenario.domain,
        complexity=scenario.complexity,
        behaviors=sorted({b.kind for b in scenario.behaviors}),
        state=False,
        told=False,
        ended=False,
        reasons=["conversation: not_simulated: the run failed or stopped before it"],
    )
