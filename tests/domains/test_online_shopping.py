"""The online-shopping domain pack: tools against the seed data, rules, impossible tasks.

Scenarios, task templates and the pack's shape are checked in test_packs.py."""

from functools import partial

import pytest

from mads_bench.catalog import load_domain
from tests.domains import helpers
from tests.domains.helpers import MISSING, POLICY, REQ, STATE

DOMAIN = load_domain("online_shopping")
ok = partial(helpers.ok, "online_shopping")
error = partial(helpers.error, "online_shopping")

NEW_HOME = {
    "recipient": "Fatima Zahra Benali",
    "line1": "210 Grove St",
    "line2": "Apt 5C",
    "city": "Jersey City",
    "state": "NJ",
    "postal_code": "07302",
}


def basket(*pairs):
    return [{"product_id": p, "quantity": q} for p, q in pairs]


def order(customer, *pairs, method="standard", **extra):
    return {"customer_id": customer, "items": basket(*pairs), "shipping_method": method, **extra}


# ----------------------------------------------------------------------- reads


def test_search_products():
    found = ok("search_products", query="noise cancelling headphones", max_price=150)
    assert [p["product_id"] for p in found["products"]] == ["SKU-1001"]
    assert found["products"][0]["price"] == 129.99 and found["products"][0]["in_stock"] is True
    # sorting and rating filter
    laptops = ok("search_products", query="laptop", sort="price_asc")["products"]
    assert [p["product_id"] for p in laptops] == ["SKU-1005", "SKU-1003", "SKU-1004"]
    rated = ok("search_products", query="laptop", min_rating=4.4)["products"]
    assert [p["product_id"] for p in rated] == ["SKU-1003", "SKU-1004"]
    # sold-out items are listed unless in_stock_only; discontinued ones never
    buds = ok("search_products", query="pulsewave")["products"]
    assert [(p["product_id"], p["stock"]) for p in buds] == [("SKU-1002", 0), ("SKU-1026", 20)]
    assert ok("search_products", query="pulsewave", in_stock_only=True)["count"] == 1
    assert ok("search_products", query="ember thermostat")["count"] == 0
    assert ok("search_products", query="pulsewave", category="kitchen")["count"] == 0


def test_get_product_details():
    monitor = ok("get_product_details", product_id="SKU-1022")
    assert (monitor["price"], monitor["list_price"]) == (149.99, 179.99)
    assert monitor["return_window_days"] == 15 and monitor["in_stock"] is True
    assert ok("get_product_details", product_id="SKU-1023")["status"] == "discontinued"
    assert ok("get_product_details", product_id="SKU-1006")["purchase_limit"] == 1
    assert error("get_product_details", product_id="SKU-9999")["code"] == MISSING


def test_list_customer_orders_and_details():
    orders = ok("list_customer_orders", customer_id="CUST-1002")["orders"]
    assert [(o["order_id"], o["status"]) for o in orders] == [
        ("ORD-50002", "delivered"),
        ("ORD-50016", "cancelled"),
    ]
    assert [i["product_id"] for i in orders[0]["items"]] == ["SKU-1009", "SKU-1024"]
    only = ok("list_customer_orders", customer_id="CUST-1002", status="cancelled")["orders"]
    assert [o["order_id"] for o in only] == ["ORD-50016"]
    details = ok("get_order_details", order_id="ORD-50020")
    assert (details["subtotal"], details["discount"], details["total"]) == (166.0, 10.0, 156.0)
    assert details["promo_code"] == "WELCOME10" and details["tracking_number"] == "9400111203001"
    assert [line["line_id"] for line in details["lines"]] == ["LN-0023", "LN-0024"]
    assert ok("get_order_details", order_id="ORD-50004")["tracking_number"] is None
    assert error("get_order_details", order_id="ORD-59999")["code"] == MISSING
    assert error("list_customer_orders", customer_id="CUST-9999")["code"] == MISSING


def test_track_shipment():
    out = ok("track_shipment", order_id="ORD-50005")
    assert (out["carrier"], out["status"], out["estimated_delivery"]) == (
        "FedEx",
        "in_transit",
        "2026-03-21",
    )
    assert out["events"][-1]["description"] == "Delayed: weather at destination hub"
    # an order still being prepared has no shipment yet
    assert error("track_shipment", order_id="ORD-50004")["code"] == STATE


@pytest.mark.parametrize(
    ("code", "customer", "items", "valid", "discount", "words"),
    [
        # 15% off 126.00 of kitchen items
        ("SPRING15", "CUST-1010", [("SKU-1009", 3)], True, 18.9, None),
        # two sets are below the 100.00 minimum
        ("SPRING15", "CUST-1010", [("SKU-1009", 2)], False, 0.0, "needs 100.00"),
        # category-limited code on a basket without kitchen items
        ("SPRING15", "CUST-1010", [("SKU-1001", 1)], False, 0.0, "kitchen"),
        # expired and not yet started codes
        ("WINTER20", "CUST-1003", [("SKU-1013", 1)], False, 0.0, "expired"),
        ("HOME30", "CUST-1003", [("SKU-1011", 1)], False, 0.0, "starts on 2026-04-01"),
        # single-use code already used on this account
        ("WELCOME10", "CUST-1005", [("SKU-1011", 1)], False, 0.0, "already used"),
        # members-only code: refused to a standard member, 10% for a Plus member
        ("PLUSTECH10", "CUST-1012", [("SKU-1003", 1)], False, 0.0, "Plus members"),
        ("PLUSTECH10", "CUST-1001", [("SKU-1003", 1)], True, 89.9, None),
        # fixed amount off
        ("SAVE25", "CUST-1012", [("SKU-1003", 1)], True, 25.0, None),
    ],
)
def test_check_promo_code(code, customer, items, valid, discount, words):
    out = ok("check_promo_code", code=code, customer_id=customer, items=basket(*items))
    assert (out["valid"], out["discount"]) == (valid, discount)
    assert words is None or words in out["reason"]


def test_check_promo_code_refusals():
    # unknown code; a product listed twice
    unknown = error(
        "check_promo_code", code="NOPE123", customer_id="CUST-1010", items=basket(("SKU-1009", 1))
    )
    assert unknown["code"] == MISSING
    twice = basket(("SKU-1009", 1), ("SKU-1009", 2))
    assert (
        error("check_promo_code", code="SPRING15", customer_id="CUST-1010", items=twice)["code"]
        == REQ
    )


# ---------------------------------------------------------------------- writes


def test_create_order_and_read_back():
    db = DOMAIN.database()
    out = ok("create_order", db, **order("CUST-1001", ("SKU-1001", 1)))
    assert (out["order_id"], out["total"], out["shipping_fee"]) == ("ORD-50022", 129.99, 0.0)
    assert out["estimated_delivery"] == "2026-03-25" and out["shipping_address"]["city"] == "Austin"
    # the order is listed first, stock went down by one
    assert (
        ok("list_customer_orders", db, customer_id="CUST-1001")["orders"][0]["order_id"]
        == "ORD-50022"
    )
    assert ok("get_order_details", db, order_id="ORD-50022")["lines"][0]["line_id"] == "LN-0026"
    assert ok("get_product_details", db, product_id="SKU-1001")["stock"] == 13
    # a gift message is kept on the order
    gift = ok(
        "create_order", db, **order("CUST-1009", ("SKU-1020", 1), gift_message="Happy birthday!")
    )
    assert (
        ok("get_order_details", db, order_id=gift["order_id"])["gift_message"] == "Happy birthday!"
    )


@pytest.mark.parametrize(
    ("customer", "method", "fee", "eta"),
    [
        ("CUST-1012", "standard", 5.99, "2026-03-25"),  # below 35.00, standard member
        ("CUST-1012", "express", 14.99, "2026-03-22"),
        ("CUST-1012", "next_day", 24.99, "2026-03-21"),
        ("CUST-1001", "express", 0.0, "2026-03-22"),  # Plus: express free
        ("CUST-1001", "next_day", 9.99, "2026-03-21"),  # Plus: next day discounted
    ],
)
def test_create_order_shipping_fees(customer, method, fee, eta):
    out = ok("create_order", **order(customer, ("SKU-1024", 1), method=method))
    assert (out["shipping_fee"], out["total"], out["estimated_delivery"]) == (
        fee,
        round(18.5 + fee, 2),
        eta,
    )


def test_create_order_with_single_use_promo():
    db = DOMAIN.database()
    out = ok("create_order", db, **order("CUST-1012", ("SKU-1024", 3), promo_code="WELCOME10"))
    # 55.50 - 10.00 leaves 45.50, above the free-shipping threshold
    assert (out["subtotal"], out["discount"], out["shipping_fee"], out["total"]) == (
        55.5,
        10.0,
        0.0,
        45.5,
    )
    again = error("create_order", db, **order("CUST-1012", ("SKU-1024", 3), promo_code="WELCOME10"))
    assert again["code"] == POLICY and "already used" in again["message"]


@pytest.mark.parametrize(
    ("arguments", "code", "words"),
    [
        # sold out, more than in stock, discontinued
        (order("CUST-1003", ("SKU-1002", 1)), STATE, "only 0"),
        (order("CUST-1003", ("SKU-1008", 5)), STATE, "only 4"),
        (order("CUST-1003", ("SKU-1023", 1)), STATE, "discontinued"),
        # launch allocation: one console per customer, counting earlier orders
        (order("CUST-1015", ("SKU-1006", 1)), POLICY, "limited to 1"),
        (order("CUST-1012", ("SKU-1006", 2)), POLICY, "limited to 1"),
        # oversized freight only ships standard
        (order("CUST-1003", ("SKU-1010", 1), method="express"), POLICY, "freight"),
        # an invalid promo code refuses the whole order
        (order("CUST-1003", ("SKU-1013", 1), promo_code="WINTER20"), POLICY, "expired"),
        (order("CUST-1003", ("SKU-1013", 1), promo_code="NOPE123"), MISSING, "NOPE123"),
        # products listed twice, unknown product, unknown customer
        (order("CUST-1003", ("SKU-1013", 1), ("SKU-1013", 1)), REQ, "once"),
        (order("CUST-1003", ("SKU-9999", 1)), MISSING, "SKU-9999"),
        (order("CUST-9999", ("SKU-1013", 1)), MISSING, "CUST-9999"),
    ],
)
def test_create_order_refusals(arguments, code, words):
    refused = error("create_order", **arguments)
    assert refused["code"] == code and words in refused["message"]


def test_cancel_online_order():
    db = DOMAIN.database()
    out = ok("cancel_online_order", db, order_id="ORD-50006", reason="ordered_by_mistake")
    assert (out["refund_amount"], out["refund_method"]) == (137.5, "Visa ending 9918")
    details = ok("get_order_details", db, order_id="ORD-50006")
    assert (details["status"], details["cancel_reason"]) == ("cancelled", "ordered_by_mistake")
    # the lamp goes back into stock
    assert ok("get_product_details", db, product_id="SKU-1011")["stock"] == 10
    # already cancelled, shipped or delivered orders cannot be cancelled
    assert error("cancel_online_order", db, order_id="ORD-50006", reason="other")["code"] == STATE
    shipped = error("cancel_online_order", order_id="ORD-50010", reason="no_longer_needed")
    assert shipped["code"] == STATE and "returned once delivered" in shipped["message"]
    assert error("cancel_online_order", order_id="ORD-50003", reason="other")["code"] == STATE


def test_update_order_address():
    db = DOMAIN.database()
    out = ok("update_order_address", db, order_id="ORD-50004", address=NEW_HOME)
    assert out["shipping_address"] == NEW_HOME
    assert ok("get_order_details", db, order_id="ORD-50004")["shipping_address"] == NEW_HOME
    # journals may go to a PO box (line2 defaults to null)
    po_box = {
        "recipient": "Kenji Nakamura",
        "line1": "PO Box 4410",
        "city": "Reno",
        "state": "NV",
        "postal_code": "89507",
    }
    assert (
        ok("update_order_address", order_id="ORD-50015", address=po_box)["shipping_address"][
            "line2"
        ]
        is None
    )
    # a freight sofa may not
    sofa = error(
        "update_order_address", order_id="ORD-50004", address=NEW_HOME | {"line1": "P.O. Box 77"}
    )
    assert sofa["code"] == POLICY and "PO box" in sofa["message"]
    # shipped orders keep their address
    assert error("update_order_address", order_id="ORD-50005", address=NEW_HOME)["code"] == STATE


def ret(order_id, product_id, reason="defective", quantity=1, refund_method="original_payment"):
    return {
        "order_id": order_id,
        "product_id": product_id,
        "quantity": quantity,
        "reason": reason,
        "refund_method": refund_method,
    }


def test_start_return():
    db = DOMAIN.database()
    out = ok("start_return", db, **ret("ORD-50003", "SKU-1013", "wrong_size"))
    assert (out["return_id"], out["refund_amount"], out["dropoff_by"]) == (
        "RMA-0002",
        98.0,
        "2026-04-03",
    )
    assert ok("get_order_details", db, order_id="ORD-50003")["lines"][0]["returned_quantity"] == 1
    # nothing left to return on that line
    again = error("start_return", db, **ret("ORD-50003", "SKU-1013", "wrong_size"))
    assert again["code"] == REQ and "only 0" in again["message"]
    # the order discount is shared: 42.00 - 10.00 * 42 / 166
    assert (
        ok("start_return", **ret("ORD-50020", "SKU-1009", refund_method="store_credit"))[
            "refund_amount"
        ]
        == 39.47
    )
    # opened electronics returned as no longer needed: 15% restocking fee
    fee = ok("start_return", **ret("ORD-50007", "SKU-1022", "no_longer_needed"))
    assert (fee["restocking_fee"], fee["refund_amount"]) == (27.0, 152.99)


@pytest.mark.parametrize(
    ("arguments", "code", "words"),
    [
        # 43 days after delivery; the lamp's window is 30 days
        (ret("ORD-50009", "SKU-1011", "no_longer_needed"), POLICY, "within 30 days"),
        # electronics: 20 days after delivery, window 15 days
        (ret("ORD-50021", "SKU-1001"), POLICY, "within 15 days"),
        # final-sale items
        (ret("ORD-50012", "SKU-1012"), POLICY, "final sale"),
        (ret("ORD-50014", "SKU-1018"), POLICY, "final sale"),
        # not delivered yet
        (ret("ORD-50004", "SKU-1010"), STATE, "cancel it instead"),
        (ret("ORD-50005", "SKU-1019"), STATE, "wait for delivery"),
        # product not in the order
        (ret("ORD-50003", "SKU-1001"), MISSING, "no item SKU-1001"),
    ],
)
def test_start_return_refusals(arguments, code, words):
    refused = error("start_return", **arguments)
    assert refused["code"] == code and words in refused["message"]


def test_request_price_adjustment():
    db = DOMAIN.database()
    out = ok("request_price_adjustment", db, order_id="ORD-50007", product_id="SKU-1022")
    assert (out["adjustment_id"], out["credit_amount"], out["refund_method"]) == (
        "PA-0002",
        30.0,
        "Amex ending 3005",
    )
    assert ok("get_order_details", db, order_id="ORD-50007")["lines"][0]["price_adjusted"] is True
    # once per line
    assert (
        error("request_price_adjustment", db, order_id="ORD-50007", product_id="SKU-1022")["code"]
        == STATE
    )
    # bought at the sale price already; ordered more than 14 days ago; adjusted before
    same = error("request_price_adjustment", order_id="ORD-50013", product_id="SKU-1022")
    assert same["code"] == POLICY and "no price drop" in same["message"]
    late = error("request_price_adjustment", order_id="ORD-50021", product_id="SKU-1001")
    assert late["code"] == POLICY and "14 days" in late["message"]
    assert (
        error("request_price_adjustment", order_id="ORD-50017", product_id="SKU-1025")["code"]
        == STATE
    )
    assert (
        error("request_price_adjustment", order_id="ORD-50016", product_id="SKU-1007")["code"]
        == STATE
    )


def test_report_missing_package():
    db = DOMAIN.database()
    out = ok("report_missing_package", db, order_id="ORD-50008")
    assert (out["claim_id"], out["resolution"], out["replacement_estimated_delivery"]) == (
        "CLM-0002",
        "replacement",
        "2026-03-22",
    )
    # the replacement is taken from stock; a second claim is refused
    assert ok("get_product_details", db, product_id="SKU-1020")["stock"] == 11
    assert error("report_missing_package", db, order_id="ORD-50008")["code"] == STATE
    # out of stock: the order is refunded instead
    db = DOMAIN.database()
    db.update("products", "SKU-1026", stock=0)
    refund = ok("report_missing_package", db, order_id="ORD-50008")
    assert (refund["resolution"], refund["refund_amount"]) == ("refund", 114.98)


@pytest.mark.parametrize(
    ("order_id", "code", "words"),
    [
        ("ORD-50013", POLICY, "48 hours"),  # delivered yesterday
        ("ORD-50009", POLICY, "within 30 days"),  # delivered 43 days ago
        ("ORD-50005", STATE, "in transit"),
        ("ORD-50004", STATE, "has not shipped"),
        ("ORD-50019", STATE, "already exists"),  # claim CLM-0001
    ],
)
def test_report_missing_package_refusals(order_id, code, words):
    refused = error("report_missing_package", order_id=order_id)
    assert refused["code"] == code and words in refused["message"]


# ------------------------------------------------------------- scenarios, templates
# test_packs.py runs every gold workflow; here, the rule each impossible one ends on.

IMPOSSIBLE_ENDS = {
    "online_shopping-late-lamp-return-impossible": POLICY,
    "online_shopping-cancel-shipped-monitor-impossible": STATE,
    "online_shopping-second-console-impossible": POLICY,
}
TEMPLATE_IMPOSSIBLE_ENDS = {
    "cancel_order": STATE,
    "buy_kitchen_item": STATE,
    "change_delivery_address": STATE,
    "return_coffee_set": POLICY,
    "monitor_price_adjustment": POLICY,
}


def test_impossible_scenarios_end_on_their_rule():
    assert helpers.scenario_ends(DOMAIN.name) == IMPOSSIBLE_ENDS


def test_impossible_templates_end_on_their_rule():
    ends = {template: {code} for template, code in TEMPLATE_IMPOSSIBLE_ENDS.items()}
    assert helpers.template_ends(DOMAIN.name) == ends
