"""The banking domain pack: tools against the seed data, business rules, impossible tasks.

Scenarios, task templates and the pack's shape are checked in test_packs.py."""

from functools import partial

import pytest

from mads_bench.catalog import load_domain
from tests.domains import helpers
from tests.domains.helpers import MISSING, POLICY, REQ, STATE

DOMAIN = load_domain("banking")
ok = partial(helpers.ok, "banking")
error = partial(helpers.error, "banking")


# ----------------------------------------------------------------------- reads


def test_list_customer_accounts():
    out = ok("list_customer_accounts", customer_id="C1001")
    assert out["customer_name"] == "Elena Vasquez" and out["tier"] == "standard"
    assert [a["account_id"] for a in out["accounts"]] == ["ACC-0101", "ACC-0102", "ACC-0103"]
    assert out["accounts"][0]["available_balance"] == 3402.17
    # unknown customer
    assert error("list_customer_accounts", customer_id="C9999")["code"] == MISSING


def test_get_account_balance():
    checking = ok("get_account_balance", account_id="ACC-0101")
    assert (checking["balance"], checking["available_balance"]) == (3482.17, 3402.17)
    assert checking["pending_amount"] == 80.0 and checking["daily_payment_limit"] == 2500.0
    # one April withdrawal (TRF-0014) leaves 5 of 6
    assert ok("get_account_balance", account_id="ACC-0102")["withdrawals_remaining_this_month"] == 5
    # Margaret's savings used all six in April
    assert ok("get_account_balance", account_id="ACC-1502")["withdrawals_remaining_this_month"] == 0
    card = ok("get_account_balance", account_id="ACC-0103")
    assert card["balance"] == -1243.56 and card["credit_limit"] == 6000.0
    frozen = ok("get_account_balance", account_id="ACC-0401")
    assert frozen["status"] == "frozen" and "fraud review" in frozen["status_reason"]
    assert error("get_account_balance", account_id="ACC-9999")["code"] == MISSING


def test_search_transactions():
    # merchant match is partial and case-insensitive, newest first
    out = ok("search_transactions", account_id="ACC-0101", merchant="bluebird")
    assert [t["transaction_id"] for t in out["transactions"]] == ["TX-0003", "TX-0002", "TX-0007"]
    # date range and amount range (absolute values) combine
    out = ok(
        "search_transactions",
        account_id="ACC-0101",
        start_date="2026-04-01",
        end_date="2026-04-10",
        min_amount=100,
    )
    assert [t["transaction_id"] for t in out["transactions"]] == ["TX-0004", "TX-0005"]
    assert ok("search_transactions", account_id="ACC-0101", limit=2)["count"] == 2
    # an inverted range is refused
    bad = error(
        "search_transactions", account_id="ACC-0101", start_date="2026-04-10", end_date="2026-04-01"
    )
    assert bad["code"] == REQ
    assert (
        error("search_transactions", account_id="ACC-0101", min_amount=9, max_amount=1)["code"]
        == REQ
    )


def test_list_cards_payees_and_transfers():
    cards = ok("list_cards", customer_id="C1009")["cards"]
    assert [(c["card_id"], c["status"]) for c in cards] == [
        ("CARD-0012", "blocked"),
        ("CARD-0013", "active"),
    ]
    assert cards[1]["replacement_of"] == "CARD-0012"
    payees = ok("list_payees", customer_id="C1007")["payees"]
    assert [(p["payee_id"], p["added_on"]) for p in payees] == [
        ("P-0008", "2025-08-20"),
        ("P-0009", "2026-04-14"),
    ]
    scheduled = ok("list_transfers", account_id="ACC-1201", status="scheduled")["transfers"]
    assert [(t["transfer_id"], t["payee_name"], t["date"]) for t in scheduled] == [
        ("TRF-0010", "Harbor Gym", "2026-04-28"),
        ("TRF-0011", "City of Riverton Water", "2026-04-22"),
    ]
    assert error("list_cards", customer_id="C0000")["code"] == MISSING


# ---------------------------------------------------------------------- writes


def test_transfer_between_accounts_moves_money():
    db = DOMAIN.database()
    out = ok(
        "transfer_between_accounts",
        db,
        from_account_id="ACC-0502",
        to_account_id="ACC-0501",
        amount=1200,
    )
    assert out["transfer_id"] == "TRF-0018" and out["amount"] == 1200.0
    assert (out["from_available_balance"], out["to_balance"]) == (17550.0, 7630.25)
    # later reads see the new balances and the transfer
    assert ok("get_account_balance", db, account_id="ACC-0501")["available_balance"] == 7630.25
    assert (
        ok("list_transfers", db, account_id="ACC-0502")["transfers"][0]["transfer_id"] == "TRF-0018"
    )
    # paying off a credit card brings its balance to zero
    paid = ok(
        "transfer_between_accounts",
        db,
        from_account_id="ACC-1301",
        to_account_id="ACC-1303",
        amount=1980.45,
    )
    assert paid["to_balance"] == 0.0


def test_savings_withdrawal_limit_counts_new_transfers():
    db = DOMAIN.database()
    # ACC-0102 has one April withdrawal; five more reach the limit of six
    for _ in range(5):
        ok(
            "transfer_between_accounts",
            db,
            from_account_id="ACC-0102",
            to_account_id="ACC-0101",
            amount=10,
        )
    refused = error(
        "transfer_between_accounts",
        db,
        from_account_id="ACC-0102",
        to_account_id="ACC-0101",
        amount=10,
    )
    assert refused["code"] == POLICY and refused["withdrawals_used"] == 6


@pytest.mark.parametrize(
    ("arguments", "code", "words"),
    [
        # same account on both sides
        ({"from_account_id": "ACC-0101", "to_account_id": "ACC-0101", "amount": 5}, REQ, "same"),
        # someone else's account
        ({"from_account_id": "ACC-0101", "to_account_id": "ACC-0201", "amount": 5}, POLICY, "own"),
        # no cash advances from a credit card
        ({"from_account_id": "ACC-0103", "to_account_id": "ACC-0101", "amount": 5}, REQ, "credit"),
        # frozen source account
        (
            {"from_account_id": "ACC-0401", "to_account_id": "ACC-0402", "amount": 5},
            STATE,
            "frozen",
        ),
        # closed destination account
        (
            {"from_account_id": "ACC-0902", "to_account_id": "ACC-0903", "amount": 5},
            STATE,
            "closed",
        ),
        # overpaying a credit card
        ({"from_account_id": "ACC-0101", "to_account_id": "ACC-0103", "amount": 1300}, REQ, "owed"),
        # six savings withdrawals already this month
        ({"from_account_id": "ACC-1502", "to_account_id": "ACC-1501", "amount": 5}, POLICY, "6"),
        # insufficient funds on the student account
        (
            {"from_account_id": "ACC-0301", "to_account_id": "ACC-0302", "amount": 500},
            STATE,
            "insufficient",
        ),
        # fractions of a cent
        (
            {"from_account_id": "ACC-0502", "to_account_id": "ACC-0501", "amount": 1.005},
            REQ,
            "decimals",
        ),
        # unknown account
        (
            {"from_account_id": "ACC-0502", "to_account_id": "ACC-9999", "amount": 5},
            MISSING,
            "ACC-9999",
        ),
    ],
)
def test_transfer_between_accounts_refusals(arguments, code, words):
    refused = error("transfer_between_accounts", **arguments)
    assert refused["code"] == code and words in refused["message"]


def test_send_payment_now_and_scheduled():
    db = DOMAIN.database()
    now = ok("send_payment", db, from_account_id="ACC-1001", payee_id="P-0011", amount=142.8)
    assert now["status"] == "completed" and now["available_balance"] == 2067.8
    assert now["payment_date"] == "2026-04-15" and now["transfer_id"] == "TRF-0018"
    later = ok(
        "send_payment",
        db,
        from_account_id="ACC-0701",
        payee_id="P-0008",
        amount=1850,
        payment_date="2026-05-01",
        memo="May rent",
    )
    # a scheduled payment does not touch the balance yet but is listed as scheduled
    assert later["status"] == "scheduled" and later["available_balance"] == 4980.12
    listed = ok("list_transfers", db, account_id="ACC-0701", status="scheduled")["transfers"]
    assert [(t["transfer_id"], t["memo"]) for t in listed] == [("TRF-0019", "May rent")]
    # a brand-new payee can still receive up to 1,000.00
    assert (
        ok("send_payment", db, from_account_id="ACC-0701", payee_id="P-0009", amount=1000)["amount"]
        == 1000.0
    )


def pay(account, payee, amount, payment_date=None):
    arguments = {"from_account_id": account, "payee_id": payee, "amount": amount}
    return arguments | ({"payment_date": payment_date} if payment_date else {})


@pytest.mark.parametrize(
    ("arguments", "code", "words"),
    [
        # payee added yesterday: capped at 1,000.00
        (pay("ACC-0701", "P-0009", 1500), POLICY, "capped"),
        # payee still waiting for its test deposits
        (pay("ACC-1001", "P-0012", 50), STATE, "pending"),
        # payee of another customer
        (pay("ACC-0101", "P-0008", 50), MISSING, "P-0008"),
        # payments only leave checking accounts
        (pay("ACC-0102", "P-0001", 50), REQ, "checking"),
        # frozen account
        (pay("ACC-0401", "P-0004", 600), STATE, "frozen"),
        # date in the past
        (pay("ACC-0101", "P-0001", 50, "2026-04-14"), REQ, "past"),
        # more than 90 days ahead
        (pay("ACC-0101", "P-0001", 50, "2026-07-20"), POLICY, "90 days"),
        # 432.10 already processing today on a 5,000.00 limit
        (pay("ACC-0501", "P-0006", 4600), POLICY, "daily payment limit"),
        # the same limit applies to a future day's scheduled total
        (pay("ACC-0201", "P-0003", 2700, "2026-05-01"), POLICY, "2400.00 already"),
        # insufficient funds for a payment today
        (pay("ACC-0301", "P-0016", 450), STATE, "insufficient"),
    ],
)
def test_send_payment_refusals(arguments, code, words):
    refused = error("send_payment", **arguments)
    assert refused["code"] == code and words in refused["message"]


def test_cancel_scheduled_payment():
    db = DOMAIN.database()
    out = ok("cancel_scheduled_payment", db, transfer_id="TRF-0010")
    assert (out["status"], out["payee_name"], out["amount"]) == ("cancelled", "Harbor Gym", 75.0)
    # the cancelled payment no longer shows as scheduled
    left = ok("list_transfers", db, account_id="ACC-1201", status="scheduled")["transfers"]
    assert [t["transfer_id"] for t in left] == ["TRF-0011"]
    # cancelling twice, a completed payment, one due today, an unknown id
    assert error("cancel_scheduled_payment", db, transfer_id="TRF-0010")["code"] == STATE
    assert error("cancel_scheduled_payment", transfer_id="TRF-0007")["code"] == STATE
    assert error("cancel_scheduled_payment", transfer_id="TRF-0009")["code"] == POLICY
    assert error("cancel_scheduled_payment", transfer_id="TRF-0999")["code"] == MISSING


def test_set_card_lock():
    db = DOMAIN.database()
    out = ok("set_card_lock", db, card_id="CARD-0011", locked=True, reason="misplaced")
    assert out == {
        "card_id": "CARD-0011",
        "last4": "0362",
        "status": "locked",
        "locked": True,
        "status_reason": "locked by the customer: misplaced",
    }
    assert ok("list_cards", db, customer_id="C1008")["cards"][0]["locked_by"] == "customer"
    # locking twice is refused; unlocking works
    assert error("set_card_lock", db, card_id="CARD-0011", locked=True)["code"] == STATE
    assert ok("set_card_lock", db, card_id="CARD-0011", locked=False)["status"] == "active"
    # Rosa locked her own credit card: she may unlock it
    assert ok("set_card_lock", card_id="CARD-0020", locked=False)["status"] == "active"
    # blocked after theft, expired, and bank-locked cards cannot be unlocked by the customer
    assert error("set_card_lock", card_id="CARD-0012", locked=False)["code"] == STATE
    assert error("set_card_lock", card_id="CARD-0009", locked=True)["code"] == STATE
    bank = error("set_card_lock", card_id="CARD-0005", locked=False)
    assert bank["code"] == POLICY and "fraud team" in bank["message"]


def test_request_card_replacement():
    db = DOMAIN.database()
    # premier customer: expedited at no fee; the lost card is blocked at once
    out = ok("request_card_replacement", db, card_id="CARD-0003", reason="lost", expedited=True)
    assert out == {
        "new_card_id": "CARD-0021",
        "new_card_last4": "8265",
        "replaced_card_id": "CARD-0003",
        "old_card_status": "blocked",
        "reason": "lost",
        "shipping": "expedited",
        "fee": 0.0,
        "estimated_delivery": "2026-04-17",
    }
    cards = ok("list_cards", db, customer_id="C1002")["cards"]
    assert [(c["card_id"], c["status"]) for c in cards] == [
        ("CARD-0003", "blocked"),
        ("CARD-0021", "ordered"),
    ]
    # a card has one replacement only
    assert (
        error("request_card_replacement", db, card_id="CARD-0003", reason="lost")["code"] == STATE
    )
    assert error("request_card_replacement", card_id="CARD-0012", reason="stolen")["code"] == STATE
    # standard customer pays 25.00 for expedited; a damaged card keeps working
    damaged = ok("request_card_replacement", card_id="CARD-0001", reason="damaged", expedited=True)
    assert (damaged["fee"], damaged["old_card_status"]) == (25.0, "active")
    standard = ok("request_card_replacement", card_id="CARD-0001", reason="damaged")
    assert (standard["fee"], standard["estimated_delivery"]) == (0.0, "2026-04-22")
    assert error("request_card_replacement", card_id="CARD-0009", reason="lost")["code"] == STATE


def test_open_transaction_dispute():
    db = DOMAIN.database()
    out = ok("open_transaction_dispute", db, transaction_id="TX-0003", reason="duplicate_charge")
    assert (out["dispute_id"], out["amount"], out["card_locked"]) == ("DSP-0003", 86.42, False)
    assert out["expected_resolution_by"] == "2026-05-30"
    found = ok("search_transactions", db, account_id="ACC-0101", merchant="bluebird")
    assert [t["disputed"] for t in found["transactions"]] == [True, False, False]
    # each transaction is disputed once
    assert (
        error("open_transaction_dispute", db, transaction_id="TX-0003", reason="unauthorized")[
            "code"
        ]
        == STATE
    )
    # pending charges, credits and charges older than 60 days are refused
    assert (
        error("open_transaction_dispute", transaction_id="TX-0001", reason="incorrect_amount")[
            "code"
        ]
        == STATE
    )
    assert (
        error("open_transaction_dispute", transaction_id="TX-0035", reason="unauthorized")["code"]
        == REQ
    )
    old = error(
        "open_transaction_dispute", transaction_id="TX-0013", reason="cancelled_subscription"
    )
    assert old["code"] == POLICY and old["days_since_transaction"] == 77
    # 47 days old is still inside the window
    assert ok("open_transaction_dispute", transaction_id="TX-0014", reason="cancelled_subscription")


def test_unauthorized_dispute_locks_the_card():
    db = DOMAIN.database()
    out = ok("open_transaction_dispute", db, transaction_id="TX-0043", reason="unauthorized")
    assert out["card_locked"] is True
    card = ok("list_cards", db, customer_id="C1014")["cards"][0]
    assert (card["status"], card["locked_by"]) == ("locked", "bank")
    # the customer cannot lift a lock the bank put on
    assert error("set_card_lock", db, card_id="CARD-0018", locked=False)["code"] == POLICY


# ------------------------------------------------------------- scenarios, templates
# test_packs.py runs every gold workflow; here, the rule each impossible one ends on.

IMPOSSIBLE_ENDS = {
    "banking-frozen-account-payment-impossible": STATE,
    "banking-old-charge-dispute-impossible": POLICY,
    "banking-savings-limit-impossible": POLICY,
}
TEMPLATE_IMPOSSIBLE_ENDS = {
    "savings_to_checking": POLICY,
    "lock_card": STATE,
    "pay_utility_bill": STATE,
    "cancel_scheduled_payment": POLICY,
    "dispute_charge": POLICY,
}


def test_impossible_scenarios_end_on_their_rule():
    assert helpers.scenario_ends(DOMAIN.name) == IMPOSSIBLE_ENDS


def test_impossible_templates_end_on_their_rule():
    ends = {template: {code} for template, code in TEMPLATE_IMPOSSIBLE_ENDS.items()}
    assert helpers.template_ends(DOMAIN.name) == ends
