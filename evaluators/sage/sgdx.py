"""SGD-X robustness run: the same slice under paraphrased schemas (sage.md; SGD-X, Lee et al.).

SGD-X (``../shared/data/sgd/sgd_x/v1..v5/{train,dev}_schema.json``) rewrites every service,
intent and slot name and every description of the SGD schemas, keeping the order of services,
slots and intents. The name mapping is therefore positional; `build_name_map` checks that it
is consistent (same counts, service ``X`` → ``X<digit>``, required/optional/result slots,
transactional flags and categorical values equal under the mapping) and fails naming the file
and service otherwise. Verified on all five variants of dev and train.

A variant run rewrites the slice's turn records (service, intent, state keys, act slots and
the intent names in ``INFORM_INTENT``/``OFFER_INTENT`` values) to the variant's names and
evaluates them with the variant's `WorkflowSpec`; texts, values and labels stay as they are.
Verdicts are compared with v0 (the original schema) turn by turn.

Example:
    >>> names = build_name_map(ORIGINAL, VARIANT)  # doctest: +SKIP
    >>> rename_record(record, names).service  # doctest: +SKIP
    'Restaurants_21'
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.sage.records import TurnLabel, TurnRecord, Verdict

VARIANTS: tuple[str, ...] = ("v1", "v2", "v3", "v4", "v5")
INTENT_ACTS = frozenset({"INFORM_INTENT", "OFFER_INTENT"})


@dataclass(frozen=True)
class NameMap:
    """Original → variant names: services, ``(service, intent)`` and ``(service, slot)``."""

    services: dict[str, str]
    intents: dict[tuple[str, str], str]
    slots: dict[tuple[str, str], str]


def build_name_map(
    original: list[dict[str, Any]], variant: list[dict[str, Any]], source: str = "<variant>"
) -> NameMap:
    """The positional name mapping between an SGD schema and its SGD-X variant, checked.

    Args:
        original (`list[dict]`): The original ``schema.json`` (loaded).
        variant (`list[dict]`): The variant schema (loaded), same services in the same order.
        source (`str`): Name of the variant file, for errors.

    Returns:
        `NameMap`: The mapping.

    Raises:
        `ValueError`: Naming ``source`` and the service where the variant does not line up.
    """
    if len(original) != len(variant):
        raise ValueError(f"{source}: {len(variant)} services, original has {len(original)}")
    names = NameMap({}, {}, {})
    for a, b in zip(original, variant, strict=True):
        svc, new = a["service_name"], b["service_name"]
        where = f"{source}: service {new!r} (original {svc!r})"
        if not new.startswith(svc) or len(a["slots"]) != len(b["slots"]):
            raise ValueError(f"{where}: name or slot count does not line up")
        if len(a["intents"]) != len(b["intents"]):
            raise ValueError(f"{where}: intent count does not line up")
        names.services[svc] = new
        slots = {s["name"]: t["name"] for s, t in zip(a["slots"], b["slots"], strict=True)}
        for s, t in zip(a["slots"], b["slots"], strict=True):
            if s.get("possible_values", []) != t.get("possible_values", []):
                raise ValueError(f"{where}: slot {t['name']!r}: possible values differ")
        for i, j in zip(a["intents"], b["intents"], strict=True):
            same = (
                [slots[r] for r in i["required_slots"]] == j["required_slots"]
                and {slots[k]: v for k, v in i["optional_slots"].items()} == j["optional_slots"]
                and i.get("is_transactional") == j.get("is_transactional")
            )
            if not same:
                raise ValueError(f"{where}: intent {j['name']!r} does not line up")
            names.intents[(svc, i["name"])] = j["name"]
        names.slots.update({(svc, k): v for k, v in slots.items()})
    return names


def rename_record(record: TurnRecord, names: NameMap) -> TurnRecord:
    """The turn record under the variant's names (slots the schema lacks, e.g. `count`, kept).

    Raises:
        `KeyError`: When the record's service or intent is not in the mapping.
    """
    svc = record.service
    if svc not in names.services or (svc, record.intent) not in names.intents:
        raise KeyError(f"{record.dialogue_id}/{record.turn_id}: {svc}.{record.intent} unmapped")

    def slot(name: str) -> str:
        return names.slots.get((svc, name), name)

    def acts(items: list | None) -> list | None:
        if items is None:
            return None
        out = []
        for a in items:
            values = a.values
            if a.act in INTENT_ACTS:
                values = [names.intents.get((svc, v), v) for v in values]
            out.append(a.model_copy(update={"slot": slot(a.slot), "values": values}))
        return out

    return record.model_copy(
        update={
            "service": names.services[svc],
            "intent": names.intents[(svc, record.intent)],
            "state_before": {slot(k): v for k, v in record.state_before.items()},
            "state_after": {slot(k): v for k, v in record.state_after.items()},
            "user_acts": acts(record.user_acts),
            "agent_acts": acts(record.agent_acts),
        }
    )


def unchanged_share(base: Sequence[Verdict], other: Sequence[Verdict]) -> float:
    """Share of turns whose verdict (failure/acceptable/undecided) equals the base's.

    Raises:
        `ValueError`: When the two verdict sets do not cover the same turns.
    """
    by_key = {(v.dialogue_id, v.turn_id): v.verdict for v in base}
    keys = [(v.dialogue_id, v.turn_id) for v in other]
    if set(keys) != set(by_key) or len(keys) != len(by_key):
        raise ValueError("verdict sets cover different turns")
    same = sum(by_key[k] == v.verdict for k, v in zip(keys, other, strict=True))
    return same / max(1, len(keys))


def load_variant_schemas(sgdx: Path, split: str = "dev") -> dict[str, list[dict[str, Any]]]:
    """``{"v1": schema, ...}`` for the variants present under ``sgdx``.

    Raises:
        `FileNotFoundError`: When no ``vN/{split}_schema.json`` exists.
    """
    found = {}
    for v in VARIANTS:
        path = Path(sgdx) / v / f"{split}_schema.json"
        if path.exists():
            found[v] = json.loads(path.read_text())
    if not found:
        raise FileNotFoundError(f"{sgdx}: no v1..v5/{split}_schema.json")
    return found


def run_sgdx(
    records: list[TurnRecord],
    labels: list[TurnLabel],
    original: list[dict[str, Any]],
    variants: dict[str, list[dict[str, Any]]],
    text_only: bool = True,
    verifier: Any = None,
    tagger: Any = "bundled",
) -> tuple[list[dict[str, Any]], dict[str, list[Verdict]]]:
    """SAGE-Core on v0 (original) and every variant; one table row per variant.

    Args:
        records / labels: The slice (original names).
        original (`list[dict]`): The original schema; ``variants``: ``{name: schema}``.
        text_only (`bool`): Drop dialogue acts first.
        verifier: S2 verifier shared across variants (offline default when None).
        tagger: The act tagger (`ActTagger`, None for none, ``"bundled"`` for the shipped one).

    Returns:
        `tuple`: Rows ``{variant, f1, f1_ci95, precision, recall, undecided_rate, unchanged,
        seconds}`` and the verdicts per variant.
    """
    from evaluators.sage import OfflineGroundingVerifier, SageConfig, SageEvaluator, WorkflowSpec
    from evaluators.sage.tagger import ActTagger
    from evaluators.sage.verdict_scoring import report

    verifier = verifier or OfflineGroundingVerifier()
    tagger = ActTagger.load() if tagger == "bundled" else tagger
    base = [r.without_acts() for r in records] if text_only else list(records)
    runs = {"v0": (WorkflowSpec.from_sgd_schema(original), base)}
    for name, schema in variants.items():
        names = build_name_map(original, schema, name)
        runs[name] = (WorkflowSpec.from_sgd_schema(schema), [rename_record(r, names) for r in base])
    rows, verdicts = [], {}
    for name, (spec, rows_in) in runs.items():
        evaluator = SageEvaluator(spec, SageConfig(verifier=verifier, tagger=tagger))
        evaluator.warm_up()
        started = time.perf_counter()
        verdicts[name] = evaluator.evaluate(rows_in)
        seconds = time.perf_counter() - started
        rep = report(labels, verdicts[name])
        rows.append(
            {
                "variant": name,
                "f1": rep["f1"],
                "f1_ci95": rep["f1_ci95"],
                "precision": rep["precision"],
                "recall": rep["recall"],
                "undecided_rate": rep["undecided_rate"],
                "unchanged": unchanged_share(verdicts["v0"], verdicts[name]),
                "seconds": seconds,
            }
        )
    return rows, verdicts


def stable_share(verdicts: dict[str, list[Verdict]]) -> float:
    """Share of turns whose verdict is the same under every variant (v0 included)."""
    sets = list(verdicts.values())
    keys = [(v.dialogue_id, v.turn_id) for v in sets[0]]
    maps = [{(v.dialogue_id, v.turn_id): v.verdict for v in s} for s in sets]
    return sum(len({m[k] for m in maps}) == 1 for k in keys) / max(1, len(keys))


def format_table(rows: list[dict[str, Any]], stable: float, title: str) -> str:
    """A markdown table of `run_sgdx` rows plus the share stable under every schema."""
    lines = [
        f"### {title}",
        "",
        "| variant | F1 [95% CI] | P | R | undecided | unchanged vs v0 | s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lo, hi = r["f1_ci95"]
        lines.append(
            f"| {r['variant']} | {r['f1']:.3f} [{lo:.3f}, {hi:.3f}] | {r['precision']:.3f} | "
            f"{r['recall']:.3f} | {r['undecided_rate']:.1%} | {r['unchanged']:.1%} | "
            f"{r['seconds']:.1f} |"
        )
    lines += ["", f"verdict identical under all {len(rows)} schemas: {stable:.1%}"]
    return "\n".join(lines)
