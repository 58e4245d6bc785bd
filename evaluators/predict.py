"""Run a model over the ``grpo`` rows of a split and write step predictions for L-1 / L-2.

Each output line is one assistant step: the row's gold columns (``gold_action_type``,
``gold_tool_name``, ``gold_tool_arguments``, ``gold_say``, ids, domain, complexity, turn
and step indices), ``required_params`` of the gold tool when the domain pack knows it, and
``prediction`` (the model's raw output). The model is any backend spec of
:mod:`simulation.backends` (``transformers:<model>``, ``openai:<model>@<url>``, ...); a step
is generated the way the simulator's LLM assistant generates one
(:func:`simulation.agents.llm.generate_steps`: up to and including the first ``</action>``).

The file is append-only and resumable: a row is keyed by (conversation, turn, step), rows
already present are skipped, and a torn last line (an interrupted write) is removed first.
Its run manifest (:mod:`mads_bench.manifest`) records the model (and the fingerprint of its
weights), style, token budget and seed: continuing a file that another model or setting
wrote is refused (`ManifestMismatchError`).
Generation errors of a remote backend end the run with what was written kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from mads_bench.catalog import domain_names, load_domain
from mads_bench.manifest import check_manifest, start_output
from simulation.agents.llm import generate_steps
from simulation.agents.prompts import restyle_prompt
from simulation.backends import spec_fingerprint
from simulation.trajectory_io import repair_torn_tail

GOLD_COLUMNS = (
    "conversation_id",
    "scenario_id",
    "domain",
    "complexity",
    "turn_index",
    "step_index",
    "gold_action_type",
    "gold_tool_name",
    "gold_tool_arguments",
    "gold_say",
)


def row_key(row: dict[str, Any]) -> tuple[str, int, int]:
    """Identity of a step: (conversation, turn, step)."""
    conversation = row.get("conversation_id") or row.get("scenario_id")
    return (str(conversation), int(row["turn_index"]), int(row["step_index"]))


def _required_params(domain: str, tool: str) -> list[str] | None:
    if domain not in domain_names():
        return None
    spec = load_domain(domain).tools.get(tool)
    return None if spec is None else spec.required


def _done_keys(path: Path) -> set[tuple[str, int, int]]:
    if not path.exists():
        return set()
    repair_torn_tail(path)
    with path.open(encoding="utf-8") as handle:
        return {row_key(json.loads(line)) for line in handle if line.strip()}


def read_predictions(path: Path) -> dict[tuple[str, int, int], str]:
    """The predictions of a predictions file, by step (`row_key`)."""
    from mads_bench.loading import read_jsonl

    return {row_key(row): str(row["prediction"]) for _, row in read_jsonl(path, what="a step")}


def _prompt_chars(row: dict[str, Any]) -> int:
    return sum(len(str(message.get("content") or "")) for message in row["prompt"])


def _batches(rows: list[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def _batch_seed(seed: int, batch: list[dict[str, Any]]) -> int:
    """A sampling seed of its own for each batch (the backend seeds row `i` of a call from
    its seed and `i` alone, so one seed for every batch would repeat the draws), fixed by the
    run's seed and the batch's rows."""
    keys = "|".join(map(str, map(row_key, batch)))
    return int.from_bytes(hashlib.sha256(f"{seed}|{keys}".encode()).digest()[:7], "big")


def predict_steps(
    rows: Iterable[dict[str, Any]],
    backend: Any,
    out: Path | str,
    *,
    style: str = "pre_act",
    batch_size: int = 8,
    max_new_tokens: int = 256,
    temperature: float = 0.0,
    seed: int = 0,
    progress: bool = True,
    drafts: Path | str | None = None,
) -> dict[str, int]:
    """Generate one prediction per row and append it to ``out``.

    Args:
        rows: ``grpo`` rows (dicts with ``prompt`` and the gold columns).
        backend: a :class:`simulation.backends.ChatBackend`.
        out: predictions JSONL; existing rows are kept and skipped (resume). Rows are
            generated, and written, shortest prompt first (batches of similar lengths).
        style: ``pre_act`` or ``react`` prompting (the system message is restyled).
        batch_size: prompts per ``generate`` call.
        max_new_tokens: generation budget per step.
        temperature: 0 decodes greedily (the default); above 0 each step is one sample at
            that temperature, drawn from ``seed`` (files written with different seeds are
            independent samples of the same policy).
        seed: sampling seed passed to the backend (greedy decoding ignores it).
        progress: show a progress bar.
        drafts: predictions of the same rows by a nearby policy (the SFT adapter a GRPO run
            started from): each row's is checked in its prefill's forward pass and decoding
            starts where the model departs from it (`mads_bench.decoding.DecodeEngine`), so
            a policy that mostly agrees with it predicts in a fraction of the time. The
            predictions do not depend on it (up to floating-point differences between the
            shapes of the passes), so the manifest does not record it.

    Returns:
        ``{"written": n, "skipped": n}``.

    Raises:
        `ManifestMismatchError`: ``out`` holds rows that another model or setting wrote.
    """
    out = Path(out)
    spec = getattr(backend, "spec", None) or type(backend).__name__
    manifest = {
        "model": spec,
        "model weights": spec_fingerprint(spec) if isinstance(spec, str) else None,
        "style": style,
        "max_new_tokens": max_new_tokens,
        "seed": seed,
    }
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if temperature > 0:  # greedy files keep the manifest they always had
        manifest["temperature"] = temperature
    if getattr(backend, "constrain_tool_names", False):  # and so do unconstrained ones
        manifest["constrain_tool_names"] = True
    if getattr(backend, "dtype", "auto") not in ("auto", None):  # and bf16-where-native ones
        manifest["dtype"] = str(backend.dtype).removeprefix("torch.")
    check_manifest(out, manifest)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _done_keys(out)
    start_output(out, manifest, resume=True)
    # Batches of prompts of similar length waste less padding (prefill is most of the cost on
    # CPU); rows are written in that order, each with its key.
    todo = sorted((r for r in rows if row_key(r) not in done), key=_prompt_chars)
    guesses = read_predictions(Path(drafts)) if drafts is not None else None
    skipped = len(done)
    bar = tqdm(total=len(todo), desc="predict", unit="step", disable=not progress)
    written = 0
    with out.open("a", encoding="utf-8") as handle:
        for batch in _batches(todo, batch_size):
            prompts = [restyle_prompt(list(r["prompt"]), style) for r in batch]
            outputs = generate_steps(
                backend,
                prompts,
                max_new_tokens=max_new_tokens,
                temperature=temperature,
                seed=_batch_seed(seed, batch) if temperature > 0 else seed,
                drafts=None if guesses is None else [guesses.get(row_key(r), "") for r in batch],
            )
            for row, prediction in zip(batch, outputs, strict=True):
                record = {c: row.get(c) for c in GOLD_COLUMNS}
                record["required_params"] = _required_params(
                    str(row.get("domain")), str(row.get("gold_tool_name") or "")
                )
                record["style"] = style
                record["prediction"] = prediction
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            written += len(batch)
            bar.update(len(batch))
    bar.close()
    return {"written": written, "skipped": skipped}
