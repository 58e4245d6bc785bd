"""Seeded scenario generator: many valid scenarios per domain from task templates.

Each domain's ``tasks.yaml`` lists :class:`TaskTemplate` s. A template names a seed
record to build the task around (``record: {table, where}``), how to fill each slot
(from the record with ``"{record.field}"``, or ``{choices: [...]}`` / ``{range: [lo, hi]}``),
which slots are hard constraints, the success criteria and the gold workflow, and
optionally an ``impossible`` variant (another record, a fallback behaviour).

:func:`generate_scenarios` stratifies complexity by a requested mix, picks
templates, records, personas and behaviors with one seeded RNG, renders everything
and validates the result exactly like hand-written scenarios. Same seed, same
scenarios.

Placeholders: ``"{name}"`` is a slot, ``"{record.field}"`` a field of the sampled record.
A string that is a single placeholder keeps the value's type (an integer stays an
integer); placeholders inside longer text are formatted with ``str``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from mads_bench.catalog import Domain, check_scenario, load_personas
from mads_bench.data_model import (
    BEHAVIOR_KINDS,
    CONVERSATIONAL_KINDS,
    GoldToolCall,
    Scenario,
    StrictModel,
)
from mads_bench.loading import CatalogError, load_models

DEFAULT_MIX = {"normal": 0.34, "unhappy": 0.5, "impossible": 0.16}
_POLICIES = (
    "requests of this kind need a manual review by a supervisor",
    "this operation is blocked for the account while a security check is open",
    "the request exceeds what can be changed through the assistant today",
)
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)\}")


class RecordQuery(StrictModel):
    """Which seed records a task can be built around."""

    table: str = Field(description="Seed table.")
    where: dict[str, Any] = Field(default_factory=dict, description="Field equality filters.")


class Choices(StrictModel):
    choices: list[Any] = Field(min_length=1, description="Values to pick from.")


class IntRange(StrictModel):
    range: tuple[int, int] = Field(description="Inclusive integer range.")


SlotSource = str | Choices | IntRange


class TemplateCall(StrictModel):
    name: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Argument templates.")


class ImpossibleVariant(StrictModel):
    """How a task becomes impossible: usually a different record that breaks a rule."""

    record: RecordQuery | None = Field(None, description="Record replacing the task's record.")
    objective: str | None = Field(None, description="Objective override.")
    slots: dict[str, SlotSource] = Field(default_factory=dict, description="Slot overrides.")
    fallback_behavior: str = Field(description="How the assistant declines and what it offers.")
    success_criteria: list[str] | None = Field(None, description="Overrides the task's criteria.")
    gold_workflow: list[TemplateCall] = Field(description="Calls before the assistant declines.")


class TaskTemplate(StrictModel):
    """One kind of task of a domain, turned into scenarios by the generator."""

    id: str = Field(description="Template id, unique in the domain.")
    objective: str = Field(description="Objective template.")
    record: RecordQuery | None = Field(None, description="Seed record the task is built around.")
    slots: dict[str, SlotSource] = Field(default_factory=dict, description="Slot sources.")
    hard: list[str] = Field(default_factory=list, description="Slots that are hard constraints.")
    success_criteria: list[str] = Field(min_length=1, description="Criteria templates.")
    gold_workflow: list[TemplateCall] = Field(description="Gold tool calls (templates).")
    impossible: ImpossibleVariant | None = Field(None, description="Impossible variant.")


def load_task_templates(domain: Domain) -> list[TaskTemplate]:
    """The domain's task templates; an empty list if it has no ``tasks.yaml``."""
    if domain.task_file is None:
        return []
    templates = load_models(domain.task_file, TaskTemplate)
    for index, template in enumerate(templates):
        unknown = sorted(set(template.hard) - set(template.slots))
        if unknown:
            raise CatalogError(domain.task_file, f"[{index}].hard", f"unknown slots {unknown}")
    return templates


def render(value: Any, context: dict[str, Any]) -> Any:
    """Fill placeholders in strings, recursively through lists and dicts.

    Example:
        >>> render({"q": "{n} x {record.name}", "n": "{n}"}, {"n": 2, "record": {"name": "mug"}})
        {'q': '2 x mug', 'n': 2}
    """
    if isinstance(value, dict):
        return {k: render(v, context) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, context) for v in value]
    if not isinstance(value, str):
        return value
    whole = _PLACEHOLDER.fullmatch(value)
    if whole:
        return _lookup(whole.group(1), context)
    return _PLACEHOLDER.sub(lambda m: str(_lookup(m.group(1), context)), value)


def _lookup(name: str, context: dict[str, Any]) -> Any:
    head, _, field = name.partition(".")
    if head not in context:
        raise KeyError(f"unknown placeholder {{{name}}}")
    value = context[head]
    if field:
        if not isinstance(value, dict) or field not in value:
            raise KeyError(f"unknown placeholder {{{name}}}")
        value = value[field]
    return value


def generate_scenarios(
    domain: Domain,
    n: int,
    seed: int = 0,
    mix: dict[str, float] | None = None,
) -> list[Scenario]:
    """Generate ``n`` valid scenarios for ``domain`` with complexity stratified by ``mix``.

    Args:
        domain: a loaded domain pack with a ``tasks.yaml``.
        n: number of scenarios.
        seed: RNG seed; the same seed gives the same scenarios.
        mix: share per complexity (``normal``/``unhappy``/``impossible``), normalised.

    Returns:
        Scenarios that pass the same checks as the hand-written ones.
    """
    rng = random.Random(f"{domain.name}:{seed}")
    return _generate(domain, _stratify(n, mix or DEFAULT_MIX, rng), rng, seed)


def generate_for_domains(
    domains: Sequence[Domain],
    n: int,
    seed: int = 0,
    mix: dict[str, float] | None = None,
) -> list[Scenario]:
    """Generate ``n`` scenarios spread over ``domains``, complexity stratified over all of them.

    Each domain gets ``n // len(domains)`` scenarios, the first ``n % len(domains)`` one more.
    The mix is applied to the whole run, not domain by domain: six scenarios over six domains
    still include an impossible one at the default mix.

    Args:
        domains: loaded domain packs with a ``tasks.yaml``.
        n: number of scenarios in all.
        seed: RNG seed; the same seed gives the same scenarios.
        mix: share per complexity, normalised.

    Returns:
        The scenarios, domain by domain in the order given.

    Example:
        >>> from mads_bench.catalog import load_domain
        >>> run = generate_for_domains([load_domain("mock")], 4, seed=0)
        >>> sorted({s.complexity for s in run})
        ['impossible', 'normal', 'unhappy']
    """
    if not domains:
        raise ValueError("generate_for_domains needs at least one domain")
    order = _stratify(n, mix or DEFAULT_MIX, random.Random(f"run:{seed}"))
    share, extra = divmod(n, len(domains))
    scenarios, start = [], 0
    for position, domain in enumerate(domains):
        size = share + (position < extra)
        rng = random.Random(f"{domain.name}:{seed}")
        scenarios += _generate(domain, order[start : start + size], rng, seed)
        start += size
    return scenarios


def _generate(
    domain: Domain, complexities: list[str], rng: random.Random, seed: int
) -> list[Scenario]:
    templates = load_task_templates(domain)
    if not templates:
        raise ValueError(f"domain {domain.name!r} has no task templates (tasks.yaml)")
    personas = _personas_for(domain.name)
    if "impossible" in complexities and not any(t.impossible for t in templates):
        raise ValueError(f"domain {domain.name!r} has no template with an impossible variant")
    scenarios = []
    for index, complexity in enumerate(complexities):
        pool = [t for t in templates if complexity != "impossible" or t.impossible]
        template = rng.choice(pool)
        scenario = _instantiate(domain, template, complexity, rng, personas, seed, index)
        check_scenario(domain, scenario, domain.task_file, f"template {template.id}")
        scenarios.append(scenario)
    return scenarios


def _stratify(n: int, mix: dict[str, float], rng: random.Random) -> list[str]:
    unknown = set(mix) - set(DEFAULT_MIX)
    if unknown or not mix or any(v < 0 for v in mix.values()) or sum(mix.values()) <= 0:
        raise ValueError(f"mix must give non-negative shares of {sorted(DEFAULT_MIX)}: {mix}")
    total = sum(mix.values())
    exact = {k: n * v / total for k, v in mix.items()}
    counts = {k: int(v) for k, v in exact.items()}
    # Largest remainder, so the counts add up to n and follow the mix as closely as possible.
    for k in sorted(exact, key=lambda k: exact[k] - counts[k], reverse=True)[
        : n - sum(counts.values())
    ]:
        counts[k] += 1
    order = [k for k in DEFAULT_MIX for _ in range(counts.get(k, 0))]
    rng.shuffle(order)
    return order


def _personas_for(domain: str) -> list[str]:
    personas = load_personas()
    fitting = [p.id for p in personas.values() if not p.domains or domain in p.domains]
    return sorted(fitting or personas)


def _instantiate(
    domain: Domain,
    template: TaskTemplate,
    complexity: str,
    rng: random.Random,
    personas: list[str],
    seed: int,
    index: int,
) -> Scenario:
    variant = template.impossible if complexity == "impossible" else None
    query = (variant.record if variant and variant.record else None) or template.record
    record = _sample_record(domain, query, rng, template.id) if query else {}
    sources = {**template.slots, **(variant.slots if variant else {})}
    context: dict[str, Any] = {"record": record}
    for name, source in sources.items():
        context[name] = _draw(source, context, rng)
    slots = {name: context[name] for name in sources}
    behaviors = _behaviors(domain, template, sources, slots, rng) if complexity == "unhappy" else []
    # A goal revision changes slot values; the gold workflow follows the revised goal.
    final = dict(context)
    for behavior in behaviors:
        final.update(behavior.get("revised_slots", {}))
    calls = variant.gold_workflow if variant else template.gold_workflow
    criteria = (variant.success_criteria if variant else None) or template.success_criteria
    objective = (variant.objective if variant else None) or template.objective
    hard = {k: v for k, v in slots.items() if k in template.hard}
    return Scenario.model_validate(
        {
            "id": f"{domain.name}-gen{seed}-{index:04d}-{template.id}",
            "domain": domain.name,
            "objective": render(objective, context),
            "persona": rng.choice(personas),
            "hard_constraints": hard,
            "soft_preferences": {k: v for k, v in slots.items() if k not in hard},
            "success_criteria": render(criteria, final),
            "behaviors": behaviors,
            "complexity": complexity,
            "impossible": variant is not None,
            "fallback_behavior": render(variant.fallback_behavior, context) if variant else None,
            "gold_workflow": [
                GoldToolCall(name=c.name, arguments=render(c.arguments, final)).model_dump()
                for c in calls
            ],
        }
    )


def _sample_record(
    domain: Domain, query: RecordQuery, rng: random.Random, template: str
) -> dict[str, Any]:
    matches = domain.database().find(query.table, **query.where)
    if not matches:
        raise CatalogError(
            domain.task_file, f"template {template}.record", "no seed record matches"
        )
    return rng.choice(matches)


def _draw(source: SlotSource, context: dict[str, Any], rng: random.Random) -> Any:
    if isinstance(source, Choices):
        return rng.choice(source.choices)
    if isinstance(source, IntRange):
        low, high = source.range
        return rng.randint(low, high)
    return render(source, context)


def _alternative(source: SlotSource, current: Any, rng: random.Random) -> Any:
    """Another value the user could switch to, or None when the slot is fixed."""
    if isinstance(source, Choices):
        others = [c for c in source.choices if c != current]
    elif isinstance(source, IntRange):
        others = [v for v in range(source.range[0], source.range[1] + 1) if v != current]
    else:
        return None
    return rng.choice(others) if others else None


def _behaviors(
    domain: Domain,
    template: TaskTemplate,
    sources: dict[str, SlotSource],
    slots: dict[str, Any],
    rng: random.Random,
) -> list[dict[str, Any]]:
    """One or two behaviors: usually a conversational one plus an execution one."""
    calls = [c.name for c in template.gold_workflow]
    reads = [c for c in calls if domain.tools[c].kind == "read"]
    options = list(BEHAVIOR_KINDS)
    if not calls:
        options = list(CONVERSATIONAL_KINDS)
    elif not reads:
        options.remove("empty_results")
    revisable = {k: _alternative(sources[k], v, rng) for k, v in slots.items()}
    revisable = {k: v for k, v in revisable.items() if v is not None}
    if not revisable:
        options.remove("goal_revision")
    if not slots:
        options = [
            k
            for k in options
            if k not in ("partial_information", "incremental_constraint_revelation")
        ]
    conversational = [k for k in options if k in CONVERSATIONAL_KINDS]
    execution = [k for k in options if k not in CONVERSATIONAL_KINDS]
    kinds = [rng.choice(options)]
    if rng.random() < 0.5:
        other = execution if kinds[0] in CONVERSATIONAL_KINDS else conversational
        kinds.append(rng.choice(other))
    return [_behavior(kind, calls, reads, slots, revisable, rng) for kind in kinds]


def _behavior(
    kind: str,
    calls: list[str],
    reads: list[str],
    slots: dict[str, Any],
    revisable: dict[str, Any],
    rng: random.Random,
) -> dict[str, Any]:
    names = sorted(slots)
    if kind == "partial_information":
        return {"kind": kind, "withheld": rng.sample(names, k=max(1, len(names) // 2))}
    if kind == "incremental_constraint_revelation":
        return {"kind": kind, "reveal_order": rng.sample(names, k=len(names))}
    if kind == "goal_revision":
        slot = rng.choice(sorted(revisable))
        return {
            "kind": kind,
            "after_user_turn": rng.randint(1, 2),
            "revised_slots": {slot: revisable[slot]},
        }
    if kind == "adversarial_tone":
        return {"kind": kind, "intensity": rng.choice(["mild", "moderate", "severe"])}
    # Only read tools can come back empty; the catalog check enforces it.
    tool = rng.choice(reads if kind == "empty_results" else calls)
    behavior: dict[str, Any] = {"kind": kind, "tool": tool, "on_calls": [1]}
    if kind == "policy_constraint":
        behavior["policy"] = rng.choice(_POLICIES)
    return behavior
