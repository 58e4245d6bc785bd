"""Importers of external tool-use conversation datasets into Pre-Act trajectories.

Public API:

- :func:`import_apigen` -- APIGen-MT (ShareGPT-like ``conversations`` with human / gpt /
  function_call / observation turns) into trajectories JSONL, with an :class:`ImportReport`;
- :class:`ScriptedNarrator` / :class:`BackendNarrator` and :func:`make_narrator` -- who writes
  the synthesised ``<think>`` / ``<plan>`` (``scripted`` or any backend spec);
- :func:`parse_conversation`, :func:`build_trajectory` -- the per-record conversion.

``mads-bench import-apigen`` is the command line.

Example:
    >>> from simulation.importers import make_narrator
    >>> make_narrator("scripted").spec
    'scripted'
"""

from simulation.importers.apigen import (
    ImportProblem,
    build_trajectory,
    parse_conversation,
    parse_tools,
    system_prompt,
)
from simulation.importers.narration import BackendNarrator, ScriptedNarrator, narration_prompt
from simulation.importers.pipeline import ImportReport, import_apigen, make_narrator
from simulation.importers.reader import SourceRecord, read_records

__all__ = [
    "BackendNarrator",
    "ImportProblem",
    "ImportReport",
    "ScriptedNarrator",
    "SourceRecord",
    "build_trajectory",
    "import_apigen",
    "make_narrator",
    "narration_prompt",
    "parse_conversation",
    "parse_tools",
    "read_records",
    "system_prompt",
]
