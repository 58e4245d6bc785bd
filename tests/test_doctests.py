"""Every `>>>` example in the four packages runs, and passes.

A module whose docstrings hold examples is collected here; a module whose every example is
marked `+SKIP` (it needs a server, a Hub token or a trained model) must say so by that mark,
so a runner that attempted nothing cannot pass by accident.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

PACKAGES = ("mads_bench", "simulation", "rewards", "evaluators")
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules_with_examples() -> list[str]:
    names = []
    for top in PACKAGES:
        package = importlib.import_module(top)
        candidates = [top] + [m.name for m in pkgutil.walk_packages(package.__path__, f"{top}.")]
        for name in candidates:
            origin = importlib.util.find_spec(name).origin
            with open(origin, encoding="utf-8") as handle:
                if ">>>" in handle.read() and _examples(importlib.import_module(name))[0]:
                    names.append(name)
    return names


def _examples(module) -> tuple[int, int]:
    """(examples, examples marked +SKIP) in the module's docstrings."""
    tests = doctest.DocTestFinder().find(module)
    examples = [example for test in tests for example in test.examples]
    skipped = [e for e in examples if e.options.get(doctest.SKIP)]
    return len(examples), len(skipped)


MODULES = _modules_with_examples()


def test_the_collection_finds_the_documented_modules():
    # the packages document over a hundred modules with examples; a broken walk finds none
    assert len(MODULES) > 100
    assert "mads_bench.pre_act" in MODULES and "rewards.registry" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_module_examples_pass(name: str, minilm_path, tiny_lm_path) -> None:
    module = importlib.import_module(name)
    examples, skipped = _examples(module)
    result = doctest.testmod(module, optionflags=OPTIONS, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
    # every example not marked +SKIP was run
    assert result.attempted == examples - skipped
