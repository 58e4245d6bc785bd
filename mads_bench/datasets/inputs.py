"""Reading trajectory JSONL files and choosing which trajectories go into a dataset.

Inputs are JSONL files of :class:`~mads_bench.data_model.Trajectory` (one per line), or
folders whose ``*.jsonl`` files are read in name order. A bad record is an error naming the
file and the 1-based line. Selection never drops anything silently: every trajectory is
counted as used (validator passed), rejected (validator failed), unvalidated-used
(``include_unvalidated``), unvalidated-skipped, or duplicate (an id already read).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mads_bench.data_model import Trajectory
from mads_bench.errors import MadsBenchError
from simulation.trajectory_io import TrajectoryFileError, read_trajectories


class DatasetBuildError(MadsBenchError, ValueError):
    """Bad input to the dataset builder (missing file, malformed line, nothing usable)."""


def is_scenario_file(path: Path) -> bool:
    """Whether a file in a run folder holds scenarios, not trajectories.

    ``mads-bench simulate`` writes the scenarios it generated next to the trajectories, as
    ``scenarios.jsonl`` or ``<stem>.scenarios.jsonl``; a folder input skips them.

    Example:
        >>> is_scenario_file(Path("run/scenarios.jsonl")), is_scenario_file(Path("run/t.jsonl"))
        (True, False)
    """
    return path.name == "scenarios.jsonl" or path.name.endswith(".scenarios.jsonl")


def trajectory_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand the inputs into JSONL files (a folder gives its ``*.jsonl``, sorted).

    Args:
        paths (`Iterable[str | Path]`): files or folders (a folder gives its ``*.jsonl`` but
            the scenario files ``simulate`` writes beside them).

    Returns:
        `list[Path]`: the files, in the order given.

    Raises:
        `DatasetBuildError`: a path does not exist or a folder holds no ``*.jsonl``.
    """
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = [p for p in sorted(path.glob("*.jsonl")) if not is_scenario_file(p)]
            if not found:
                raise DatasetBuildError(f"{path}: folder holds no *.jsonl trajectory files")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise DatasetBuildError(f"{path}: no such trajectory file or folder")
    if not files:
        raise DatasetBuildError("no trajectory files given")
    return files


def read_trajectory_file(path: Path) -> list[Trajectory]:
    """Read every trajectory of one JSONL file (blank lines are skipped).

    Raises:
        `DatasetBuildError`: ``<file>:<line>: not a trajectory: ...`` for a bad line.
    """
    try:
        return list(read_trajectories(path))
    except TrajectoryFileError as err:
        raise DatasetBuildError(str(err)) from None


@dataclass
class Selection:
    """Which trajectories a build uses, with a count for every one it does not."""

    files: list[str] = field(default_factory=list)
    used: list[Trajectory] = field(default_factory=list)
    read: int = 0
    passed: int = 0
    rejected: int = 0
    unvalidated_used: int = 0
    unvalidated_skipped: int = 0
    duplicates: int = 0

    def summary(self) -> str:
        """One line of counts, e.g. for the command line and the dataset card."""
        return (
            f"{self.read} trajectories read from {len(self.files)} file(s): {len(self.used)} used "
            f"({self.passed} validator-passed, {self.unvalidated_used} unvalidated), "
            f"{self.rejected} rejected by the validator, {self.unvalidated_skipped} unvalidated "
            f"skipped, {self.duplicates} duplicate ids skipped"
        )


def select_trajectories(
    paths: Iterable[str | Path], *, include_unvalidated: bool = False
) -> Selection:
    """Read the inputs and keep validator-passed trajectories (and unvalidated ones if asked).

    Args:
        paths (`Iterable[str | Path]`): JSONL files or folders.
        include_unvalidated (`bool`): also use trajectories without a verdict.

    Returns:
        `Selection`: the used trajectories, in input order, and the counts.

    Raises:
        `DatasetBuildError`: bad input, or no trajectory could be used.

    Example:
        >>> selection = select_trajectories(["t.jsonl"], include_unvalidated=True)  # doctest: +SKIP
        >>> selection.summary()  # doctest: +SKIP
        '180 trajectories read from 1 file(s): 180 used (0 validator-passed, 180 unvalidated), ...'
    """
    files = trajectory_files(paths)
    trajectories = (t for path in files for t in read_trajectory_file(path))
    return select_loaded(trajectories, include_unvalidated=include_unvalidated, files=files)


def select_loaded(
    trajectories: Iterable[Trajectory],
    *,
    include_unvalidated: bool = False,
    files: Iterable[str | Path] = ("<in memory>",),
) -> Selection:
    """Apply the selection rule to trajectories (see :func:`select_trajectories`)."""
    selection = Selection(files=[str(f) for f in files])
    seen: set[str] = set()
    for trajectory in trajectories:
        selection.read += 1
        if trajectory.id in seen:
            selection.duplicates += 1
            continue
        seen.add(trajectory.id)
        verdict = trajectory.verdict
        if verdict is None:
            if include_unvalidated:
                selection.unvalidated_used += 1
                selection.used.append(trajectory)
            else:
                selection.unvalidated_skipped += 1
        elif verdict.get("passed") is True:
            selection.passed += 1
            selection.used.append(trajectory)
        else:
            selection.rejected += 1
    if not selection.used:
        hint = (
            " (none has a verdict: run `mads-bench validate` first, or pass --include-unvalidated)"
            if selection.unvalidated_skipped
            else ""
        )
        raise DatasetBuildError(f"no usable trajectories: {selection.summary()}{hint}")
    return selection
