"""Trajectories -> the ``trajectories`` / ``sft`` / ``grpo`` DatasetDicts (SPEC §4.3).

Rows, per used trajectory (see :mod:`mads_bench.datasets.inputs` for which are used):

- ``trajectories``: one row per conversation; messages keep role, content, turn and step
  index, and the tool call / tool result as JSON strings (``""`` when absent).
- ``sft``: one row per assistant step; ``prompt`` = every message before the step as
  ``{role, content}`` (the system message renders tools and the Pre-Act format; tool results
  are ``tool`` messages, which ChatML templates such as SmolLM2's render as their own turn and
  Qwen2.5's wraps in ``<tool_response>``), ``completion`` = ``[{role: "assistant", content}]``
  -- TRL's conversational prompt-completion type.
- ``grpo``: the same prompt plus gold columns from ``parse_step`` of the step (tool arguments
  as :func:`~mads_bench.pre_act.canonical_json`), and ``conversation_id`` = trajectory id.

``context="compact"`` shortens every step prompt for small models (tool signatures without
descriptions, earlier turns' steps reduced to their action; see
:mod:`simulation.agents.context`); the ``trajectories`` config always keeps the full text.

Steps whose ``parse_problems`` are not empty (or that fail the strict parser) are left out of
``sft`` and ``grpo`` and counted in ``BuildReport.excluded_steps``; inputs without a single
Pre-Act step are an error, not empty configs.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasets import Dataset, DatasetDict, Features, List, Value

from mads_bench.data_model import Trajectory
from mads_bench.datasets.inputs import (
    DatasetBuildError,
    Selection,
    select_loaded,
    select_trajectories,
)
from mads_bench.datasets.splits import (
    DEFAULT_HELD_OUT,
    DEFAULT_TEST_SIZE,
    SPLITS,
    scenario_table,
    split_scenarios,
)
from mads_bench.files import atomic_write_text
from mads_bench.pre_act import PreActParseError, canonical_json, parse_step
from simulation.agents.context import CONTEXTS, apply_context

CONFIG_NAMES = ("trajectories", "sft", "grpo")
_STR, _INT = Value("string"), Value("int64")
_CHAT = List({"role": _STR, "content": _STR})
_META = {"scenario_id": _STR, "domain": _STR, "complexity": _STR}
_STEP = {"turn_index": _INT, "step_index": _INT}
FEATURES: dict[str, Features] = {
    "sft": Features({"prompt": _CHAT, "completion": _CHAT, **_META, **_STEP}),
    "grpo": Features(
        {
            "prompt": _CHAT,
            "gold_action_type": _STR,
            "gold_tool_name": _STR,
            "gold_tool_arguments": _STR,
            "gold_say": _STR,
            **_META,
            **_STEP,
            "conversation_id": _STR,
        }
    ),
    "trajectories": Features(
        {
            "conversation_id": _STR,
            **_META,
            "persona": _STR,
            "seed": _INT,
            "backends": _STR,
            "end_reason": _STR,
            "num_turns": _INT,
            "num_assistant_steps": _INT,
            "messages": List(
                {
                    "role": _STR,
                    "content": _STR,
                    "turn_index": _INT,
                    "step_index": _INT,
                    "tool_call": _STR,
                    "tool_result": _STR,
                    "parse_problems": List(_STR),
                }
            ),
            "injections": List(
                {
                    "kind": _STR,
                    "turn_index": _INT,
                    "tool": _STR,
                    "call_index": _INT,
                    "seed": _INT,
                    "detail": _STR,
                }
            ),
            "verdict": _STR,
        }
    ),
}


@dataclass
class BuildReport:
    """What a build used, skipped and produced."""

    selection: Selection
    split_of_scenario: dict[str, str]
    test_size: float
    held_out_domains: list[str]
    seed: int
    context: str = "full"
    excluded_steps: int = 0
    seconds: float = 0.0
    rows: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass
class BuiltDataset:
    """The three configs, the build report and the dataset card text."""

    configs: dict[str, DatasetDict]
    report: BuildReport
    card: str


def trajectory_row(trajectory: Trajectory) -> dict[str, Any]:
    """The ``trajectories`` row of one conversation."""
    messages = [
        {
            "role": m.role,
            "content": m.content,
            "turn_index": m.turn_index,
            "step_index": m.step_index,
            "tool_call": m.tool_call.model_dump_json() if m.tool_call else "",
            "tool_result": m.tool_result.model_dump_json() if m.tool_result else "",
            "parse_problems": list(m.parse_problems),
        }
        for m in trajectory.messages
    ]
    return {
        "conversation_id": trajectory.id,
        "scenario_id": trajectory.scenario_id,
        "domain": trajectory.domain,
        "complexity": trajectory.complexity,
        "persona": trajectory.persona,
        "seed": trajectory.seed,
        "backends": canonical_json(trajectory.backends),
        "end_reason": trajectory.end_reason or "",
        "num_turns": len({m.turn_index for m in trajectory.messages if m.role == "user"}),
        "num_assistant_steps": sum(m.role == "assistant" for m in trajectory.messages),
        "messages": messages,
        "injections": [i.model_dump() for i in trajectory.injections],
        "verdict": canonical_json(trajectory.verdict) if trajectory.verdict is not None else "",
    }


def step_rows(trajectory: Trajectory, context: str = "full") -> tuple[list[dict], list[dict], int]:
    """The ``sft`` and ``grpo`` rows of one conversation and how many steps were excluded."""
    sft, grpo, excluded = [], [], 0
    meta = {k: getattr(trajectory, k) for k in ("scenario_id", "domain", "complexity")}
    chat: list[dict[str, str]] = []
    for message in trajectory.messages:
        if message.role == "assistant":
            step = _parse_gold(message.content) if not message.parse_problems else None
            if step is None:
                excluded += 1
            else:
                where = {"turn_index": message.turn_index, "step_index": message.step_index}
                prompt = apply_context(chat, context)
                completion = [{"role": "assistant", "content": message.content}]
                sft.append({"prompt": prompt, "completion": completion, **meta, **where})
                grpo.append(
                    {"prompt": prompt, **step, **meta, **where, "conversation_id": trajectory.id}
                )
        chat.append({"role": message.role, "content": message.content})
    return sft, grpo, excluded


def _parse_gold(content: str) -> dict[str, str] | None:
    """Gold columns of a step, or None when the strict parser rejects it."""
    try:
        action = parse_step(content).action
    except PreActParseError:
        return None
    if action.type == "tool":
        return {
            "gold_action_type": "tool",
            "gold_tool_name": action.name,
            "gold_tool_arguments": canonical_json(action.arguments),
            "gold_say": "",
        }
    return {
        "gold_action_type": "say",
        "gold_tool_name": "",
        "gold_tool_arguments": "",
        "gold_say": action.text,
    }


def _to_dataset(rows: list[dict[str, Any]], features: Features) -> Dataset:
    # Columnar construction keeps the features even for an empty split.
    return Dataset.from_dict({name: [row[name] for row in rows] for name in features}, features)


def _held_out(requested: Iterable[str] | None, present: set[str]) -> list[str]:
    if requested is None:
        return sorted(present.intersection(DEFAULT_HELD_OUT))
    held = sorted(set(requested))
    missing = [name for name in held if name not in present]
    if missing:
        raise DatasetBuildError(
            f"--held-out-domain {', '.join(missing)}: no used trajectory has this domain "
            f"(domains in the data: {', '.join(sorted(present))})"
        )
    return held


def build_dataset(
    inputs: Sequence[str | Path] | str | Path | Iterable[Trajectory],
    *,
    test_size: float = DEFAULT_TEST_SIZE,
    held_out_domains: Iterable[str] | None = None,
    seed: int = 0,
    include_unvalidated: bool = False,
    context: str = "full",
) -> BuiltDataset:
    """Build the three configs (train/test each) and the dataset card.

    Args:
        inputs: trajectory JSONL files / folders, or already loaded trajectories (these are
            selected by the same verdict rule).
        test_size (`float`): share of non-held-out scenarios in test (see `splits`).
        held_out_domains (`Iterable[str]`, *optional*): domains that are test only; each must
            occur in the data (a misspelt name would otherwise leave that domain in train
            while the card calls it held out). Default: `DEFAULT_HELD_OUT` where present.
        seed (`int`): split seed.
        include_unvalidated (`bool`): also use trajectories without a verdict.
        context (`str`): step prompts ``full`` (as simulated) or ``compact`` (for small
            models, see :mod:`simulation.agents.context`).

    Returns:
        `BuiltDataset`: ``configs[name][split]`` datasets, the report and the card.

    Raises:
        `DatasetBuildError`: bad input, no usable trajectory, an unknown held-out domain, or
            not one Pre-Act assistant step (``sft`` and ``grpo`` would be empty).

    Example:
        >>> built = build_dataset(["t.jsonl"], include_unvalidated=True)  # doctest: +SKIP
        >>> built.configs["sft"]["train"][0]["completion"][0]["role"]  # doctest: +SKIP
        'assistant'
    """
    from mads_bench.datasets.card import render_card

    if context not in CONTEXTS:
        raise DatasetBuildError(f"unknown context {context!r}; expected one of {CONTEXTS}")
    start = time.perf_counter()
    if isinstance(inputs, (str, Path)):
        inputs = [inputs]
    items = list(inputs)
    if items and all(isinstance(item, Trajectory) for item in items):
        selection = select_loaded(items, include_unvalidated=include_unvalidated)
    else:
        selection = select_trajectories(items, include_unvalidated=include_unvalidated)
    try:
        table = scenario_table((t.scenario_id, t.domain, t.complexity) for t in selection.used)
    except ValueError as err:
        raise DatasetBuildError(str(err)) from None
    held = _held_out(held_out_domains, {t.domain for t in selection.used})
    split_of = split_scenarios(table, test_size=test_size, held_out_domains=held, seed=seed)
    rows: dict[str, dict[str, list]] = {c: {s: [] for s in SPLITS} for c in CONFIG_NAMES}
    report = BuildReport(selection, split_of, test_size, held, seed, context)
    for trajectory in selection.used:
        split = split_of[trajectory.scenario_id]
        sft, grpo, excluded = step_rows(trajectory, context)
        rows["trajectories"][split].append(trajectory_row(trajectory))
        rows["sft"][split].extend(sft)
        rows["grpo"][split].extend(grpo)
        report.excluded_steps += excluded
    if not any(rows["sft"].values()):  # empty sft/grpo configs would train on nothing
        raise DatasetBuildError(
            f"{', '.join(selection.files)}: no Pre-Act assistant step in the "
            f"{len(selection.used)} used trajectories ({report.excluded_steps} step(s) with "
            "parse problems); sft and grpo would be empty"
        )
    configs = {
        name: DatasetDict({s: _to_dataset(rows[name][s], FEATURES[name]) for s in SPLITS})
        for name in CONFIG_NAMES
    }
    report.rows = {name: {s: len(configs[name][s]) for s in SPLITS} for name in CONFIG_NAMES}
    report.seconds = time.perf_counter() - start
    return BuiltDataset(configs, report, render_card(configs, report))


def save_dataset(built: BuiltDataset, out_dir: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``out_dir/<config>/`` (``DatasetDict.save_to_disk``) and ``out_dir/README.md``.

    Raises:
        `FileExistsError`: a config folder or the card exists and ``overwrite`` is False.
    """
    out = Path(out_dir)
    targets = [out / name for name in CONFIG_NAMES] + [out / "README.md"]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not overwrite:
        raise FileExistsError(f"{out}: already holds {existing}; pass overwrite (--overwrite)")
    out.mkdir(parents=True, exist_ok=True)
    for name in CONFIG_NAMES:
        # `datasets` cannot load an empty split back, so an empty split is not written.
        splits = {s: data for s, data in built.configs[name].items() if len(data)}
        DatasetDict(splits).save_to_disk(str(out / name))
    atomic_write_text(out / "README.md", built.card)
    return out
