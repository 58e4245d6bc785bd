"""Append-only JSONL storage of trajectories, safe to interrupt and resume.

One :class:`~mads_bench.data_model.Trajectory` per line, written and flushed as soon as a
conversation finishes. The record key is the trajectory id
(``<scenario_id>/r<repetition>/s<seed>``, see :func:`simulation.runner.trajectory_id`).
Resuming reads the keys already present, so an interrupted run neither duplicates nor
drops conversations. A process killed mid-write leaves a torn last line (no newline, or
not valid JSON); :func:`repair_torn_tail` cuts it off before appending, so the
conversation is simply simulated again. A bad line anywhere else is an error naming the
file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from mads_bench.data_model import Trajectory
from mads_bench.errors import MadsBenchError
from mads_bench.loading import JsonlError, read_jsonl


class TrajectoryFileError(JsonlError):
    """A trajectory file is corrupt somewhere other than its last line."""


class OutputExistsError(MadsBenchError, FileExistsError):
    """An output file already holds records and was not opened to be continued."""


def repair_torn_tail(path: Path) -> int:
    """Cut an incomplete or unparsable last line off ``path``.

    Args:
        path: a JSONL file (missing files are left alone).

    Returns:
        `int`: the number of bytes removed (0 when the file was intact).
    """
    if not path.is_file():
        return 0
    data = path.read_bytes()
    if not data:
        return 0
    if data.endswith(b"\n"):
        start = data.rfind(b"\n", 0, len(data) - 1) + 1
        try:
            json.loads(data[start:])
            return 0
        except ValueError:
            keep = start
    else:
        keep = data.rfind(b"\n") + 1  # 0 when the only line is torn
    with path.open("r+b") as handle:
        handle.truncate(keep)
    return len(data) - keep


def read_trajectories(path: Path | str) -> Iterator[Trajectory]:
    """Yield the trajectories of a JSONL file in order.

    Raises:
        `TrajectoryFileError`: naming the file and 1-based line of a bad record.
    """
    for _, trajectory in read_jsonl(
        path, Trajectory, what="a trajectory", error=TrajectoryFileError
    ):
        yield trajectory


class TrajectoryWriter:
    """Append-only writer; ``resume=True`` continues a file, skipping the ids it holds.

    Args:
        path: output JSONL file (parent folders are created).
        resume: continue an existing file (repairing a torn last line) instead of refusing it.

    Example:
        >>> import tempfile
        >>> from simulation.environment import simulate
        >>> from mads_bench.catalog import load_domain
        >>> out = Path(tempfile.mkdtemp()) / "t.jsonl"
        >>> with TrajectoryWriter(out) as writer:
        ...     writer.write(simulate(load_domain("mock").scenarios[0]))
        >>> with TrajectoryWriter(out, resume=True) as writer:
        ...     "mock-cancel-normal/r0/s0" in writer
        True
    """

    def __init__(self, path: Path | str, resume: bool = False) -> None:
        self.path = Path(path)
        self.ids: set[str] = set()
        self.repaired_bytes = 0
        if self.path.is_file() and self.path.stat().st_size and not resume:
            raise OutputExistsError(f"{self.path} exists; pass resume (--resume) to continue it")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if resume:
            self.repaired_bytes = repair_torn_tail(self.path)
            if self.path.is_file():
                self.ids = {t.id for t in read_trajectories(self.path)}
        self._handle = self.path.open("a", encoding="utf-8")

    def __contains__(self, trajectory_id: object) -> bool:
        return trajectory_id in self.ids

    def write(self, trajectory: Trajectory) -> None:
        """Append one trajectory as a line and flush it; a known id is an error."""
        if trajectory.id in self.ids:
            raise ValueError(f"{self.path}: trajectory {trajectory.id!r} is already stored")
        self._handle.write(trajectory.model_dump_json() + "\n")
        self._handle.flush()
        self.ids.add(trajectory.id)

    def close(self) -> None:
        """Close the file."""
        self._handle.close()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
