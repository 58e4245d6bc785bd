"""The import layers of `pyproject.toml` cover every module, and hold.

`make lint` runs the contract with `lint-imports`; this test adds what the contract cannot
say: a module outside every layer would be unconstrained, so each one must be in a layer.
"""

from __future__ import annotations

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
