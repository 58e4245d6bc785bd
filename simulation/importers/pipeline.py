"""The APIGen-MT import run: read files, convert in batches, narrate, write trajectories JSONL.

Records are converted in batches of ``batch_size`` conversations so that a model narrator
gets one ``complete`` call per batch. A record that cannot be converted is reported as
``<file>:<line>: <reason>`` in :class:`ImportReport` and skipped; the run never stops on bad
data. Output goes through :class:`~simulation.trajectory_io.TrajectoryWriter` (``resume``
skips ids already written), so the output is the same for the same input and narrator.

Example:
    >>> import tempfile, pathlib, json
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> record = {"conversations": [{"from": "human", "value": "Hi"},
    ...                             {"from": "gpt", "value": "Hello! How can I help?"}]}
    >>> _ = (folder / "in.json").write_text(json.dumps([record]))
    >>> import_apigen([folder / "in.json"], folder / "out.jsonl").imported
    1
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mads_bench.manifest import check_manifest, start_output
from simulation.backends import spec_fingerprint
from simulation.importers.apigen import (
    ImportProblem,
    build_trajectory,
    narration_requests,
    parse_conversation,
)
from simulation.importers.narration import ScriptedNarrator, Step
from simulation.importers.reader import SourceRecord, read_records
from simulation.trajectory_io import TrajectoryWriter


@dataclass
class ImportReport:
    """Counts of an import run and every skipped record with its location and reason."""

    read: int = 0
    imported: int = 0
    already_there: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    steps: Counter[str] = field(default_factory=Counter)
    folded_thoughts: int = 0
    narrator_fallbacks: int = 0

    def summary(self) -> str:
        """One line of counts."""
        return (
            f"{self.read} records read: {self.imported} imported, {self.already_there} already "
            f"there, {len(self.skipped)} skipped as malformed; steps: "
            f"{self.steps['tool']} tool, {self.steps['say']} say; "
            f"{self.folded_thoughts} steps kept the source's think-tool reasoning; "
            f"{self.narrator_fallbacks} narrator fallbacks"
        )


def make_narrator(spec: str = "scripted") -> Any:
    """``scripted`` or any backend spec (``transformers:...``, ``openai:...``, ``fake:``)."""
    if spec == "scripted":
        return ScriptedNarrator()
    from simulation.backends import get_backend
    from simulation.importers.narration import BackendNarrator

    return BackendNarrator(get_backend(spec))


def import_apigen(
    inputs: Iterable[Path | str],
    out: Path | str,
    *,
    narrator: Any = None,
    domain_name: str = "apigen",
    batch_size: int = 32,
    resume: bool = False,
    progress: Any = None,
) -> ImportReport:
    """Convert APIGen-MT files into a trajectories JSONL file.

    Args:
        inputs: ``.json`` (array) or ``.jsonl`` files.
        out: output trajectories JSONL.
        narrator: writes think/plan (default :class:`ScriptedNarrator`).
        domain_name: the ``domain`` of the trajectories and the prefix of their ids.
        batch_size: conversations narrated per batch.
        resume: continue an existing output, skipping ids it holds.
        progress: optional callable ``progress(n)`` called after each record.

    Returns:
        `ImportReport`: counts and skipped records.

    Raises:
        `OutputExistsError`: ``out`` exists and ``resume`` is False.
        `ManifestMismatchError`: ``resume`` on an output another narrator or domain wrote.
        `CatalogError`: an input file is missing or not UTF-8 text.
    """
    narrator = narrator or ScriptedNarrator()
    spec = str(getattr(narrator, "spec", "scripted"))
    manifest = {"narrator": spec, "narrator model": spec_fingerprint(spec), "domain": domain_name}
    if resume:
        check_manifest(out, manifest)
    report = ImportReport()
    with TrajectoryWriter(out, resume=resume) as writer:
        start_output(out, manifest, resume=resume)
        batch: list[tuple[SourceRecord, tuple]] = []
        for path in map(Path, inputs):
            for record in read_records(path):
                report.read += 1
                ids = _ids(record, domain_name)
                if ids[0] in writer:
                    report.already_there += 1
                elif record.error is not None:
                    report.skipped.append((record.location, record.error))
                else:
                    try:
                        batch.append((record, parse_conversation(record.data)))
                    except ImportProblem as err:
                        report.skipped.append((record.location, str(err)))
                if len(batch) >= batch_size:
                    _flush(batch, narrator, writer, report, domain_name)
                if progress is not None:
                    progress(1)
        _flush(batch, narrator, writer, report, domain_name)
    report.narrator_fallbacks = getattr(narrator, "fallbacks", 0)
    return report


def _ids(record: SourceRecord, domain: str) -> tuple[str, str]:
    stem = record.path.stem
    return f"{domain}/{stem}/{record.index}", f"{domain}-{stem}-{record.index:05d}"


def _flush(
    batch: list, narrator: Any, writer: TrajectoryWriter, report: ImportReport, domain: str
) -> None:
    requests = [narration_requests(events, tools) for _, (events, tools, _) in batch]
    flat = [request for group in requests for request in group]
    narrations = narrator.narrate(flat) if flat else []
    start = 0
    for (record, (events, tools, system)), group in zip(batch, requests, strict=True):
        mine, start = narrations[start : start + len(group)], start + len(group)
        trajectory_id, scenario_id = _ids(record, domain)
        try:
            trajectory = build_trajectory(
                events,
                tools,
                system,
                mine,
                trajectory_id=trajectory_id,
                scenario_id=scenario_id,
                domain=domain,
                narrator_spec=narrator.spec,
            )
        except ImportProblem as err:
            report.skipped.append((record.location, str(err)))
            continue
        writer.write(trajectory)
        report.imported += 1
        steps = [e for e in events if isinstance(e, Step)]
        report.steps.update(s.action.type for s in steps)
        report.folded_thoughts += sum(s.source_thought is not None for s in steps)
    batch.clear()
