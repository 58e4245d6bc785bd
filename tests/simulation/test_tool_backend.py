"""The default tool agent: validation, stateful execution, policies and adversities."""

from mads_bench.catalog import load_domain
from mads_bench.data_model import Scenario, ToolCall
from simulation.adversity import empty_result
from simulation.tool_backend import ToolBackend

MOCK = load_domain("mock")


def scenario(**update):
    base = MOCK.scenarios[0]
    return Scenario.model_validate({**base.model_dump(), **update})


def call(backend, name, **arguments):
    return backend.execute(ToolCall(id=name, name=name, arguments=arguments))


def test_reads_return_seed_records():
    backend = ToolBackend(scenario(), domain=MOCK)
    result = call(backend, "get_item", item_id="I1")
    assert result.ok and result.content == {
        "item_id": "I1",
        "name": "blue mug",
        "price": 12.5,
        "stock": 3,
    }
    assert call(backend, "search_items", query="KETTLE").content["items"][0]["item_id"] == "I2"


def test_writes_persist_and_runs_are_isolated():
    backend = ToolBackend(scenario(), domain=MOCK)
    assert call(backend, "cancel_order", order_id="O1").content["status"] == "cancelled"
    # a cancelled order stays cancelled: a second cancel is refused
    again = call(backend, "cancel_order", order_id="O1")
    assert not again.ok and again.content["code"] == "invalid_state"
    # a new backend starts from the seed again
    assert call(ToolBackend(scenario(), domain=MOCK), "cancel_order", order_id="O1").ok
    placed = call(backend, "place_order", item_id="I1", quantity=2)
    assert placed.content["order_id"] == "O2"
    assert call(backend, "get_item", item_id="I1").content["stock"] == 1


def test_policy_rule_from_backend_state():
    # an order placed 30 days before the domain's fixed today is past the 14-day window
    old = {
        "orders": [
            {
                "order_id": "O1",
                "item_id": "I1",
                "quantity": 1,
                "status": "placed",
                "placed_on": "2026-02-14",
            }
        ]
    }
    result = call(
        ToolBackend(scenario(backend_state=old), domain=MOCK),
        "cancel_order",
        order_id="O1",
    )
    assert not result.ok and result.content["code"] == "policy_violation"
    assert "30 days old" in result.content["message"]


def test_invalid_calls_get_structured_errors():
    backend = ToolBackend(scenario(), domain=MOCK)
    unknown = call(backend, "drop_tables")
    assert unknown.content["code"] == "unknown_tool" and "get_item" in unknown.content["available"]
    bad = call(backend, "place_order", item_id="I1", quantity="two")
    assert bad.content["code"] == "invalid_arguments"
    assert bad.content["errors"] == ["quantity: 'two' is not of type 'integer'"]
    missing = call(backend, "get_item")
    assert missing.content["errors"] == ["'item_id' is a required property"]
    extra = call(backend, "get_item", item_id="I1", color="red")
    assert extra.content["code"] == "invalid_arguments"
    assert call(backend, "get_item", item_id="nope").content["code"] == "not_found"
    # an unavailable tool is unknown to the scenario even if the domain has it
    limited = ToolBackend(scenario(tools=["get_item"]), domain=MOCK)
    assert call(limited, "cancel_order", order_id="O1").content["code"] == "unknown_tool"


def test_each_adversity_is_applied_and_recorded():
    cases = {
        "backend_failure": ("backend_error", False),
        "timeout": ("timeout", False),
        "policy_constraint": ("policy_violation", False),
    }
    for kind, (code, ok) in cases.items():
        extra = {"policy": "no"} if kind == "policy_constraint" else {}
        behavior = {"kind": kind, "tool": "cancel_order", "on_calls": [1], **extra}
        backend = ToolBackend(
            scenario(complexity="unhappy", behaviors=[behavior]),
            seed=5,
            domain=MOCK,
        )
        first = call(backend, "cancel_order", order_id="O1")
        assert first.ok is ok and first.content["code"] == code
        # the failed write did not happen, and the retry (call 2) goes through
        assert call(backend, "cancel_order", order_id="O1").content["status"] == "cancelled"
        [record] = backend.injections
        assert (record.kind, record.tool, record.call_index, record.seed) == (
            kind,
            "cancel_order",
            1,
            5,
        )
    empty = {"kind": "empty_results", "tool": "search_items", "on_calls": [1, 2]}
    backend = ToolBackend(
        scenario(complexity="unhappy", behaviors=[empty]),
        domain=MOCK,
    )
    assert call(backend, "search_items", query="mug").content == {"items": []}
    assert call(backend, "search_items", query="mug").content == {"items": []}
    assert len(call(backend, "search_items", query="mug").content["items"]) == 1
    assert len(backend.injections) == 2


def test_probability_triggers_are_seeded():
    behavior = {"kind": "backend_failure", "probability": 0.5}

    def pattern(seed):
        backend = ToolBackend(
            scenario(complexity="unhappy", behaviors=[behavior]),
            seed=seed,
            domain=MOCK,
        )
        return [call(backend, "get_item", item_id="I1").ok for _ in range(40)]

    assert pattern(1) == pattern(1)
    assert pattern(1) != pattern(2)
    assert 5 < pattern(1).count(False) < 35


def test_empty_result_keeps_the_shape():
    assert empty_result([{"a": 1}]) == []
    assert empty_result({"rows": [1, 2], "total": 2, "day": "x"}) == {
        "rows": [],
        "total": 0,
        "day": "x",
    }


def test_handler_bugs_become_error_results(monkeypatch):
    # an unexpected exception in a handler is reported, not raised
    backend = ToolBackend(scenario(), domain=MOCK)
    monkeypatch.setitem(backend.domain.handlers, "get_item", lambda db, item_id: 1 / 0)
    result = call(backend, "get_item", item_id="I1")
    assert not result.ok and result.content["code"] == "internal_error"
    assert "ZeroDivisionError" in result.content["message"]
