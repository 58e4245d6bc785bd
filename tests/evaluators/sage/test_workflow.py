"""WorkflowSpec from an SGD schema and from MADS tool specs; next fields and outcome."""

from __future__ import annotations

import json

import pytest

from evaluators.sage import WorkflowSpec, mads_domain
from mads_bench.catalog import load_domain
from tests.evaluators.sage.conftest import SCHEMA


def test_sgd_schema_fields(spec):
    intent = spec.intent("Restaurants_9", "ReserveRestaurant")
    # required slots in schema order, optional from the dict keys, transactional flag kept
    assert intent.required == ("restaurant_name", "city", "time")
    assert intent.optional == ("party_size",)
    assert intent.transactional is True
    # categorical slots keep their closed value set
    assert spec.slot("Restaurants_9", "price_range").possible_values == (
        "cheap",
        "moderate",
        "pricey",
    )


def test_next_fields_and_outcome(spec):
    state = {"restaurant_name": "Sino", "time": ""}
    # unfilled (or empty) required slots, in schema order
    assert spec.next_fields("Restaurants_9", "ReserveRestaurant", state) == ["city", "time"]
    assert spec.outcome("Restaurants_9", "ReserveRestaurant", state) is False
    full = {"restaurant_name": "Sino", "city": "SF", "time": "7 pm"}
    assert spec.outcome("Restaurants_9", "ReserveRestaurant", full) is True


def test_schema_file_and_errors(tmp_path):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    # a path works like the loaded list
    assert list(WorkflowSpec.from_sgd_schema(path).services) == ["Restaurants_9"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"service_name": "X", "slots": []}]))
    # a service without intents names the file, the index and the field
    with pytest.raises(ValueError, match=r"bad.json: \[0\]: .*'intents'"):
        WorkflowSpec.from_sgd_schema(bad)
    spec = WorkflowSpec.from_sgd_schema(path)
    # unknown service / intent errors name what is missing
    with pytest.raises(KeyError, match="Hotels_1"):
        spec.service("Hotels_1")
    with pytest.raises(KeyError, match="BookTaxi"):
        spec.intent("Restaurants_9", "BookTaxi")


def test_from_mads_tool_specs():
    spec = WorkflowSpec.from_tool_specs("mock", load_domain("mock").tools.values())
    order = spec.intent("mock", "place_order")
    # a tool's required parameters are the required fields; write tools are transactional
    assert order.required == ("item_id", "quantity")
    assert order.transactional is True
    assert spec.intent("mock", "get_item").transactional is False
    # the outcome predicate holds once both arguments are known
    assert spec.outcome("mock", "place_order", {"item_id": "I1", "quantity": "2"}) is True
    assert spec.next_fields("mock", "place_order", {"item_id": "I1"}) == ["quantity"]


def test_from_source_reads_a_domain_or_a_schema_file(tmp_path):
    # a loaded domain is its tool specs, as from_tool_specs builds them
    spec = WorkflowSpec.from_source(load_domain("mock"))
    expected = WorkflowSpec.from_tool_specs("mock", load_domain("mock").tools.values())
    assert spec.source == "tools:mock" and list(spec.services) == ["mock"]
    assert spec.intent("mock", "place_order") == expected.intent("mock", "place_order")
    # anything else is the path of an SGD schema.json, given as text or as a Path
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    assert list(WorkflowSpec.from_source(str(path)).services) == ["Restaurants_9"]
    assert WorkflowSpec.from_source(path).source == str(path)
    # `mads:<domain>` is a name for the caller to resolve through the catalog: never here
    assert mads_domain("mads:mock") == "mock" and mads_domain(str(path)) is None
    with pytest.raises(ValueError, match="mads:mock: load the domain"):
        WorkflowSpec.from_source("mads:mock")
    # a missing file is an error, not an empty spec
    with pytest.raises(OSError):
        WorkflowSpec.from_source(str(tmp_path / "missing.json"))
