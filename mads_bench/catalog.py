"""The domain packs and personas shipped with MADS-Bench, loaded and cross-checked.

A domain pack is a folder ``mads_bench/domains/<name>/`` with:

- ``domain.yaml``  manifest: description, fixed ``today`` date, primary key per table;
- ``tools.yaml``   the tool specs (:class:`~mads_bench.data_model.ToolSpec`);
- ``seed.json``    realistic backend state, ``{table: [record, ...]}``;
- ``handlers.py``  one Python function per tool, ``fn(db, **arguments) -> result``;
- ``scenarios.yaml`` hand-written scenarios;
- ``tasks.yaml``   task templates for the seeded scenario generator.

A pack outside the package (one written by ``mads-bench import-tau2``, say) is registered
with :func:`register_domain_dir` (the commands' ``--domain-dir PACK``) or by listing its
folder in the ``MADS_BENCH_DOMAIN_DIRS`` environment variable (``os.pathsep``-separated;
registering sets it, so worker processes see the pack too). Its ``domain.yaml`` names the
module of its handlers (``handlers:``) when they are not a ``handlers.py`` of the package.

Personas are shared by all domains in ``mads_bench/personas.yaml``. Loading checks
the cross references (tools, personas, seed tables, handler signatures and gold
arguments against the tool schemas) and reports problems as
:class:`~mads_bench.loading.CatalogError`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from inspect import Parameter, signature
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import Field

from mads_bench.data_model import Persona, Scenario, StrictModel, ToolSpec
from mads_bench.database import Database
from mads_bench.loading import CatalogError, load_model, load_models, read_data_file

DOMAINS_DIR = Path(__file__).parent / "domains"
PERSONAS_FILE = Path(__file__).parent / "personas.yaml"


class DomainManifest(StrictModel):
    """Contents of ``domain.yaml``."""

    name: str = Field(description="Domain name; equals the folder name.")
    title: str = Field(description="Human-readable name, e.g. 'Restaurant booking'.")
    description: str = Field(description="What the assistant does in this domain.")
    today: date = Field(description="Fixed current date of the backend, for deterministic rules.")
    keys: dict[str, str] = Field(description="Primary-key field of every seed table.")
    handlers: str | None = Field(
        None,
        description="Module of the handler functions; default mads_bench.domains.<name>.handlers.",
    )
    policy: str | None = Field(
        None, description="Rules the assistant must follow, shown in its system prompt."
    )
    max_steps_per_turn: int = Field(
        8, ge=1, description="Assistant steps allowed before it must say something to the user."
    )


@dataclass(eq=False)
class Domain:
    """A loaded domain pack: one object, handed down (compared and hashed by identity)."""

    manifest: DomainManifest
    tools: dict[str, ToolSpec]
    seed: dict[str, list[dict[str, Any]]]
    handlers: dict[str, Callable[..., Any]]
    scenarios: list[Scenario]
    path: Path
    task_file: Path | None = field(default=None)

    @property
    def name(self) -> str:
        return self.manifest.name

    def database(self, patch: dict[str, list[dict[str, Any]]] | None = None) -> Database:
        """A fresh backend state: the seed, with ``patch`` records merged by primary key."""
        tables = {t: list(rows) for t, rows in self.seed.items()}
        for table, records in (patch or {}).items():
            key = self.manifest.keys[table]
            patched = {r[key]: r for r in records}
            kept = [r for r in tables[table] if r[key] not in patched]
            tables[table] = kept + list(patched.values())
        return Database(tables, self.manifest.keys, self.manifest.today)

    def tools_for(self, scenario: Scenario) -> list[ToolSpec]:
        """Tool specs available in a scenario, in the domain's order."""
        if scenario.tools == "all":
            return list(self.tools.values())
        return [self.tools[name] for name in scenario.tools]


DOMAIN_DIRS_ENV = "MADS_BENCH_DOMAIN_DIRS"


def builtin_domain_names() -> list[str]:
    """Names of the shipped domain packs (including the test-only ``mock``)."""
    return sorted(p.name for p in DOMAINS_DIR.iterdir() if (p / "domain.yaml").is_file())


def external_packs() -> dict[str, Path]:
    """Registered packs outside the package, by name (from ``MADS_BENCH_DOMAIN_DIRS``)."""
    folders = [f for f in os.environ.get(DOMAIN_DIRS_ENV, "").split(os.pathsep) if f]
    return {_pack_name(Path(folder).resolve()): Path(folder).resolve() for folder in folders}


def domain_names() -> list[str]:
    """Names of every loadable pack: the shipped ones, then the registered external ones."""
    return [*builtin_domain_names(), *sorted(external_packs())]


def default_domain_names() -> list[str]:
    """The domains a command uses when none is named: the registered external packs if any
    (``--domain-dir PACK`` means that pack), otherwise the shipped ones but ``mock``."""
    return sorted(external_packs()) or [n for n in builtin_domain_names() if n != "mock"]


def register_domain_dir(folder: Path | str) -> str:
    """Make the pack in ``folder`` loadable by name, here and in worker processes.

    Returns:
        `str`: the pack's name (``domain.yaml``'s ``name``).

    Raises:
        `CatalogError`: the folder holds no ``domain.yaml``, or its name is a shipped pack's
            or another registered folder's.
    """
    folder = Path(folder).resolve()
    name = _pack_name(folder)
    if name in builtin_domain_names():
        raise CatalogError(folder / "domain.yaml", "name", f"{name!r} is a shipped domain pack")
    known = external_packs()
    if name in known and known[name] != folder:
        raise CatalogError(
            folder / "domain.yaml", "name", f"{name!r} is already registered from {known[name]}"
        )
    if name not in known:
        listed = os.environ.get(DOMAIN_DIRS_ENV, "")
        os.environ[DOMAIN_DIRS_ENV] = os.pathsep.join(f for f in (listed, str(folder)) if f)
    return name


@cache
def _pack_name(folder: Path) -> str:
    manifest = folder / "domain.yaml"
    if not manifest.is_file():
        raise CatalogError(folder, "", "not a domain pack (no domain.yaml)")
    data = read_data_file(manifest)
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise CatalogError(manifest, "name", "missing or not a string")
    return data["name"]


def pack_path(name: str) -> Path:
    """The folder of the pack ``name``; raises `CatalogError` for an unknown name."""
    external = external_packs()
    if name in external:
        return external[name]
    path = DOMAINS_DIR / name
    if not (path / "domain.yaml").is_file():
        raise CatalogError(path, "", f"unknown domain {name!r}; known: {domain_names()}")
    return path


@cache
def load_personas(path: Path = PERSONAS_FILE) -> dict[str, Persona]:
    """All personas by id; ids must be unique."""
    personas: dict[str, Persona] = {}
    for index, persona in enumerate(load_models(path, Persona)):
        if persona.id in personas:
            raise CatalogError(path, f"[{index}].id", f"duplicate persona id {persona.id!r}")
        personas[persona.id] = persona
    return personas


def load_domain(name: str) -> Domain:
    """Load and cross-check one domain pack by name (shipped or registered); cached.

    The cache is keyed by the pack's folder and its files' modification times, so a pack
    re-imported (or registered from another folder under the same name) is loaded afresh.
    """
    path = pack_path(name)
    stamps = tuple(
        (path / f).stat().st_mtime_ns if (path / f).is_file() else 0
        for f in ("domain.yaml", "scenarios.yaml", "seed.json", "tools.yaml")
    )
    domain = _load_pack_cached(path, stamps)
    if domain.name != name:
        raise CatalogError(path / "domain.yaml", "name", f"must equal folder name {name!r}")
    return domain


def domain_of(scenario: Scenario) -> Domain:
    """The loaded pack ``scenario`` belongs to: the one place a scenario's domain name is
    resolved. Whoever starts work on a scenario calls it once and hands the pack down."""
    return load_domain(scenario.domain)


@cache
def _load_pack_cached(path: Path, stamps: tuple[int, ...]) -> Domain:
    return load_pack(path)


load_domain.cache_clear = _load_pack_cached.cache_clear  # type: ignore[attr-defined]


def load_pack(path: Path | str) -> Domain:
    """Load and cross-check the pack in folder ``path`` (not cached, not registered)."""
    path = Path(path)
    manifest = load_model(path / "domain.yaml", DomainManifest)
    tools = _load_tools(path / "tools.yaml")
    seed = _load_seed(path / "seed.json", manifest)
    module = manifest.handlers or f"mads_bench.domains.{manifest.name}.handlers"
    where = path / ("domain.yaml" if manifest.handlers else "handlers.py")
    handlers = _load_handlers(module, where, tools)
    scenarios = load_models(path / "scenarios.yaml", Scenario)
    task_file = path / "tasks.yaml"
    domain = Domain(
        manifest, tools, seed, handlers, [], path, task_file if task_file.is_file() else None
    )
    for index, scenario in enumerate(scenarios):
        check_scenario(domain, scenario, path / "scenarios.yaml", f"[{index}]")
    domain.scenarios = scenarios
    return domain


def load_all_scenarios(include_mock: bool = False) -> list[Scenario]:
    """Every hand-written scenario of every domain."""
    return [
        s
        for name in domain_names()
        if include_mock or name != "mock"
        for s in load_domain(name).scenarios
    ]


def load_scenario_file(path: Path) -> list[Scenario]:
    """Scenarios from YAML / JSON list / JSONL, each cross-checked against its domain.

    Raises:
        `CatalogError`: naming the file and the field of a malformed or duplicate scenario.
    """
    scenarios = load_models(path, Scenario)
    first_at: dict[str, int] = {}
    for index, scenario in enumerate(scenarios):
        if scenario.id in first_at:
            raise CatalogError(
                path,
                f"[{index}].id",
                f"duplicate id {scenario.id!r} (first at [{first_at[scenario.id]}])",
            )
        first_at[scenario.id] = index
        check_scenario(load_domain(scenario.domain), scenario, path, f"[{index}]")
    return scenarios


def check_scenario(domain: Domain, scenario: Scenario, path: Path, where: str = "") -> None:
    """Cross-check a scenario against its domain and the personas; raise CatalogError."""

    def fail(field_name: str, reason: str) -> None:
        raise CatalogError(path, f"{where}.{field_name}" if where else field_name, reason)

    if scenario.domain != domain.name:
        fail("domain", f"scenario is in the {domain.name!r} pack")
    if scenario.persona not in load_personas():
        fail("persona", f"unknown persona {scenario.persona!r}")
    available = set(domain.tools) if scenario.tools == "all" else set(scenario.tools)
    for i, tool in enumerate([] if scenario.tools == "all" else scenario.tools):
        if tool not in domain.tools:
            fail(f"tools[{i}]", f"unknown tool {tool!r}")
    for table, records in scenario.backend_state.items():
        if table not in domain.manifest.keys:
            fail(f"backend_state.{table}", "unknown table")
        key = domain.manifest.keys[table]
        for i, record in enumerate(records):
            if key not in record:
                fail(f"backend_state.{table}[{i}]", f"record without primary key {key!r}")
    for i, step in enumerate(scenario.gold_workflow):
        if step.name not in available:
            fail(f"gold_workflow[{i}].name", f"tool {step.name!r} is not available")
        errors = domain.tools[step.name].argument_errors(step.arguments)
        if errors:
            fail(f"gold_workflow[{i}].arguments", f"invalid for {step.name}: {errors[0]}")
    for i, behavior in enumerate(scenario.behaviors):
        tool = getattr(behavior, "tool", None)
        if tool is not None and tool not in available:
            fail(f"behaviors[{i}].tool", f"tool {tool!r} is not available")
        if behavior.kind == "empty_results" and tool and domain.tools[tool].kind != "read":
            fail(f"behaviors[{i}].tool", "empty_results applies to read tools only")


def _load_tools(path: Path) -> dict[str, ToolSpec]:
    tools: dict[str, ToolSpec] = {}
    for index, tool in enumerate(load_models(path, ToolSpec)):
        if tool.name in tools:
            raise CatalogError(path, f"[{index}].name", f"duplicate tool {tool.name!r}")
        tools[tool.name] = tool
    return tools


def _load_seed(path: Path, manifest: DomainManifest) -> dict[str, list[dict[str, Any]]]:
    seed = read_data_file(path)
    if not isinstance(seed, dict):
        raise CatalogError(path, "", "expected {table: [record, ...]}")
    for table, records in seed.items():
        if table not in manifest.keys:
            raise CatalogError(path, table, "table has no primary key in domain.yaml")
        key = manifest.keys[table]
        seen = set()
        for i, record in enumerate(records):
            if not isinstance(record, dict) or key not in record:
                raise CatalogError(path, f"{table}[{i}]", f"record without primary key {key!r}")
            if record[key] in seen:
                raise CatalogError(path, f"{table}[{i}].{key}", f"duplicate key {record[key]!r}")
            seen.add(record[key])
    missing = set(manifest.keys) - set(seed)
    if missing:
        raise CatalogError(path, "", f"tables missing from seed data: {sorted(missing)}")
    return seed


def _load_handlers(module_name: str, path: Path, tools: dict[str, ToolSpec]) -> dict[str, Callable]:
    try:
        module: ModuleType = importlib.import_module(module_name)
    except ImportError as err:
        raise CatalogError(path, "handlers", f"cannot import {module_name!r}: {err}") from None
    handlers = {}
    for tool in tools:
        fn = getattr(module, tool, None)
        if not callable(fn):
            raise CatalogError(path, tool, "no handler function for this tool")
        check_handler(path, tools[tool], fn)
        handlers[tool] = fn
    return handlers


def check_handler(path: Path, tool: ToolSpec, handler: Callable[..., Any]) -> None:
    """Check that ``handler(db, **arguments)`` accepts exactly what ``tools.yaml`` declares.

    Arguments are validated against the tool's ``parameters`` schema before the handler runs,
    so a disagreement would otherwise only show at run time, as an ``internal_error`` result.
    The rule:

    - the first parameter takes the database, positionally;
    - every schema property is a keyword parameter of the handler, or falls into its
      ``**kwargs``;
    - a required property has no default, and an optional one has a default (a call that
      leaves it out must still run);
    - the handler takes no other parameter: the model is never told of it, so no call fills it.

    Args:
        path (`Path`): the pack's ``handlers.py``, named in the error.
        tool (`ToolSpec`): the tool as ``tools.yaml`` declares it.
        handler (`Callable`): the handler function.

    Raises:
        `CatalogError`: naming the tool, both signatures and every mismatch.
    """
    params = list(signature(handler).parameters.values())
    problems = _signature_problems(params, tool)
    if problems:
        takes = ", ".join(str(p.replace(annotation=Parameter.empty)) for p in params)
        required = set(tool.required)
        declared = ", ".join(
            f"{name} ({'required' if name in required else 'optional'})"
            for name in tool.parameters.get("properties", {})
        )
        raise CatalogError(
            path,
            tool.name,
            f"handler {getattr(handler, '__name__', tool.name)} takes ({takes}) but tools.yaml "
            f"declares ({declared}): {'; '.join(problems)}",
        )


def _signature_problems(params: list[Parameter], tool: ToolSpec) -> list[str]:
    """How a handler's parameters break :func:`check_handler`'s rule; empty when they don't."""
    problems = []
    first_kinds = (
        Parameter.POSITIONAL_ONLY,
        Parameter.POSITIONAL_OR_KEYWORD,
        Parameter.VAR_POSITIONAL,
    )
    if not params or params[0].kind not in first_kinds:
        problems.append("it takes no positional database parameter first")
    rest = params[1:]
    by_keyword = {
        p.name: p
        for p in rest
        if p.kind in (Parameter.POSITIONAL_OR_KEYWORD, Parameter.KEYWORD_ONLY)
    }
    any_keyword = any(p.kind is Parameter.VAR_KEYWORD for p in rest)
    properties, required = tool.parameters.get("properties", {}), set(tool.required)
    for name in properties:
        param = by_keyword.get(name)
        if param is None:
            if not any_keyword:
                problems.append(f"it does not accept {name!r}")
        elif name in required and param.default is not Parameter.empty:
            problems.append(f"{name!r} is required but has a default")
        elif name not in required and param.default is Parameter.empty:
            problems.append(f"{name!r} is optional but has no default")
    for param in rest:
        if param.kind is Parameter.POSITIONAL_ONLY:
            problems.append(f"{param.name!r} is positional-only, so no argument can fill it")
        elif param.name in by_keyword and param.name not in properties:
            problems.append(f"it takes {param.name!r}, which tools.yaml does not declare")
    return problems
