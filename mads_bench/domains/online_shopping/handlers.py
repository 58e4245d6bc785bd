"""Handlers of the online-shopping domain: one function per tool in tools.yaml.

Business rules live here, counted from ``db.today``: stock and per-customer purchase
limits, promo-code validity, shipping fees and oversized-freight restrictions, cancelling
and re-addressing only before shipment, per-product return windows and final-sale items,
a 14-day price-adjustment window, and missing-package claims 2-30 days after delivery.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from mads_bench.database import Database, InvalidRequest, InvalidState, NotFound, PolicyViolation
from mads_bench.domains._shared import days_since, pick

SHIPPING_FEES = {"standard": 5.99, "express": 14.99, "next_day": 24.99}
PLUS_SHIPPING_FEES = {"standard": 0.0, "express": 0.0, "next_day": 9.99}
FREE_STANDARD_FROM = 35.0
DELIVERY_DAYS = {"standard": 5, "express": 2, "next_day": 1}
RESTOCKING_FEE_RATE = 0.15
DROPOFF_DAYS = 14
PRICE_ADJUSTMENT_DAYS = 14
CLAIM_WAIT_DAYS = 2
CLAIM_WINDOW_DAYS = 30
PO_BOX = re.compile(r"\bp\.?\s*o\.?\s*box\b", re.IGNORECASE)
ADDRESS_FIELDS = ("recipient", "line1", "line2", "city", "state", "postal_code")
SORT_KEYS = {
    "price_asc": lambda p: p["price"],
    "price_desc": lambda p: -p["price"],
    "rating": lambda p: -p["rating"],
}


def _lines(db: Database, order_id: str) -> list[dict[str, Any]]:
    return sorted(db.find("order_lines", order_id=order_id), key=lambda line: line["line_id"])


def _line(db: Database, order_id: str, product_id: str) -> dict[str, Any]:
    for line in _lines(db, order_id):
        if line["product_id"] == product_id:
            return line
    raise NotFound(f"order {order_id} has no item {product_id}")


def _basket(db: Database, items: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    ids = [item["product_id"] for item in items]
    if len(set(ids)) != len(ids):
        raise InvalidRequest("list each product once and set its quantity instead")
    return [(db.get("products", item["product_id"]), item["quantity"]) for item in items]


def _promo(
    db: Database, promo: dict[str, Any], customer: dict[str, Any], basket: list[tuple[dict, int]]
) -> tuple[str | None, float, float]:
    """(reason the code does not apply or None, eligible subtotal, discount)."""
    eligible = round(
        sum(p["price"] * q for p, q in basket if promo["category"] in (None, p["category"])), 2
    )
    today = db.today.isoformat()
    if today < promo["starts_on"]:
        return f"code {promo['code']} starts on {promo['starts_on']}", eligible, 0.0
    if today > promo["expires_on"]:
        return f"code {promo['code']} expired on {promo['expires_on']}", eligible, 0.0
    if promo["members_only"] and customer["membership"] != "plus":
        return f"code {promo['code']} is for Plus members only", eligible, 0.0
    if promo["single_use"] and customer["customer_id"] in promo["used_by"]:
        return f"code {promo['code']} was already used on this account", eligible, 0.0
    if eligible == 0:
        return f"code {promo['code']} only applies to {promo['category']} items", eligible, 0.0
    if eligible < promo["min_subtotal"]:
        need = f"{promo['min_subtotal']:.2f} of eligible items"
        return f"code {promo['code']} needs {need}; the basket has {eligible:.2f}", eligible, 0.0
    if promo["kind"] == "percent":
        return None, eligible, round(eligible * promo["value"] / 100, 2)
    return None, eligible, float(min(promo["value"], eligible))


# ----------------------------------------------------------------------------- reads


def search_products(
    db: Database,
    query: str,
    category: str | None = None,
    max_price: float | None = None,
    min_rating: float | None = None,
    in_stock_only: bool = False,
    sort: str = "relevance",
    limit: int = 10,
) -> dict[str, Any]:
    words = query.casefold().replace("-", " ").split()
    keys = ("product_id", "name", "brand", "category", "price", "rating", "review_count")
    hits = [
        {**pick(p, *keys), "in_stock": p["stock"] > 0, "stock": p["stock"]}
        for p in db.find("products", status="active", category=category)
        if all(
            w in f"{p['name']} {p['brand']} {p['category']}".casefold().replace("-", " ")
            for w in words
        )
        if max_price is None or p["price"] <= max_price
        if min_rating is None or p["rating"] >= min_rating
        if not (in_stock_only and p["stock"] == 0)
    ]
    if sort in SORT_KEYS:
        hits.sort(key=SORT_KEYS[sort])
    return {"query": query, "count": len(hits[:limit]), "products": hits[:limit]}


def get_product_details(db: Database, product_id: str) -> dict[str, Any]:
    product = db.get("products", product_id)
    return {**product, "in_stock": product["stock"] > 0}


def list_customer_orders(db: Database, customer_id: str, status: str | None = None) -> dict:
    db.get("customers", customer_id)
    orders = sorted(
        db.find("orders", customer_id=customer_id, status=status),
        key=lambda o: (o["placed_on"], o["order_id"]),
        reverse=True,
    )
    summaries = [
        {
            **pick(o, "order_id", "status", "placed_on", "delivered_on", "total"),
            "items": [
                pick(line, "product_id", "product_name", "quantity")
                for line in _lines(db, o["order_id"])
            ],
        }
        for o in orders
    ]
    return {"customer_id": customer_id, "orders": summaries}


def get_order_details(db: Database, order_id: str) -> dict[str, Any]:
    order = db.get("orders", order_id)
    shipments = db.find("shipments", order_id=order_id)
    keys = ("line_id", "product_id", "product_name", "quantity", "unit_price")
    lines = [
        pick(line, *keys, "returned_quantity", "price_adjusted") for line in _lines(db, order_id)
    ]
    tracking = shipments[0]["tracking_number"] if shipments else None
    return {**order, "tracking_number": tracking, "lines": lines}


def track_shipment(db: Database, order_id: str) -> dict[str, Any]:
    order = db.get("orders", order_id)
    shipments = db.find("shipments", order_id=order_id)
    if not shipments:
        raise InvalidState(f"order {order_id} is {order['status']} and has not shipped")
    return {"order_id": order_id, **{k: v for k, v in shipments[0].items() if k != "order_id"}}


def check_promo_code(
    db: Database, code: str, customer_id: str, items: list[dict[str, Any]]
) -> dict[str, Any]:
    promo = db.get("promo_codes", code)
    customer = db.get("customers", customer_id)
    basket = _basket(db, items)
    reason, eligible, discount = _promo(db, promo, customer, basket)
    return {
        "code": code,
        "valid": reason is None,
        "reason": reason,
        "subtotal": round(sum(p["price"] * q for p, q in basket), 2),
        "eligible_subtotal": eligible,
        "discount": discount,
        "expires_on": promo["expires_on"],
    }


# ---------------------------------------------------------------------------- writes


def create_order(
    db: Database,
    customer_id: str,
    items: list[dict[str, Any]],
    shipping_method: str,
    promo_code: str | None = None,
    gift_message: str | None = None,
) -> dict[str, Any]:
    customer = db.get("customers", customer_id)
    basket = _basket(db, items)
    bought: dict[str, int] = {}
    for order in db.find("orders", customer_id=customer_id):
        if order["status"] != "cancelled":
            for line in _lines(db, order["order_id"]):
                bought[line["product_id"]] = bought.get(line["product_id"], 0) + line["quantity"]
    for product, quantity in basket:
        name = product["name"]
        if product["status"] != "active":
            raise InvalidState(f"{name} is {product['status']}", product_id=product["product_id"])
        if product["stock"] < quantity:
            raise InvalidState(
                f"only {product['stock']} of {name} in stock", stock=product["stock"]
            )
        limit, earlier = product["purchase_limit"], bought.get(product["product_id"], 0)
        if limit is not None and earlier + quantity > limit:
            raise PolicyViolation(
                f"{name} is limited to {limit} per customer; this account already bought {earlier}",
                purchase_limit=limit,
                already_bought=earlier,
            )
        if product["oversized"] and shipping_method != "standard":
            raise PolicyViolation(f"{name} ships by freight with standard shipping only")
    subtotal = round(sum(p["price"] * q for p, q in basket), 2)
    discount = 0.0
    if promo_code:
        promo = db.get("promo_codes", promo_code)
        reason, _, discount = _promo(db, promo, customer, basket)
        if reason:
            raise PolicyViolation(reason, promo_code=promo_code)
        if promo["single_use"]:
            db.update("promo_codes", promo_code, used_by=[*promo["used_by"], customer_id])
    plus = customer["membership"] == "plus"
    fee = (PLUS_SHIPPING_FEES if plus else SHIPPING_FEES)[shipping_method]
    if shipping_method == "standard" and subtotal - discount >= FREE_STANDARD_FROM:
        fee = 0.0
    order_id = db.next_id("orders", "ORD-5")
    lines = []
    for product, quantity in basket:
        db.update("products", product["product_id"], stock=product["stock"] - quantity)
        line = {
            "line_id": db.next_id("order_lines", "LN-"),
            "order_id": order_id,
            "product_id": product["product_id"],
            "product_name": product["name"],
            "quantity": quantity,
            "unit_price": product["price"],
            "returned_quantity": 0,
            "price_adjusted": False,
        }
        db.insert("order_lines", line)
        lines.append(pick(line, "product_id", "product_name", "quantity", "unit_price"))
    order = {
        "order_id": order_id,
        "customer_id": customer_id,
        "status": "processing",
        "placed_on": db.today.isoformat(),
        "delivered_on": None,
        "shipping_method": shipping_method,
        "shipping_address": customer["default_address"],
        "subtotal": subtotal,
        "promo_code": promo_code,
        "discount": discount,
        "shipping_fee": fee,
        "total": round(subtotal - discount + fee, 2),
        "payment_method": customer["payment_method"],
        "gift_message": gift_message,
        "cancel_reason": None,
    }
    db.insert("orders", order)
    eta = db.today + timedelta(days=DELIVERY_DAYS[shipping_method])
    keys = ("order_id", "status", "placed_on", "subtotal", "discount", "shipping_fee", "total")
    return {
        **pick(order, *keys, "shipping_method", "shipping_address", "gift_message"),
        "lines": lines,
        "estimated_delivery": eta.isoformat(),
    }


def _require_unshipped(order: dict[str, Any], action: str) -> None:
    if order["status"] != "processing":
        after = {
            "shipped": "; it can be returned once delivered",
            "delivered": "; start a return instead",
        }
        raise InvalidState(
            f"order {order['order_id']} is {order['status']} and can no longer be {action}"
            + after.get(order["status"], ""),
            status=order["status"],
        )


def cancel_online_order(db: Database, order_id: str, reason: str) -> dict[str, Any]:
    order = db.get("orders", order_id)
    _require_unshipped(order, "cancelled")
    for line in _lines(db, order_id):
        product = db.get("products", line["product_id"])
        db.update("products", product["product_id"], stock=product["stock"] + line["quantity"])
    db.update("orders", order_id, status="cancelled", cancel_reason=reason)
    return {
        "order_id": order_id,
        "status": "cancelled",
        "refund_amount": order["total"],
        "refund_method": order["payment_method"],
        "cancelled_on": db.today.isoformat(),
    }


def update_order_address(db: Database, order_id: str, address: dict[str, Any]) -> dict[str, Any]:
    order = db.get("orders", order_id)
    _require_unshipped(order, "re-addressed")
    address = {k: address.get(k) for k in ADDRESS_FIELDS}
    on_po_box = any(PO_BOX.search(address[k] or "") for k in ("line1", "line2"))
    oversized = [
        line["product_name"]
        for line in _lines(db, order_id)
        if db.get("products", line["product_id"])["oversized"]
    ]
    if on_po_box and oversized:
        raise PolicyViolation(f"{oversized[0]} ships by freight and cannot go to a PO box")
    order = db.update("orders", order_id, shipping_address=address)
    return pick(order, "order_id", "status", "shipping_address")


def start_return(
    db: Database,
    order_id: str,
    product_id: str,
    quantity: int,
    reason: str,
    refund_method: str,
) -> dict[str, Any]:
    order = db.get("orders", order_id)
    line = _line(db, order_id, product_id)
    if order["status"] != "delivered":
        hint = "cancel it instead" if order["status"] == "processing" else "wait for delivery"
        raise InvalidState(f"order {order_id} is {order['status']}; {hint}", status=order["status"])
    product = db.get("products", product_id)
    if not product["returnable"]:
        raise PolicyViolation(f"{product['name']} is final sale and cannot be returned")
    age, window = days_since(db, order["delivered_on"]), product["return_window_days"]
    if age > window:
        raise PolicyViolation(
            f"{product['name']} can be returned within {window} days of delivery; "
            f"order {order_id} was delivered {age} days ago",
            return_window_days=window,
            days_since_delivery=age,
        )
    left = line["quantity"] - line["returned_quantity"]
    if quantity > left:
        raise InvalidRequest(f"only {left} unit(s) of {product['name']} can still be returned")
    gross = line["unit_price"] * quantity
    # The order discount is shared across its items in proportion to their price.
    gross -= order["discount"] * gross / order["subtotal"] if order["subtotal"] else 0.0
    fee = 0.0
    if product["category"] == "electronics" and reason == "no_longer_needed":
        fee = round(gross * RESTOCKING_FEE_RATE, 2)
    db.update(
        "order_lines", line["line_id"], returned_quantity=line["returned_quantity"] + quantity
    )
    record = {
        "return_id": db.next_id("returns", "RMA-"),
        "order_id": order_id,
        "product_id": product_id,
        "quantity": quantity,
        "reason": reason,
        "refund_method": refund_method,
        "status": "awaiting_dropoff",
        "refund_amount": round(gross - fee, 2),
        "restocking_fee": fee,
        "created_on": db.today.isoformat(),
        "dropoff_by": (db.today + timedelta(days=DROPOFF_DAYS)).isoformat(),
    }
    return db.insert("returns", record)


def request_price_adjustment(db: Database, order_id: str, product_id: str) -> dict[str, Any]:
    order = db.get("orders", order_id)
    line = _line(db, order_id, product_id)
    product = db.get("products", product_id)
    if order["status"] == "cancelled":
        raise InvalidState(f"order {order_id} is cancelled")
    if line["price_adjusted"]:
        raise InvalidState(f"{product['name']} in order {order_id} was already price-adjusted")
    age = days_since(db, order["placed_on"])
    if age > PRICE_ADJUSTMENT_DAYS:
        raise PolicyViolation(
            f"price adjustments are available within {PRICE_ADJUSTMENT_DAYS} days of ordering; "
            f"order {order_id} was placed {age} days ago",
            days_since_order=age,
        )
    if product["price"] >= line["unit_price"]:
        raise PolicyViolation(
            f"no price drop: paid {line['unit_price']:.2f}, current price {product['price']:.2f}"
        )
    quantity = line["quantity"] - line["returned_quantity"]
    db.update("order_lines", line["line_id"], price_adjusted=True)
    record = {
        "adjustment_id": db.next_id("price_adjustments", "PA-"),
        "order_id": order_id,
        "product_id": product_id,
        "paid_price": line["unit_price"],
        "current_price": product["price"],
        "quantity": quantity,
        "credit_amount": round((line["unit_price"] - product["price"]) * quantity, 2),
        "refund_method": order["payment_method"],
        "created_on": db.today.isoformat(),
    }
    return db.insert("price_adjustments", record)


def report_missing_package(db: Database, order_id: str, details: str | None = None) -> dict:
    order = db.get("orders", order_id)
    shipments = db.find("shipments", order_id=order_id)
    if not shipments:
        raise InvalidState(f"order {order_id} is {order['status']} and has not shipped")
    shipment = shipments[0]
    if shipment["status"] != "delivered":
        raise InvalidState(
            f"order {order_id} is still in transit, expected by {shipment['estimated_delivery']}"
        )
    age = days_since(db, shipment["delivered_on"])
    if age < CLAIM_WAIT_DAYS:
        raise PolicyViolation(
            f"the carrier scanned order {order_id} as delivered {age} day(s) ago; parcels often "
            f"turn up within 48 hours, so claims open {CLAIM_WAIT_DAYS} days after delivery"
        )
    if age > CLAIM_WINDOW_DAYS:
        raise PolicyViolation(
            f"missing-package claims must be opened within {CLAIM_WINDOW_DAYS} days of delivery; "
            f"order {order_id} was delivered {age} days ago"
        )
    if db.find("claims", order_id=order_id):
        raise InvalidState(f"a claim for order {order_id} already exists")
    lines = _lines(db, order_id)
    products = [db.get("products", line["product_id"]) for line in lines]
    in_stock = all(p["stock"] >= line["quantity"] for p, line in zip(products, lines, strict=True))
    eta = None
    if in_stock:
        for p, line in zip(products, lines, strict=True):
            db.update("products", p["product_id"], stock=p["stock"] - line["quantity"])
        eta = (db.today + timedelta(days=DELIVERY_DAYS["express"])).isoformat()
    claim = {
        "claim_id": db.next_id("claims", "CLM-"),
        "order_id": order_id,
        "issue": "not_received",
        "status": "approved",
        "resolution": "replacement" if in_stock else "refund",
        "refund_amount": 0.0 if in_stock else order["total"],
        "replacement_estimated_delivery": eta,
        "created_on": db.today.isoformat(),
    }
    db.insert("claims", {**claim, "details": details})
    return claim
