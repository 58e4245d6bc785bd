"""ATOD dialogue generation (atod.md §4): SGD goal sequences to verified, labelled dialogues.

Stages, one module each: `sequences` (goal sequences and slot values from SGD), `graph`
(weighted co-occurrence graph, Tables 12-13), `walks` (stratified random walks), `annotate`
(slot values, dependencies, outcomes, Table 14 complexity), `dialogue` (turn plan with
interleaving, asynchronous pending goals, dependencies, proactive turns), `render`
(templates or an LLM backend), `labels` (per-turn statuses, the ATOD record), `verify`,
`pipeline` (the whole run) and `dataset` (JSON, HF dataset and card).

Example:
    >>> from simulation.atod_generation import GenerationConfig, generate  # doctest: +SKIP
    >>> config = GenerationConfig("../shared/data/sgd/train", num_dialogues=10)
    >>> result = generate(config)  # doctest: +SKIP
"""

from simulation.atod_generation.graph import CooccurrenceGraph, GraphStatistics, render_statistics
from simulation.atod_generation.pipeline import (
    GenerationConfig,
    GenerationResult,
    build_graph,
    generate,
)
from simulation.atod_generation.sequences import GoalKey, GoalSequence, load_sgd_corpus
from simulation.atod_generation.verify import Verdict, verify_record
from simulation.atod_generation.walks import DEFAULT_STRATA, Stratum, Walk, sample_walks

__all__ = [
    "DEFAULT_STRATA",
    "CooccurrenceGraph",
    "GenerationConfig",
    "GenerationResult",
    "GoalKey",
    "GoalSequence",
    "GraphStatistics",
    "Stratum",
    "Verdict",
    "Walk",
    "build_graph",
    "generate",
    "load_sgd_corpus",
    "render_statistics",
    "sample_walks",
    "verify_record",
]
