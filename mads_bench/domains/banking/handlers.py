"""Handlers of the banking domain: one function per tool in tools.yaml.

Business rules live here, counted from ``db.today``: 60-day dispute window, 6 savings
withdrawals per calendar month, per-account daily payment limits, a $1,000 cap for
payees added less than 3 days ago, scheduling at most 90 days ahead, cancellation only
before a payment's date, bank-imposed card locks, and one replacement per card.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from mads_bench.database import Database, InvalidRequest, InvalidState, NotFound, PolicyViolation
from mads_bench.domains._shared import days_since, pick

DISPUTE_WINDOW_DAYS = 60
DISPUTE_RESOLUTION_DAYS = 45
NEW_PAYEE_DAYS = 3
NEW_PAYEE_CAP = 1000.0
MAX_SCHEDULE_DAYS = 90
EXPEDITED_FEE = 25.0
DELIVERY_DAYS = {"standard": 7, "expedited": 2}
# Transfers that still count against a day's limit or a month's withdrawals.
LIVE_STATUSES = ("completed", "processing", "scheduled")


def _money(amount: float) -> float:
    if round(amount, 2) != amount:
        raise InvalidRequest(f"amount {amount} has more than two decimals")
    return round(float(amount), 2)


def _require_active(account: dict[str, Any], role: str) -> None:
    if account["status"] != "active":
        why = f" ({account['status_reason']})" if account["status_reason"] else ""
        raise InvalidState(
            f"{role} account {account['account_id']} is {account['status']}{why}",
            status=account["status"],
        )


def _insufficient(account: dict[str, Any], amount: float) -> None:
    if amount > account["available_balance"]:
        available = account["available_balance"]
        raise InvalidState(
            f"insufficient funds: {available:.2f} available", available_balance=available
        )


def _move(db: Database, account: dict[str, Any], delta: float) -> dict[str, Any]:
    balance = round(account["balance"] + delta, 2)
    available = round(account["available_balance"] + delta, 2)
    return db.update(
        "accounts", account["account_id"], balance=balance, available_balance=available
    )


def _withdrawals_this_month(db: Database, account_id: str) -> int:
    month = db.today.isoformat()[:7]
    transfers = db.find("transfers", from_account_id=account_id)
    return sum(1 for t in transfers if t["date"][:7] == month and t["status"] in LIVE_STATUSES)


def _new_transfer(db: Database, **fields: Any) -> dict[str, Any]:
    empty = dict.fromkeys(("to_account_id", "payee_id", "payee_name", "memo"))
    record = {"transfer_id": db.next_id("transfers", "TRF-"), "kind": "internal", **empty}
    return db.insert("transfers", {**record, **fields, "created_on": db.today.isoformat()})


# ----------------------------------------------------------------------------- reads


def list_customer_accounts(db: Database, customer_id: str) -> dict[str, Any]:
    customer = db.get("customers", customer_id)
    keys = ("account_id", "type", "product", "nickname", "status", "balance", "available_balance")
    return {
        "customer_id": customer_id,
        "customer_name": customer["name"],
        "tier": customer["tier"],
        "accounts": [pick(a, *keys) for a in db.find("accounts", customer_id=customer_id)],
    }


def get_account_balance(db: Database, account_id: str) -> dict[str, Any]:
    a = db.get("accounts", account_id)
    remaining = None
    if a["type"] == "savings":
        used = _withdrawals_this_month(db, account_id)
        remaining = max(a["monthly_withdrawal_limit"] - used, 0)
    pending = 0.0 if a["type"] == "credit_card" else round(a["balance"] - a["available_balance"], 2)
    return {
        **pick(a, "account_id", "type", "product", "nickname", "status", "status_reason"),
        **pick(a, "currency", "balance", "available_balance"),
        "pending_amount": pending,
        **pick(a, "credit_limit", "daily_payment_limit"),
        "withdrawals_remaining_this_month": remaining,
        "as_of": db.today.isoformat(),
    }


def search_transactions(
    db: Database,
    account_id: str,
    start_date: str | None = None,
    end_date: str | None = None,
    merchant: str | None = None,
    min_amount: float | None = None,
    max_amount: float | None = None,
    limit: int = 25,
) -> dict[str, Any]:
    db.get("accounts", account_id)
    if start_date and end_date and start_date > end_date:
        raise InvalidRequest(f"start_date {start_date} is after end_date {end_date}")
    if min_amount is not None and max_amount is not None and min_amount > max_amount:
        raise InvalidRequest(f"min_amount {min_amount} is above max_amount {max_amount}")
    wanted = merchant.casefold() if merchant else ""
    hits = [
        t
        for t in db.find("transactions", account_id=account_id)
        if start_date is None or t["date"] >= start_date
        if end_date is None or t["date"] <= end_date
        if wanted in t["merchant"].casefold()
        if min_amount is None or abs(t["amount"]) >= min_amount
        if max_amount is None or abs(t["amount"]) <= max_amount
    ]
    hits.sort(key=lambda t: (t["date"], t["transaction_id"]), reverse=True)
    return {"account_id": account_id, "count": len(hits[:limit]), "transactions": hits[:limit]}


def list_cards(db: Database, customer_id: str) -> dict[str, Any]:
    db.get("customers", customer_id)
    return {"customer_id": customer_id, "cards": db.find("cards", customer_id=customer_id)}


def list_payees(db: Database, customer_id: str) -> dict[str, Any]:
    db.get("customers", customer_id)
    return {"customer_id": customer_id, "payees": db.find("payees", customer_id=customer_id)}


def list_transfers(db: Database, account_id: str, status: str | None = None) -> dict[str, Any]:
    db.get("accounts", account_id)
    transfers = db.find("transfers", from_account_id=account_id, status=status)
    transfers.sort(key=lambda t: (t["date"], t["transfer_id"]), reverse=True)
    return {"account_id": account_id, "transfers": transfers}


# ---------------------------------------------------------------------------- writes


def transfer_between_accounts(
    db: Database, from_account_id: str, to_account_id: str, amount: float, memo: str | None = None
) -> dict[str, Any]:
    amount = _money(amount)
    if from_account_id == to_account_id:
        raise InvalidRequest("source and destination are the same account")
    source, target = db.get("accounts", from_account_id), db.get("accounts", to_account_id)
    if source["customer_id"] != target["customer_id"]:
        raise PolicyViolation(
            "transfers only move money between one customer's own accounts; "
            "pay other people through a saved payee"
        )
    if source["type"] == "credit_card":
        raise InvalidRequest("money cannot be moved out of a credit card (no cash advances)")
    _require_active(source, "source")
    _require_active(target, "destination")
    owed = round(-target["balance"], 2)
    if target["type"] == "credit_card" and amount > owed:
        raise InvalidRequest(
            f"payment {amount:.2f} exceeds the {owed:.2f} owed on {to_account_id}", owed=owed
        )
    if source["type"] == "savings":
        used = _withdrawals_this_month(db, from_account_id)
        if used >= source["monthly_withdrawal_limit"]:
            raise PolicyViolation(
                f"savings account {from_account_id} has used all {used} withdrawals allowed "
                "this month; the count resets on the 1st",
                withdrawals_used=used,
            )
    _insufficient(source, amount)
    source, target = _move(db, source, -amount), _move(db, target, amount)
    transfer = _new_transfer(
        db,
        from_account_id=from_account_id,
        to_account_id=to_account_id,
        amount=amount,
        date=db.today.isoformat(),
        status="completed",
        memo=memo,
    )
    return {
        **pick(transfer, "transfer_id", "status", "from_account_id", "to_account_id"),
        **pick(transfer, "amount", "date"),
        "from_available_balance": source["available_balance"],
        "to_balance": target["balance"],
    }


def send_payment(
    db: Database,
    from_account_id: str,
    payee_id: str,
    amount: float,
    payment_date: str | None = None,
    memo: str | None = None,
) -> dict[str, Any]:
    amount = _money(amount)
    account, payee = db.get("accounts", from_account_id), db.get("payees", payee_id)
    if payee["customer_id"] != account["customer_id"]:
        raise NotFound(f"payee {payee_id} is not saved on the owner of {from_account_id}")
    if account["type"] != "checking":
        raise InvalidRequest("payments to payees can only be sent from a checking account")
    _require_active(account, "source")
    if payee["status"] != "active":
        raise InvalidState(
            f"payee {payee['name']} is {payee['status']}: confirm the two test deposits first",
            status=payee["status"],
        )
    day = date.fromisoformat(payment_date) if payment_date else db.today
    if day < db.today:
        raise InvalidRequest(f"payment_date {day} is in the past")
    if (day - db.today).days > MAX_SCHEDULE_DAYS:
        raise PolicyViolation(f"payments can be scheduled at most {MAX_SCHEDULE_DAYS} days ahead")
    payee_age = days_since(db, payee["added_on"])
    if payee_age < NEW_PAYEE_DAYS and amount > NEW_PAYEE_CAP:
        raise PolicyViolation(
            f"payee {payee['name']} was added {payee_age} day(s) ago; payments to payees newer "
            f"than {NEW_PAYEE_DAYS} days are capped at {NEW_PAYEE_CAP:.2f}",
            cap=NEW_PAYEE_CAP,
        )
    same_day = round(
        sum(
            t["amount"]
            for t in db.find("transfers", from_account_id=from_account_id, kind="payee")
            if t["date"] == day.isoformat() and t["status"] in LIVE_STATUSES
        ),
        2,
    )
    limit = account["daily_payment_limit"]
    if same_day + amount > limit:
        raise PolicyViolation(
            f"the daily payment limit of {limit:.2f} on {from_account_id} would be exceeded on "
            f"{day} ({same_day:.2f} already sent or scheduled)",
            daily_limit=limit,
            already_used=same_day,
        )
    status = "scheduled" if day > db.today else "completed"
    if status == "completed":
        _insufficient(account, amount)
        account = _move(db, account, -amount)
    fields = {"payee_id": payee_id, "payee_name": payee["name"], "amount": amount, "memo": memo}
    transfer = _new_transfer(
        db,
        kind="payee",
        from_account_id=from_account_id,
        date=day.isoformat(),
        status=status,
        **fields,
    )
    return {
        **pick(transfer, "transfer_id", "status", "from_account_id"),
        **fields,
        "payment_date": transfer["date"],
        "available_balance": account["available_balance"],
    }


def cancel_scheduled_payment(db: Database, transfer_id: str) -> dict[str, Any]:
    transfer = db.get("transfers", transfer_id)
    due = transfer["date"]
    if transfer["status"] == "processing" or (
        transfer["status"] == "scheduled" and due <= db.today.isoformat()
    ):
        raise PolicyViolation(
            f"payment {transfer_id} is due {due} and already processing; "
            "payments can only be cancelled until the day before"
        )
    if transfer["status"] != "scheduled":
        raise InvalidState(f"payment {transfer_id} is {transfer['status']} and cannot be cancelled")
    db.update("transfers", transfer_id, status="cancelled")
    return {
        **pick(transfer, "transfer_id", "payee_name", "amount"),
        "status": "cancelled",
        "payment_date": due,
        "cancelled_on": db.today.isoformat(),
    }


def set_card_lock(
    db: Database, card_id: str, locked: bool, reason: str | None = None
) -> dict[str, Any]:
    card = db.get("cards", card_id)
    ending = f"card ending {card['last4']}"
    if card["status"] in ("blocked", "expired", "ordered"):
        why = f" ({card['status_reason']})" if card["status_reason"] else ""
        raise InvalidState(f"{ending} is {card['status']}{why}", status=card["status"])
    if locked == (card["status"] == "locked"):
        raise InvalidState(f"{ending} is already {'locked' if locked else 'unlocked'}")
    if not locked and card["locked_by"] == "bank":
        raise PolicyViolation(
            f"{ending} was locked by the bank ({card['status_reason']}); "
            "only the fraud team can unlock it"
        )
    card = db.update(
        "cards",
        card_id,
        status="locked" if locked else "active",
        status_reason=f"locked by the customer: {reason or 'other'}" if locked else None,
        locked_by="customer" if locked else None,
    )
    return {**pick(card, "card_id", "last4", "status", "status_reason"), "locked": locked}


def request_card_replacement(
    db: Database, card_id: str, reason: str, expedited: bool = False
) -> dict[str, Any]:
    card = db.get("cards", card_id)
    ending = f"card ending {card['last4']}"
    earlier = db.find("cards", replacement_of=card_id)
    if earlier:
        new = earlier[0]
        raise InvalidState(f"{ending} was already replaced by the card ending {new['last4']}")
    if card["status"] in ("expired", "ordered"):
        raise InvalidState(f"{ending} is {card['status']}", status=card["status"])
    if db.get("accounts", card["account_id"])["status"] == "closed":
        raise InvalidState(f"the account of the {ending} is closed")
    shipping = "expedited" if expedited else "standard"
    premier = db.get("customers", card["customer_id"])["tier"] == "premier"
    new_card = db.insert(
        "cards",
        {
            **card,
            "card_id": db.next_id("cards", "CARD-"),
            # Deterministic stand-in for the issuer's card-number allocation.
            "last4": f"{(int(card['last4']) * 37 + 1009) % 10000:04d}",
            "status": "ordered",
            "status_reason": f"replacement for the {ending}",
            "expires": f"{db.today.year + 4}-{db.today.month:02d}",
            "issued_on": db.today.isoformat(),
            "replacement_of": card_id,
            "locked_by": None,
        },
    )
    if reason in ("lost", "stolen"):
        reported = f"reported {reason} on {db.today}"
        card = db.update("cards", card_id, status="blocked", status_reason=reported)
    return {
        "new_card_id": new_card["card_id"],
        "new_card_last4": new_card["last4"],
        "replaced_card_id": card_id,
        "old_card_status": card["status"],
        "reason": reason,
        "shipping": shipping,
        "fee": EXPEDITED_FEE if expedited and not premier else 0.0,
        "estimated_delivery": (db.today + timedelta(days=DELIVERY_DAYS[shipping])).isoformat(),
    }


def open_transaction_dispute(
    db: Database, transaction_id: str, reason: str, details: str | None = None
) -> dict[str, Any]:
    tx = db.get("transactions", transaction_id)
    if tx["status"] == "pending":
        raise InvalidState(f"transaction {transaction_id} is still pending; dispute it once posted")
    if tx["amount"] >= 0:
        raise InvalidRequest(f"transaction {transaction_id} is a credit; only debits are disputed")
    if tx["disputed"]:
        raise InvalidState(f"transaction {transaction_id} is already disputed")
    age = days_since(db, tx["date"])
    if age > DISPUTE_WINDOW_DAYS:
        raise PolicyViolation(
            f"transactions can be disputed within {DISPUTE_WINDOW_DAYS} days; "
            f"this one is {age} days old",
            days_since_transaction=age,
        )
    card_locked = False
    if reason == "unauthorized" and tx["card_id"]:
        # Stop further fraud on the same card while the claim is reviewed.
        card = db.get("cards", tx["card_id"])
        if card["status"] == "active":
            why = f"unauthorized charge disputed on {db.today}"
            db.update(
                "cards", card["card_id"], status="locked", status_reason=why, locked_by="bank"
            )
            card_locked = True
    db.update("transactions", transaction_id, disputed=True)
    resolution = db.today + timedelta(days=DISPUTE_RESOLUTION_DAYS)
    dispute = {
        "dispute_id": db.next_id("disputes", "DSP-"),
        **pick(tx, "transaction_id", "account_id", "merchant"),
        "amount": round(-tx["amount"], 2),
        "reason": reason,
        "status": "under_review",
        "opened_on": db.today.isoformat(),
        "expected_resolution_by": resolution.isoformat(),
    }
    db.insert("disputes", {**dispute, "details": details})
    return {**dispute, "card_locked": card_locked}
