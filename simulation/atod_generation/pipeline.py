"""The ATOD generation pipeline end to end (atod.md §4, SPEC §7.4 last bullet).

SGD goal sequences -> weighted co-occurrence graph -> stratified random walks -> trajectory
annotation -> dialogue planning and rendering -> per-turn status annotation -> verifier.
Each dialogue has its own random generator seeded from `(seed, index, attempt)`, so the same
seed gives byte-identical output; a dialogue the verifier rejects is regenerated (up to
`max_retries` attempts) and otherwise left out and reported.

The `backend` spec selects who writes the text: `scripted` (default, no LLM: seeded
templates) or any `simulation.backends` spec (`transformers:<model>`,
`openai:<model>@<url>`, `fake:` in tests), which rewrites goal descriptions and turns under
the value-preservation check of `annotate` / `render`. `judge` adds the LLM verifier.

Settings that cannot work fail before any dialogue is written, with a `GenerationError`
naming the setting: backend specs are resolved first; too few SGD files (the first ones of
the train split are all single-domain, so they give no goal sequence), a graph too small for
complex dialogues, or too few distinct walks for `num_dialogues` are refused.

Example:
    >>> config = GenerationConfig(sgd_dir="../shared/data/sgd/train", num_dialogues=5)
    >>> result = generate(config)  # doctest: +SKIP
    >>> len(result.records), result.statistics.nodes  # doctest: +SKIP
    (5, 52)
"""

from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulation.atod_generation.annotate import annotate_walk, describe_with_backend
from simulation.atod_generation.dialogue import plan_dialogue
from simulation.atod_generation.errors import GenerationError
from simulation.atod_generation.graph import CooccurrenceGraph, GraphStatistics
from simulation.atod_generation.labels import build_record
from simulation.atod_generation.render import realize_with_backend, render_plan
from simulation.atod_generation.sequences import SgdCorpus, load_sgd_corpus
from simulation.atod_generation.verify import verify_record
from simulation.atod_generation.walks import Stratum, Walk, allocate, sample_walks, walk_reach

GENERATOR = "mads-bench atod generate"


@dataclass
class GenerationConfig:
    """Settings of one generation run."""

    sgd_dir: Path | str
    num_dialogues: int = 100
    seed: int = 0
    backend: str = "scripted"
    judge: str | None = None
    complex_share: float = 0.35
    max_retries: int = 3
    max_files: int | None = None


@dataclass
class GenerationResult:
    """What a run produced."""

    records: list[dict[str, Any]]
    statistics: GraphStatistics
    config: GenerationConfig
    rejected: list[dict[str, Any]] = field(default_factory=list)
    retries: int = 0
    llm_rejections: int = 0
    seconds: float = 0.0
    corpus_dialogues: int = 0


def _resolve(spec: str | None, setting: str):
    if spec is None or spec == "scripted":
        return None
    from simulation.backends import get_backend

    try:
        return get_backend(spec)
    except ValueError as err:
        raise GenerationError(str(err), setting) from None


def generate_one(
    walk: Walk,
    corpus: SgdCorpus,
    index: int,
    rng: random.Random,
    *,
    backend=None,
    spec: str = "scripted",
) -> tuple[dict[str, Any], int]:
    """Annotate, plan, render and label one dialogue.

    Args:
        walk (`Walk`): The sampled goal set.
        corpus (`SgdCorpus`): Schemas and slot-value pools.
        index (`int`): The dialogue's index (`dialogue_index`).
        rng (`random.Random`): Its random generator.
        backend (`ChatBackend`, *optional*): LLM that rewrites descriptions and turns.
        spec (`str`): The backend's spec (recorded in the metadata).

    Returns:
        `tuple[dict, int]`: The ATOD record and the number of rejected LLM rewrites.
    """
    trajectory = annotate_walk(walk, corpus, rng, index)
    plan = plan_dialogue(trajectory, rng)
    rendered = render_plan(trajectory, plan, rng)
    rejected = 0
    if backend is not None:
        rejected += describe_with_backend(trajectory, backend)
        rejected += realize_with_backend(plan, rendered, backend)
    dialogue_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    record = build_record(
        trajectory,
        plan,
        rendered,
        dialogue_id,
        {"generator": GENERATOR, "backend": spec, "walk": [g.label() for g in walk.goals]},
    )
    return record, rejected


def build_graph(
    sgd_dir: Path | str, max_files: int | None = None
) -> tuple[SgdCorpus, CooccurrenceGraph]:
    """Read SGD and build the co-occurrence graph (the first two pipeline stages)."""
    corpus = load_sgd_corpus(sgd_dir, max_files=max_files)
    return corpus, CooccurrenceGraph.build(corpus.sequences)


def _more_files(config: GenerationConfig) -> str:
    return f" or read more SGD files than {config.max_files}" if config.max_files else ""


def _check_graph(
    graph: CooccurrenceGraph,
    corpus: SgdCorpus,
    config: GenerationConfig,
    strata: tuple[Stratum, ...],
) -> None:
    """Refuse, naming the setting, a graph on which the strata's walks cannot be drawn."""
    if config.max_files:
        files, more = ("max_files", config.max_files), "read more files"
    else:
        files, more = ("sgd_dir", config.sgd_dir), "use a folder with multi-domain dialogues"
    read = f"{corpus.n_dialogues} SGD dialogues in {len(corpus.files)} files of {config.sgd_dir}"
    if not corpus.sequences:
        raise GenerationError(
            f"no dialogue with two or more services among the {read}, so there is no goal "
            f"sequence to build dialogues from; {more}",
            *files,
        )
    reach = walk_reach(graph)
    counts = allocate(config.num_dialogues, strata)
    for stratum, count in zip(strata, counts, strict=True):
        if not count or reach >= stratum.min_goals:
            continue
        problem = (
            f"{stratum.name} dialogues need {stratum.min_goals} or more connected goals, but "
            f"the co-occurrence graph of the {read} connects at most {reach}"
        )
        if stratum.name == "complex":
            raise GenerationError(
                f"{problem}; set the complex share to 0{_more_files(config)}",
                "complex_share",
                config.complex_share,
            )
        raise GenerationError(f"{problem}; {more}", *files)


def generate(config: GenerationConfig, *, corpus: SgdCorpus | None = None) -> GenerationResult:
    """Run the whole pipeline.

    Args:
        config (`GenerationConfig`): Where SGD is, how many dialogues, seed and backends.
        corpus (`SgdCorpus`, *optional*): An already loaded SGD corpus (`config.sgd_dir` is
            then not read again; tests and notebooks reuse one).

    Returns:
        `GenerationResult`: Verified records, graph statistics, rejections and timing.

    Raises:
        `GenerationError`: A backend spec, the SGD files read or `num_dialogues` cannot work.
        `FileNotFoundError`: `config.sgd_dir` has no SGD files.
    """
    start = time.perf_counter()
    backend, judge = _resolve(config.backend, "backend"), _resolve(config.judge, "judge")
    if corpus is None:
        corpus, graph = build_graph(config.sgd_dir, config.max_files)
    else:
        graph = CooccurrenceGraph.build(corpus.sequences)
    share = config.complex_share
    strata = (Stratum("medium", 2, 6, 1 - share), Stratum("complex", 7, 10, share))
    _check_graph(graph, corpus, config, strata)
    try:
        walks = sample_walks(graph, config.num_dialogues, seed=config.seed, strata=strata)
    except GenerationError as err:
        raise GenerationError(
            f"{err}; ask for fewer dialogues{_more_files(config)}",
            "num_dialogues",
            config.num_dialogues,
        ) from None
    result = GenerationResult([], graph.statistics(), config, corpus_dialogues=corpus.n_dialogues)
    for index, walk in enumerate(walks):
        problems: list[str] = []
        for attempt in range(config.max_retries):
            rng = random.Random(f"atod:{config.seed}:{index}:{attempt}")
            record, llm_rejected = generate_one(
                walk, corpus, index, rng, backend=backend, spec=config.backend
            )
            result.llm_rejections += llm_rejected
            verdict = verify_record(record, judge)
            if verdict.passed:
                record["metadata"]["seed"] = f"{config.seed}:{index}:{attempt}"
                result.records.append(record)
                break
            problems = verdict.problems
            result.retries += 1
        else:
            result.rejected.append({"index": index, "problems": problems})
    result.seconds = time.perf_counter() - start
    return result
