"""Shared helpers of the domain-pack tests: direct tool calls, gold workflows, task templates.

A domain test file binds the call helpers to its pack, keeping its call sites short::

    call = partial(helpers.call, "banking")
    call("get_account_balance", account_id="ACC-0101")  # -> (ok, content, db)
"""

import itertools
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema

from mads_bench.catalog import domain_names, domain_of, load_domain
from mads_bench.data_model import Scenario, ToolCall, ToolResult
from mads_bench.database import Database, ToolError
from mads_bench.generator import Choices, IntRange, TaskTemplate, load_task_templates, render
from simulation.tool_backend import ToolBackend

# every shipped pack but the test-only mock (test_catalog.py pins the list)
DOMAINS = [name for name in domain_names() if name != "mock"]
REQ, STATE, POLICY, MISSING = "invalid_request", "invalid_state", "policy_violation", "not_found"
RULE_CODES = {REQ, STATE, POLICY, MISSING}

Validator = jsonschema.Draft202012Validator


@cache
def validators(domain: str) -> dict[str, tuple[Validator, Validator]]:
    """The (parameters, returns) schema validators of every tool of a pack."""
    tools = load_domain(domain).tools
    return {name: (Validator(t.parameters), Validator(t.returns)) for name, t in tools.items()}


# ----------------------------------------------------------------- tool calls


def call(
    domain: str, tool: str, db: Database | None = None, /, **arguments: Any
) -> tuple[bool, dict, Database]:
    """Run one tool of ``domain`` on ``db`` (a fresh seed state by default).

    The test arguments must themselves be schema-valid, as the tool backend demands, and a
    result must match the tool's return schema. Returns ``(ok, content, db)``.
    """
    pack = load_domain(domain)
    db = pack.database() if db is None else db
    parameters, returns = validators(domain)[tool]
    assert parameters.is_valid(arguments), (tool, arguments)
    try:
        content = pack.handlers[tool](db, **arguments)
    except ToolError as err:
        return False, err.to_content(), db
    returns.validate(content)
    return True, content, db


def ok(domain: str, tool: str, db: Database | None = None, /, **arguments: Any) -> dict:
    """The content of a call that must succeed."""
    success, content, _ = call(domain, tool, db, **arguments)
    assert success, content
    return content


def error(domain: str, tool: str, db: Database | None = None, /, **arguments: Any) -> dict:
    """The error content of a call that must be refused."""
    success, content, _ = call(domain, tool, db, **arguments)
    assert not success, content
    return content


def error_code(domain: str, tool: str, db: Database | None = None, /, **arguments: Any) -> str:
    """The error code of a call that must be refused."""
    return error(domain, tool, db, **arguments)["code"]


# ------------------------------------------------------------- gold workflows


def run_gold(scenario: Scenario) -> list[ToolResult]:
    """Execute a scenario's gold workflow on the tool backend, injected behaviors removed."""
    backend = ToolBackend(
        scenario.model_copy(update={"behaviors": []}), seed=0, domain=domain_of(scenario)
    )
    return [
        backend.execute(ToolCall(id=f"c{i}", name=step.name, arguments=step.arguments))
        for i, step in enumerate(scenario.gold_workflow)
    ]


def empty(content: dict) -> bool:
    """A successful result that found nothing."""
    return content.get("count") == 0 or content.get("slots") == []


def blocked(domain: str, result: ToolResult) -> bool:
    """An impossible task's last gold call hits a business rule, or a read finds nothing or
    finds the thing cancelled."""
    if not result.ok:
        return result.content.get("code") in RULE_CODES
    read = load_domain(domain).tools[result.name].kind == "read"
    return read and (empty(result.content) or result.content.get("status") == "cancelled")


def check_gold(scenario: Scenario) -> None:
    """Feasible: every gold call succeeds, finds something and matches its return schema.
    Impossible: so do the calls before the last one, and the last one is blocked."""
    results = run_gold(scenario)
    impossible = scenario.complexity == "impossible"
    assert scenario.impossible == impossible, scenario.id
    assert results or not impossible, scenario.id
    last = len(results) - 1
    for index, (step, result) in enumerate(zip(scenario.gold_workflow, results, strict=True)):
        where = (scenario.id, step.name, step.arguments, result.content)
        if impossible and index == last:
            assert blocked(scenario.domain, result), where
        else:
            assert result.ok and not empty(result.content), where
        if result.ok:
            validators(scenario.domain)[step.name][1].validate(result.content)


def end_code(result: ToolResult) -> str | None:
    """The error code of a refused call; None for a successful one."""
    return None if result.ok else result.content["code"]


def scenario_ends(domain: str) -> dict[str, str | None]:
    """How the gold workflow of each impossible hand-written scenario of a pack ends."""
    scenarios = load_domain(domain).scenarios
    return {s.id: end_code(run_gold(s)[-1]) for s in scenarios if s.impossible}


# ------------------------------------------------------------- task templates


def slot_values(source: Any) -> list[Any]:
    """The values a slot source is tested with: every choice; a range at its ends and middle.

    Handlers treat amounts in a range alike; the ends and the middle catch limit rules
    without multiplying thousands of identical expansions.
    """
    if isinstance(source, Choices):
        return source.choices
    if isinstance(source, IntRange):
        low, high = source.range
        return sorted({low, (low + high) // 2, high})
    return [source]


def space(domain: str, template: TaskTemplate, impossible: bool = False):
    """What a template (or its impossible variant) is expanded over: the seed records its
    query matches, and every value of each of its slots."""
    variant = template.impossible if impossible else None
    query = (variant and variant.record) or template.record
    records = load_domain(domain).database().find(query.table, **query.where) if query else [{}]
    assert records, (domain, template.id, "no seed record matches")
    sources = {**template.slots, **(variant.slots if variant else {})}
    return records, {name: slot_values(source) for name, source in sources.items()}


def expand(domain: str, template: TaskTemplate, impossible: bool = False) -> Iterator[Scenario]:
    """Every scenario a template (or its impossible variant) yields: each matching seed record
    with each combination of slot values, built as the generator builds them."""
    variant = template.impossible if impossible else None
    records, options = space(domain, template, impossible)
    for record, values in itertools.product(records, itertools.product(*options.values())):
        context: dict[str, Any] = {"record": record}
        for name, value in zip(options, values, strict=True):
            context[name] = render(value, context)
        slots = {name: context[name] for name in options}
        # the task's own objective and criteria must render too, even where a variant
        # replaces them
        render([template.objective, *template.success_criteria], context)
        criteria = (variant and variant.success_criteria) or template.success_criteria
        yield Scenario(
            id=f"{domain}-{template.id}{'-impossible' if impossible else ''}",
            domain=domain,
            objective=render((variant and variant.objective) or template.objective, context),
            persona="priya_raman",
            hard_constraints={k: v for k, v in slots.items() if k in template.hard},
            soft_preferences={k: v for k, v in slots.items() if k not in template.hard},
            success_criteria=render(criteria, context),
            complexity="impossible" if impossible else "normal",
            impossible=impossible,
            fallback_behavior=render(variant.fallback_behavior, context) if variant else None,
            gold_workflow=render(
                [c.model_dump() for c in (variant or template).gold_workflow], context
            ),
        )


def template_ends(domain: str) -> dict[str, set[str | None]]:
    """How the gold workflows of all expansions of each impossible template variant end."""
    return {
        t.id: {end_code(run_gold(s)[-1]) for s in expand(domain, t, impossible=True)}
        for t in load_task_templates(load_domain(domain))
        if t.impossible
    }
