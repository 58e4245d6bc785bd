"""What every domain pack must satisfy: its shape, hand-written scenarios whose gold workflows
run on the tool backend, and task templates whose every expansion yields working gold."""

import math
from collections import Counter

import pytest

from mads_bench.catalog import load_domain, load_personas
from mads_bench.data_model import BEHAVIOR_KINDS
from mads_bench.generator import load_task_templates
from tests.domains.helpers import DOMAINS, check_gold, expand, space

# The hand-written scenarios of the six packs, and the feasible ones of the test-only mock pack
# (whose impossible scenario just finds the sold-out kettle).
SCENARIOS = [s for d in DOMAINS for s in load_domain(d).scenarios] + [
    s for s in load_domain("mock").scenarios if not s.impossible
]
# Each template of each pack, and its impossible variant where it has one.
VARIANTS = [
    (domain, template, impossible)
    for domain in DOMAINS
    for template in load_task_templates(load_domain(domain))
    for impossible in ([False, True] if template.impossible else [False])
]
# How many scenarios the templates of a pack must expand to, at least.
MIN_EXPANSIONS = {
    "banking": 100,
    "online_shopping": 50,
    "calendar": 100,
    "restaurant_booking": 100,
    "travel": 50,
    "home_services": 50,
}


# ------------------------------------------------------------------ pack shape


@pytest.mark.parametrize("domain", DOMAINS)
def test_pack_shape(domain):
    pack = load_domain(domain)
    kinds = Counter(t.kind for t in pack.tools.values())
    assert len(pack.tools) == 12 and kinds == {"read": 6, "write": 6}
    # every parameter documented, no extra arguments accepted
    for tool in pack.tools.values():
        assert tool.parameters["additionalProperties"] is False, tool.name
        for name, prop in tool.parameters["properties"].items():
            assert isinstance(prop.get("description"), str), (tool.name, name)
            assert prop["description"], (tool.name, name)
            assert None not in prop.values(), (tool.name, name)  # no YAML flow-mapping accidents
    complexity = Counter(s.complexity for s in pack.scenarios)
    assert complexity == {"normal": 4, "unhappy": 8, "impossible": 3}
    used = {b.kind for s in pack.scenarios if s.complexity == "unhappy" for b in s.behaviors}
    assert used == set(BEHAVIOR_KINDS)
    personas = {s.persona for s in pack.scenarios}
    assert len(personas) >= 8
    assert all(domain in load_personas()[p].domains for p in personas)
    assert len({s.id for s in pack.scenarios}) == 15


# ------------------------------------------------------------------- scenarios


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_scenario_gold_workflow(scenario):
    check_gold(scenario)


# ------------------------------------------------------------------- templates


@pytest.mark.parametrize("domain", DOMAINS)
def test_task_templates_cover_the_pack(domain):
    templates = load_task_templates(load_domain(domain))
    assert len(templates) >= 6 and sum(t.impossible is not None for t in templates) >= 3
    # as many scenarios as expand() yields: every record with every combination of slot values
    spaces = [space(d, t, impossible) for d, t, impossible in VARIANTS if d == domain]
    expanded = sum(len(records) * math.prod(map(len, slots.values())) for records, slots in spaces)
    assert expanded > MIN_EXPANSIONS[domain]


@pytest.mark.parametrize(
    ("domain", "template", "impossible"),
    VARIANTS,
    ids=[f"{d}-{t.id}{'-impossible' if impossible else ''}" for d, t, impossible in VARIANTS],
)
def test_task_template_renders_to_working_gold(domain, template, impossible):
    # every record, choice and range value; the scenario is feasible, or blocked at its last call
    scenarios = list(expand(domain, template, impossible))
    records, slots = space(domain, template, impossible)
    assert scenarios and len(scenarios) == len(records) * math.prod(map(len, slots.values()))
    for scenario in scenarios:
        check_gold(scenario)
