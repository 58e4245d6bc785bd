"""The import layers of `pyproject.toml` cover every module, and hold.

`make lint` runs the contract with `lint-imports`; this test adds what the contract cannot
say: a module outside every layer would be unconstrained, so each one must be in a layer.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
(CONTRACT,) = CONFIG["contracts"]
LAYER_MODULES = [
    name.strip() for layer in CONTRACT["layers"] for name in layer.replace("|", ":").split(":")
]


def _modules() -> list[str]:
    names = []
    for top in CONFIG["root_packages"]:
        package = importlib.import_module(top)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, f"{top}.")]
    return names


def _layer_of(module: str) -> str | None:
    return next(
        (name for name in LAYER_MODULES if module == name or module.startswith(f"{name}.")), None
    )


def test_every_module_is_in_a_layer() -> None:
    modules = _modules()
    assert len(modules) > 150  # the walk found the packages
    outside = [m for m in modules if _layer_of(m) is None]
    assert outside == [], f"modules in no layer of pyproject.toml: {outside}"


def test_the_contract_holds() -> None:
    from importlinter.cli import lint_imports

    # the same check as `make lint`; returns 0 when every contract is kept
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def _trees() -> dict[str, ast.Module]:
    """Every module of the four packages, parsed, by its path relative to the root."""
    return {
        str(path.relative_to(ROOT)): ast.parse(path.read_text(), str(path))
        for top in CONFIG["root_packages"]
        for path in sorted((ROOT / top).rglob("*.py"))
    }


def _called(tree: ast.Module, name: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)
    ]


# name -> pack resolvers of the catalog, and the modules one conversation passes through below
# the environment (the validator's entries, `validate_run` and `aggregate`, resolve each
# scenario's pack once and hand it to the checks)
RESOLVERS = {"load_domain", "domain_of", "load_pack", "load_all_scenarios"}
BELOW_THE_ENVIRONMENT = ("simulation/runner.py", "simulation/tool_backend.py", "simulation/agents/")
VALIDATOR_CHECKS = "simulation/validator/"
VALIDATOR_ENTRIES = ("simulation/validator/aggregate.py", "simulation/validator/validate_run.py")
# SAGE is handed the loaded pack as well (its callers: the command line, the validator stage's
# callers, the rubric, the `sage` reward); its `evaluate` module is an entry point whose `schema`
# argument is a `mads:<domain>` the user typed, so it alone resolves one
SAGE = "evaluators/sage/"
SAGE_ENTRIES = ("evaluators/sage/sage.py",)


def test_only_the_catalog_resolves_domain_names() -> None:
    trees = _trees()
    # a scenario's (or a trajectory's) domain name is resolved by `catalog.domain_of` alone (a
    # command's `args.domain` is a name the user typed)
    by_name = [
        f"{path}:{call.lineno}"
        for path, tree in trees.items()
        if path != "mads_bench/catalog.py"
        for call in _called(tree, "load_domain")
        if call.args and isinstance(argument := call.args[0], ast.Attribute)
        and argument.attr == "domain" and getattr(argument.value, "id", None) != "args"
    ]  # fmt: skip
    assert by_name == [], f"a domain looked up by name outside the catalog: {by_name}"
    # below the environment the loaded pack is handed down: nothing asks the catalog for one
    below = [
        path
        for path in trees
        if path.startswith((*BELOW_THE_ENVIRONMENT, VALIDATOR_CHECKS, SAGE))
        and path not in (*VALIDATOR_ENTRIES, *SAGE_ENTRIES)
    ]
    assert "simulation/validator/state.py" in below and "simulation/agents/assistant.py" in below
    assert {"evaluators/sage/mads_turns.py", "evaluators/sage/workflow.py"} <= set(below)
    looked_up = [
        f"{path}:{node.lineno}"
        for path in below
        for node in ast.walk(trees[path])
        if (isinstance(node, ast.ImportFrom) and node.module == "mads_bench.catalog"
            and {a.name for a in node.names} & RESOLVERS)
        or (isinstance(node, ast.Call)  # `load_domain(...)` or `catalog.load_domain(...)`
            and RESOLVERS & {getattr(node.func, "id", None), getattr(node.func, "attr", None)})
    ]  # fmt: skip
    assert looked_up == [], f"a pack resolved below the environment: {looked_up}"


def test_the_environment_is_the_only_caller_of_the_conversation_loop() -> None:
    callers = sorted(
        path
        for folder in (*CONFIG["root_packages"], "recipes", "benchmarks", "tests")
        for file in (ROOT / folder).rglob("*.py")
        if _called(ast.parse(file.read_text()), "play_conversation")
        for path in [str(file.relative_to(ROOT))]
    )
    assert callers == ["simulation/environment.py"]
