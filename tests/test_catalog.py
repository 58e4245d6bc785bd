"""The shipped domain packs load and meet the paper's scale.

Their gold workflows run in tests/domains/test_packs.py."""

import pytest

from mads_bench.catalog import domain_names, load_all_scenarios, load_domain, load_personas
from mads_bench.data_model import BEHAVIOR_KINDS

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
