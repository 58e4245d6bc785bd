"""Handlers of the mock shop: one function per tool in tools.yaml."""

from __future__ import annotations

from typing import Any

from mads_bench.database import Database, InvalidState, PolicyViolation
from mads_bench.domains._shared import days_since

CANCEL_WINDOW_DAYS = 14


def search_items(db: Database, query: str) -> dict[str, Any]:
    words = query.casefold().split()
    items = [i for i in db.find("items") if all(w in i["name"].casefold() for w in words)]
    return {"items": items}


def get_item(db: Database, item_id: str) -> dict[str, Any]:
    return db.get("items", item_id)


def place_order(db: Database, item_id: str, quantity: int) -> dict[str, Any]:
    item = db.get("items", item_id)
    if item["stock"] < quantity:
        raise InvalidState(f"only {item['stock']} of {item['name']} in stock", stock=item["stock"])
    db.update("items", item_id, stock=item["stock"] - quantity)
    order = {
        "order_id": db.next_id("orders", "O", width=1),
        "item_id": item_id,
        "quantity": quantity,
        "status": "placed",
        "placed_on": db.today.isoformat(),
    }
    return db.insert("orders", order)


def cancel_order(db: Database, order_id: str) -> dict[str, Any]:
    order = db.get("orders", order_id)
    if order["status"] != "placed":
        raise InvalidState(f"order {order_id} is {order['status']} and cannot be cancelled")
    age = days_since(db, order["placed_on"])
    if age > CANCEL_WINDOW_DAYS:
        raise PolicyViolation(
            f"orders can be cancelled within {CANCEL_WINDOW_DAYS} days; this one is {age} days old"
        )
    return db.update("orders", order_id, status="cancelled")
