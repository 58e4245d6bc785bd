"""Handlers of the τ²-bench retail tools, written for mads-bench from the retail policy.

The policy's rules are enforced here, as typed errors like the other packs':

- **authentication first**: every tool that reads or changes a customer's data needs the
  customer found by email or by name + zip first (``find_user_id_*``), even when the user id
  is given; the found customer is kept in the ``session`` table;
- **one customer per conversation**: finding a second customer, or touching another
  customer's order, profile or payment method, is refused;
- **order status**: cancel and modify need ``pending``; return and exchange need
  ``delivered``; items can be modified or exchanged once per order;
- **payment**: a payment method must be the customer's; a gift card must cover what it pays;
  a refund goes to the original payment method or one of the customer's gift cards; a new
  payment method must differ from the original;
- **items**: a new item is an available variant of the same product, different from the old.

Products are public: ``get_product_details``, ``get_item_details``, ``list_all_product_types``
and ``calculate`` need no authentication.
"""

from __future__ import annotations

import ast
import operator
from typing import Any

from mads_bench.database import Database, InvalidRequest, InvalidState, NotFound, PolicyViolation

SESSION = "current"
CANCEL_REASONS = ("no longer needed", "ordered by mistake")
ITEMS_MODIFIED = "pending (items modified)"


# ---------------------------------------------------------------------- authentication
def _authenticate(db: Database, user_id: str) -> dict[str, Any]:
    session = db.get("session", SESSION)
    current = session.get("user_id")
    if current is not None and current != user_id:
        raise PolicyViolation(
            f"this conversation already serves user {current}; one customer per conversation"
        )
    db.update("session", SESSION, user_id=user_id)
    return {"user_id": user_id}


def _customer(db: Database) -> str:
    """The authenticated customer's user id; refuses before authentication."""
    user_id = db.get("session", SESSION).get("user_id")
    if user_id is None:
        raise PolicyViolation(
            "authenticate the customer first: find_user_id_by_email or find_user_id_by_name_zip"
        )
    return user_id


def _own_user(db: Database, user_id: str) -> dict[str, Any]:
    if user_id != _customer(db):
        raise PolicyViolation(f"user {user_id} is not the authenticated customer")
    return db.get("users", user_id)


def _own_order(db: Database, order_id: str) -> dict[str, Any]:
    customer = _customer(db)
    order = db.get("orders", order_id)
    if order["user_id"] != customer:
        raise PolicyViolation(f"order {order_id} belongs to another customer")
    return order


def _payment_method(db: Database, user: dict[str, Any], method_id: str) -> dict[str, Any]:
    method = user["payment_methods"].get(method_id)
    if method is None:
        raise InvalidRequest(f"payment method {method_id} is not one of the customer's")
    return method


def _charge_gift_card(
    db: Database, user: dict[str, Any], method: dict[str, Any], amount: float
) -> None:
    """Take ``amount`` from (or, when negative, give it back to) a gift card; others wait."""
    if method["source"] != "gift_card":
        return
    balance = round(method["balance"] - amount, 2)
    if balance < 0:
        raise PolicyViolation(
            f"gift card {method['id']} has {method['balance']:.2f}, not enough for {amount:.2f}"
        )
    methods = dict(user["payment_methods"])
    methods[method["id"]] = {**method, "balance": balance}
    user["payment_methods"] = methods
    db.update("users", user["user_id"], payment_methods=methods)


def _status(order: dict[str, Any], wanted: str, action: str) -> None:
    if order["status"] != wanted:
        raise InvalidState(
            f"order {order['order_id']} is {order['status']}; only {wanted} orders can be {action}"
        )


def _swaps(
    db: Database, order: dict[str, Any], item_ids: list[str], new_item_ids: list[str]
) -> list[tuple[int, dict[str, Any]]]:
    """(position in the order, new item line) for each swap, checked against the policy."""
    if len(item_ids) != len(new_item_ids):
        raise InvalidRequest(
            f"{len(item_ids)} item ids but {len(new_item_ids)} new item ids; give one per item"
        )
    free = list(range(len(order["items"])))
    swaps = []
    for old_id, new_id in zip(item_ids, new_item_ids, strict=True):
        position = next((i for i in free if order["items"][i]["item_id"] == old_id), None)
        if position is None:
            raise InvalidRequest(f"item {old_id} is not in order {order['order_id']}")
        free.remove(position)
        line = order["items"][position]
        product = db.get("products", line["product_id"])
        variant = product["variants"].get(new_id)
        if variant is None:
            raise InvalidRequest(
                f"item {new_id} is not a variant of {product['name']} ({product['product_id']})"
            )
        if new_id == old_id:
            raise InvalidRequest(f"item {new_id} is the item already ordered")
        if not variant["available"]:
            raise InvalidState(f"item {new_id} of {product['name']} is not available")
        swaps.append((position, {**line, "item_id": new_id, "price": variant["price"],
                                 "options": variant["options"]}))  # fmt: skip
    return swaps


def _difference(order: dict[str, Any], swaps: list[tuple[int, dict[str, Any]]]) -> float:
    return round(sum(new["price"] - order["items"][i]["price"] for i, new in swaps), 2)


# ---------------------------------------------------------------------- reads
def find_user_id_by_email(db: Database, email: str) -> dict[str, Any]:
    users = db.find("users", email=email.strip())
    if not users:
        raise NotFound(f"no user with email {email!r}")
    return _authenticate(db, users[0]["user_id"])


def find_user_id_by_name_zip(
    db: Database, first_name: str, last_name: str, zip: str
) -> dict[str, Any]:
    wanted = (first_name.strip().casefold(), last_name.strip().casefold(), zip.strip())
    for user in db.find("users"):
        name = user["name"]
        found = (name["first_name"].casefold(), name["last_name"].casefold())
        if (*found, user["address"]["zip"]) == wanted:
            return _authenticate(db, user["user_id"])
    raise NotFound(f"no user named {first_name} {last_name} with zip code {zip}")


def get_user_details(db: Database, user_id: str) -> dict[str, Any]:
    return _own_user(db, user_id)


def get_order_details(db: Database, order_id: str) -> dict[str, Any]:
    return _own_order(db, order_id)


def get_product_details(db: Database, product_id: str) -> dict[str, Any]:
    return db.get("products", product_id)


def get_item_details(db: Database, item_id: str) -> dict[str, Any]:
    for product in db.find("products"):
        variant = product["variants"].get(item_id)
        if variant is not None:
            return {**variant, "product_id": product["product_id"], "name": product["name"]}
    raise NotFound(f"no item with item_id {item_id!r}")


def list_all_product_types(db: Database) -> dict[str, Any]:
    products = sorted(db.find("products"), key=lambda p: p["name"])
    return {"products": {p["name"]: p["product_id"] for p in products}}


_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))
    raise ValueError("not arithmetic")


def calculate(db: Database, expression: str) -> dict[str, Any]:
    try:
        value = _evaluate(ast.parse(expression, mode="eval"))
    except ZeroDivisionError:
        raise InvalidRequest(f"{expression!r} divides by zero") from None
    except (SyntaxError, ValueError):
        raise InvalidRequest(
            f"{expression!r} is not arithmetic (numbers, + - * / and parentheses)"
        ) from None
    return {"result": round(value, 2)}


# ---------------------------------------------------------------------- writes
def cancel_pending_order(db: Database, order_id: str, reason: str) -> dict[str, Any]:
    order = _own_order(db, order_id)
    _status(order, "pending", "cancelled")
    if reason not in CANCEL_REASONS:  # the schema's enum already says so; kept for direct calls
        raise PolicyViolation(f"the reason must be one of {list(CANCEL_REASONS)}")
    user = db.get("users", order["user_id"])
    refunds = []
    for payment in order["payment_history"]:
        if payment["transaction_type"] != "payment":
            continue
        method = _payment_method(db, user, payment["payment_method_id"])
        _charge_gift_card(db, user, method, -payment["amount"])
        refunds.append({**payment, "transaction_type": "refund"})
    return db.update(
        "orders", order_id, status="cancelled", cancel_reason=reason,
        payment_history=[*order["payment_history"], *refunds],
    )  # fmt: skip


def modify_pending_order_address(
    db: Database, order_id: str, address1: str, address2: str, city: str, state: str,
    country: str, zip: str,
) -> dict[str, Any]:  # fmt: skip
    order = _own_order(db, order_id)
    _status(order, "pending", "modified")
    address = {"address1": address1, "address2": address2, "city": city, "country": country,
               "state": state, "zip": zip}  # fmt: skip
    return db.update("orders", order_id, address=address)


def modify_pending_order_payment(
    db: Database, order_id: str, payment_method_id: str
) -> dict[str, Any]:
    order = _own_order(db, order_id)
    _status(order, "pending", "modified")
    payments = [p for p in order["payment_history"] if p["transaction_type"] == "payment"]
    if len(payments) != 1:
        raise InvalidState(f"order {order_id} has {len(payments)} payments; it needs exactly 1")
    original = payments[0]
    if payment_method_id == original["payment_method_id"]:
        raise PolicyViolation(f"{payment_method_id} already pays order {order_id}")
    user = db.get("users", order["user_id"])
    new = _payment_method(db, user, payment_method_id)
    old = _payment_method(db, user, original["payment_method_id"])
    amount = original["amount"]
    _charge_gift_card(db, user, new, amount)
    _charge_gift_card(db, user, old, -amount)
    history = [
        *order["payment_history"],
        {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
        {"transaction_type": "refund", "amount": amount, "payment_method_id": old["id"]},
    ]
    return db.update("orders", order_id, payment_history=history)


def modify_pending_order_items(
    db: Database, order_id: str, item_ids: list[str], new_item_ids: list[str],
    payment_method_id: str,
) -> dict[str, Any]:  # fmt: skip
    order = _own_order(db, order_id)
    if order["status"] == ITEMS_MODIFIED:
        raise InvalidState(f"the items of order {order_id} were already modified once")
    _status(order, "pending", "modified")
    swaps = _swaps(db, order, item_ids, new_item_ids)
    user = db.get("users", order["user_id"])
    method = _payment_method(db, user, payment_method_id)
    difference = _difference(order, swaps)
    _charge_gift_card(db, user, method, difference)
    items = list(order["items"])
    for position, line in swaps:
        items[position] = line
    history = list(order["payment_history"])
    if difference:
        kind = "payment" if difference > 0 else "refund"
        history.append({"transaction_type": kind, "amount": abs(difference),
                        "payment_method_id": payment_method_id})  # fmt: skip
    return db.update(
        "orders", order_id, items=items, status=ITEMS_MODIFIED, payment_history=history
    )


def return_delivered_order_items(
    db: Database, order_id: str, item_ids: list[str], payment_method_id: str
) -> dict[str, Any]:
    order = _own_order(db, order_id)
    _status(order, "delivered", "returned")
    user = db.get("users", order["user_id"])
    method = _payment_method(db, user, payment_method_id)
    paid_with = {p["payment_method_id"] for p in order["payment_history"]}
    if method["source"] != "gift_card" and payment_method_id not in paid_with:
        raise PolicyViolation(
            "a refund goes to the original payment method or one of the customer's gift cards"
        )
    left = [line["item_id"] for line in order["items"]]
    for item_id in item_ids:
        if item_id not in left:
            raise InvalidRequest(f"item {item_id} is not in order {order_id}")
        left.remove(item_id)
    return db.update(
        "orders", order_id, status="return requested", return_items=sorted(item_ids),
        return_payment_method_id=payment_method_id,
    )  # fmt: skip


def exchange_delivered_order_items(
    db: Database, order_id: str, item_ids: list[str], new_item_ids: list[str],
    payment_method_id: str,
) -> dict[str, Any]:  # fmt: skip
    order = _own_order(db, order_id)
    _status(order, "delivered", "exchanged")
    swaps = _swaps(db, order, item_ids, new_item_ids)
    user = db.get("users", order["user_id"])
    method = _payment_method(db, user, payment_method_id)
    difference = _difference(order, swaps)
    if method["source"] == "gift_card" and method["balance"] < difference:
        raise PolicyViolation(
            f"gift card {method['id']} has {method['balance']:.2f}, not enough for {difference:.2f}"
        )
    return db.update(
        "orders", order_id, status="exchange requested", exchange_items=sorted(item_ids),
        exchange_new_items=sorted(new_item_ids), exchange_payment_method_id=payment_method_id,
        exchange_price_difference=difference,
    )  # fmt: skip


def modify_user_address(
    db: Database, user_id: str, address1: str, address2: str, city: str, state: str,
    country: str, zip: str,
) -> dict[str, Any]:  # fmt: skip
    _own_user(db, user_id)
    address = {"address1": address1, "address2": address2, "city": city, "country": country,
               "state": state, "zip": zip}  # fmt: skip
    return db.update("users", user_id, address=address)


def transfer_to_human_agents(db: Database, summary: str) -> dict[str, Any]:
    record = {
        "transfer_id": db.next_id("transfers", "T", width=3),
        "user_id": db.get("session", SESSION).get("user_id"),
    }
    db.insert("transfers", record)  # the summary is free text: kept out of the state compared
    return {**record, "status": "transferred", "summary": summary}
