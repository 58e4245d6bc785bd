"""The shipped domain packs load and meet the paper's scale; loading refuses a handler whose
signature disagrees with its tool in tools.yaml.

Their gold workflows run in tests/domains/test_packs.py."""

import shutil

import pytest

from mads_bench import catalog
from mads_bench.catalog import (
    check_handler,
    domain_names,
    load_all_scenarios,
    load_domain,
    load_personas,
)
from mads_bench.data_model import BEHAVIOR_KINDS, ToolSpec
from mads_bench.loading import CatalogError

DOMAINS = [
    "banking",
    "online_shopping",
    "calendar",
    "restaurant_booking",
    "travel",
    "home_services",
]


def test_six_domains_and_mock():
    assert set(domain_names()) == set(DOMAINS) | {"mock"}


def test_paper_scale():
    # MADS §3.2: 72 tools, 55 personas, 87 scenarios; unhappy paths are the majority
    tools = sum(len(load_domain(d).tools) for d in DOMAINS)
    scenarios = load_all_scenarios()
    assert tools >= 72
    assert len(load_personas()) >= 55
    assert len(scenarios) >= 87
    unhappy = sum(s.complexity == "unhappy" for s in scenarios)
    impossible = sum(s.complexity == "impossible" for s in scenarios)
    assert unhappy + impossible > len(scenarios) / 2
    assert impossible >= len(DOMAINS)


def test_every_behavior_kind_in_several_domains():
    for kind in BEHAVIOR_KINDS:
        used_in = {
            d
            for d in DOMAINS
            if any(b.kind == kind for s in load_domain(d).scenarios for b in s.behaviors)
        }
        assert len(used_in) >= 3, (kind, used_in)


def test_names_are_unique():
    scenario_ids = [s.id for s in load_all_scenarios(include_mock=True)]
    assert len(scenario_ids) == len(set(scenario_ids))
    tool_names = [t for d in DOMAINS for t in load_domain(d).tools]
    assert len(tool_names) == len(set(tool_names))
    names = [p.name for p in load_personas().values()]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("domain", DOMAINS)
def test_personas_fit_their_domains(domain):
    personas = load_personas()
    for scenario in load_domain(domain).scenarios:
        assert (
            not personas[scenario.persona].domains or domain in personas[scenario.persona].domains
        )


# ------------------------------------------------------------ handler signatures


@pytest.mark.parametrize("domain", sorted(DOMAINS) + ["mock"])
def test_every_handler_takes_what_its_tool_declares(domain):
    pack = load_domain(domain)
    for name, tool in pack.tools.items():
        check_handler(pack.path / "handlers.py", tool, pack.handlers[name])


@pytest.fixture
def mock_copy(tmp_path, monkeypatch):
    """A copy of the mock pack that ``load_domain("mock")`` reads instead, uncached.

    Only the data files are the copy's: the handlers still come from the shipped module.
    """
    pack = shutil.copytree(catalog.DOMAINS_DIR / "mock", tmp_path / "mock")
    monkeypatch.setattr(catalog, "DOMAINS_DIR", tmp_path)
    load_domain.cache_clear()
    yield pack
    load_domain.cache_clear()


@pytest.mark.parametrize(
    ("edits", "problem"),
    [
        # renamed in tools.yaml only: the handler neither accepts the new name nor is told its own
        (
            [("quantity: {type", "count: {type"), ("[item_id, quantity]", "[item_id, count]")],
            "(item_id (required), count (required)): it does not accept 'count'; "
            "it takes 'quantity', which tools.yaml does not declare",
        ),
        # made optional in tools.yaml only: a call leaving it out would crash the handler
        (
            [("required: [item_id, quantity]", "required: [item_id]")],
            "(item_id (required), quantity (optional)): 'quantity' is optional but has no default",
        ),
    ],
    ids=["renamed", "made-optional"],
)
def test_a_handler_tools_yaml_disagrees_with_fails_at_load(mock_copy, edits, problem):
    tools = mock_copy / "tools.yaml"
    for old, new in edits:
        assert tools.read_text().count(old) == 1
        tools.write_text(tools.read_text().replace(old, new))
    with pytest.raises(CatalogError) as err:
        load_domain("mock")
    assert err.value.path == mock_copy / "handlers.py" and err.value.field == "place_order"
    assert err.value.reason == (
        f"handler place_order takes (db, item_id, quantity) but tools.yaml declares {problem}"
    )


# A tool with a required parameter ``a`` and an optional ``b``, and handlers for it.
TOOL = ToolSpec(
    name="tool",
    description="A tool.",
    parameters={
        "type": "object",
        "properties": {n: {"type": "string", "description": n} for n in ("a", "b")},
        "required": ["a"],
    },
    returns={},
    kind="read",
)


def _matching(db, a, b=None): ...
def _all_keywords(db, **arguments): ...
def _missing_b(db, a): ...
def _required_with_default(db, a="", b=None): ...
def _optional_without_default(db, a, b): ...
def _undeclared(db, a, b=None, c=0): ...
def _no_database(*, a, b=None): ...
def _positional_only(db, a, /, b=None): ...


MISMATCHES = [
    (_missing_b, "it does not accept 'b'"),
    (_required_with_default, "'a' is required but has a default"),
    (_optional_without_default, "'b' is optional but has no default"),
    (_undeclared, "it takes 'c', which tools.yaml does not declare"),
    (_no_database, "it takes no positional database parameter first"),
    (_positional_only, "'a' is positional-only, so no argument can fill it"),
]


@pytest.mark.parametrize("handler", [_matching, _all_keywords])
def test_check_handler_accepts_a_matching_signature(handler, tmp_path):
    check_handler(tmp_path / "handlers.py", TOOL, handler)  # no error


@pytest.mark.parametrize(
    ("handler", "problem"), MISMATCHES, ids=[handler.__name__ for handler, _ in MISMATCHES]
)
def test_check_handler_names_each_mismatch(handler, problem, tmp_path):
    with pytest.raises(CatalogError) as err:
        check_handler(tmp_path / "handlers.py", TOOL, handler)
    assert err.value.path == tmp_path / "handlers.py" and err.value.field == "tool"
    assert err.value.reason.startswith(f"handler {handler.__name__} takes (")
    assert "but tools.yaml declares (a (required), b (optional)): " in err.value.reason
    assert problem in err.value.reason
