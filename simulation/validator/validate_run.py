"""Validate trajectory files into accepted / rejected JSONL: the library behind ``validate``.

Every input trajectory lands in exactly one output with its verdict (rejected ones keep
their reasons; nothing is dropped). Without ``resume`` existing outputs are replaced, so a
rerun gives the same files; with it, ids already in either output are skipped and a torn
last line is cut first, once each output's run manifest (:mod:`mads_bench.manifest`: judge,
embeddings, scenario set) matches this run's. A duplicate id in the input is validated once
and counted.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from mads_bench.catalog import load_domain
    >>> from simulation.simulate_run import simulate_run
    >>> work = Path(tempfile.mkdtemp())
    >>> _ = simulate_run(load_domain("mock").scenarios[:1], work / "t.jsonl", progress=False)
    >>> summary = validate_run([work / "t.jsonl"], work / "a.jsonl", work / "r.jsonl",
    ...                        progress=False, embedder=NO_EMBEDDINGS)
    >>> summary["validated"], summary["accepted"] + summary["rejected"]
    (1, 1)
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from mads_bench.manifest import check_manifest, content_hash, start_output
from simulation.backends import spec_fingerprint
from simulation.trajectory_io import TrajectoryWriter, read_trajectories
from simulation.validator.aggregate import NO_EMBEDDINGS, validate_trajectories  # noqa: F401

__all__ = ["format_summary", "summarise", "validate_run"]

CHECKS = ("syntax", "faithfulness", "role_confusion", "task_success")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def validate_run(
    inputs: Sequence[Path | str],
    out_accepted: Path | str,
    out_rejected: Path | str,
    *,
    scenarios: Mapping[str, Any] | None = None,
    judge: Any = None,
    chunk_size: int = 32,
    resume: bool = False,
    progress: bool = True,
    log: Callable[[str], None] = _stderr,
    embedder: Any = None,
) -> dict:
    """Stream the trajectories of ``inputs`` through the validator into the two outputs.

    Args:
        inputs (`Sequence[Path]`): trajectory JSONL files, read in order.
        out_accepted (`Path`), out_rejected (`Path`): the outputs (JSONL).
        scenarios (`Mapping[str, Scenario]`, *optional*): id -> scenario of every trajectory
            (default: the hand-written scenarios of every domain, mock included).
        judge (`ChatBackend`, *optional*): the judge for what the rules cannot decide.
        chunk_size (`int`): trajectories per embedding/judge batch.
        resume (`bool`): keep the outputs and skip the ids they hold.
        progress (`bool`): show a progress bar.
        log (`Callable[[str], None]`): where repairs are reported.
        embedder (`Embedder`, *optional*): sentence embeddings for the checks (default MiniLM;
            `NO_EMBEDDINGS` leaves those decisions to rules and judge).

    Returns:
        `dict`: the run summary (see :func:`summarise`) plus ``already_stored``,
        ``duplicate_ids`` and ``unknown_scenarios`` (trajectories whose scenario is not in
        ``scenarios``: rejected, kept, and counted so the summary can say why).
    """
    from tqdm import tqdm

    if scenarios is None:
        from mads_bench.catalog import load_all_scenarios

        scenarios = {s.id: s for s in load_all_scenarios(include_mock=True)}
    judge_spec = getattr(judge, "spec", None) or ("rules" if judge is None else repr(judge))
    manifest = {
        "judge": judge_spec,
        "judge model": spec_fingerprint(judge_spec) if judge is not None else None,
        "embeddings": "none" if embedder is NO_EMBEDDINGS else "minilm",
        "scenarios": content_hash(scenarios[k].model_dump_json() for k in sorted(scenarios)),
    }
    outputs = (Path(out_accepted), Path(out_rejected))
    if resume:
        for path in outputs:
            check_manifest(path, manifest)
    else:
        for path in outputs:
            path.unlink(missing_ok=True)
    accepted = TrajectoryWriter(out_accepted, resume=True)
    rejected = TrajectoryWriter(out_rejected, resume=True)
    for path in outputs:
        start_output(path, manifest, resume=resume)
    for writer in (accepted, rejected):
        if writer.repaired_bytes:
            log(f"{writer.path}: cut a torn last line ({writer.repaired_bytes} bytes)")
    stored = accepted.ids | rejected.ids
    counts: Counter[str] = Counter()

    def todo() -> Iterator:
        seen: set[str] = set()
        for trajectory in (t for path in inputs for t in read_trajectories(path)):
            if trajectory.id in seen:
                counts["duplicate"] += 1
            elif trajectory.id in stored:
                counts["stored"] += 1
            else:
                counts["unknown"] += trajectory.scenario_id not in scenarios
                yield trajectory
            seen.add(trajectory.id)

    verdicts: list[tuple[str, dict]] = []
    start = time.perf_counter()
    with accepted, rejected, tqdm(desc="validate", disable=not progress) as bar:
        stream = validate_trajectories(
            todo(), scenarios, judge=judge, embedder=embedder, chunk_size=chunk_size
        )
        for trajectory in stream:
            (accepted if trajectory.verdict["passed"] else rejected).write(trajectory)
            verdicts.append((trajectory.complexity, trajectory.verdict))
            bar.update()
    summary = summarise(verdicts, time.perf_counter() - start)
    summary["judge"] = getattr(judge, "spec", None) or "rules"
    summary["already_stored"] = counts["stored"]
    summary["duplicate_ids"] = counts["duplicate"]
    summary["unknown_scenarios"] = counts["unknown"]
    return summary


def summarise(verdicts: list[tuple[str, dict]], seconds: float) -> dict:
    """Counts of the run: totals, failures per check, who decided, pass rate by complexity."""
    failures: Counter[str] = Counter()
    deciders: Counter[str] = Counter()
    by_complexity: dict[str, list[int]] = {}
    for complexity, verdict in verdicts:
        row = by_complexity.setdefault(complexity, [0, 0])
        row[0] += verdict["passed"]
        row[1] += 1
        for name, check in verdict["checks"].items():
            failures[name] += not check["passed"]
            deciders[f"{name}/{check['decided_by']}"] += 1
    total = len(verdicts)
    accepted = sum(v["passed"] for _, v in verdicts)
    return {
        "validated": total,
        "accepted": accepted,
        "rejected": total - accepted,
        "acceptance_rate": accepted / total if total else None,
        "failures_per_check": dict(failures),
        "decided_by": dict(sorted(deciders.items())),
        "by_complexity": {k: {"accepted": a, "total": n} for k, (a, n) in by_complexity.items()},
        "seconds": round(seconds, 3),
        "conversations_per_second": round(total / seconds, 2) if seconds > 0 else None,
    }


def format_summary(summary: dict) -> str:
    """The summary as a line of counts and two markdown tables (checks, complexity)."""
    rate = summary["acceptance_rate"]
    lines = [
        f"\n{summary['validated']} validated ({summary['already_stored']} already in the outputs, "
        f"{summary['duplicate_ids']} duplicate ids skipped): "
        f"{summary['accepted']} accepted, {summary['rejected']} rejected"
        + (f" ({rate:.1%} accepted)" if rate is not None else "")
        + f", {summary['conversations_per_second']} conversations/s",
        "\n| check | failed | decided by |\n| --- | --- | --- |",
    ]
    for name in CHECKS:
        by = ", ".join(
            f"{k.split('/')[1]} {v}" for k, v in summary["decided_by"].items() if k.startswith(name)
        )
        lines.append(f"| {name} | {summary['failures_per_check'].get(name, 0)} | {by} |")
    lines.append("\n| complexity | accepted | total |\n| --- | --- | --- |")
    for name, row in sorted(summary["by_complexity"].items()):
        lines.append(f"| {name} | {row['accepted']} | {row['total']} |")
    if summary.get("unknown_scenarios"):
        lines.append(
            f"\n{summary['unknown_scenarios']} conversations name a scenario that was not loaded "
            "and are rejected as unknown_scenario: pass --scenarios FILE (`simulate "
            "--num-scenarios N --out T.jsonl` writes T.scenarios.jsonl) or --domain-dir PACK"
        )
    return "\n".join(lines)
