"""The home-services pack: tools against the seed data and business rules.

Scenarios, task templates and the pack's shape are checked in test_packs.py."""

from functools import partial

import pytest

from tests.domains import helpers

call = partial(helpers.call, "home_services")
error_code = partial(helpers.error_code, "home_services")


# -------------------------------------------------------------------- refusals

DMITRI = {"customer_id": "C-2008"}
REFUSALS = [
    # lookups of unknown records
    ("lookup_service_account", {"phone": "503-555-0199"}, "not_found"),
    ("estimate_service_cost", {"service_code": "roof_repair", "zip_code": "97202"}, "not_found"),
    ("list_service_appointments", {"customer_id": "C-9999"}, "not_found"),
    ("get_service_invoice", {"invoice_id": "INV-9999"}, "not_found"),
    ("cancel_service_appointment", {"appointment_id": "A-9999"}, "not_found"),
    # service area: unserved zip code, and a served zip code without a technician of the trade
    (
        "estimate_service_cost",
        {"service_code": "ac_tune_up", "zip_code": "97124"},
        "policy_violation",
    ),
    (
        "estimate_service_cost",
        {"service_code": "washer_repair", "zip_code": "98660"},
        "policy_violation",
    ),
    (
        "find_available_technicians",
        {"service_code": "ac_tune_up", "zip_code": "97124", "date": "2026-04-23"},
        "policy_violation",
    ),
    # regular visits: from tomorrow, at most 60 days ahead, real calendar dates
    (
        "find_available_technicians",
        {"service_code": "ac_tune_up", "zip_code": "97214", "date": "2026-04-20"},
        "invalid_request",
    ),
    (
        "find_available_technicians",
        {"service_code": "ac_tune_up", "zip_code": "97214", "date": "2026-06-30"},
        "invalid_request",
    ),
    (
        "find_available_technicians",
        {"service_code": "ac_tune_up", "zip_code": "97214", "date": "2026-04-31"},
        "invalid_request",
    ),
    # booking: overdue invoice, slot taken, technician not covering the zip, wrong trade
    (
        "book_service_appointment",
        {"customer_id": "C-2013", "service_code": "drain_clearing", "slot_id": "S-1001"},
        "policy_violation",
    ),
    (
        "book_service_appointment",
        {"customer_id": "C-2001", "service_code": "leak_repair", "slot_id": "S-1003"},
        "invalid_state",
    ),
    (
        "book_service_appointment",
        {"customer_id": "C-2003", "service_code": "outlet_install", "slot_id": "S-1011"},
        "invalid_request",
    ),
    (
        "book_service_appointment",
        {"customer_id": "C-2008", "service_code": "ac_tune_up", "slot_id": "S-1011"},
        "invalid_request",
    ),
    # booking: the customer already has a visit at that time; customer outside the area
    (
        "book_service_appointment",
        {"customer_id": "C-2001", "service_code": "washer_repair", "slot_id": "S-1034"},
        "invalid_state",
    ),
    (
        "book_service_appointment",
        {"customer_id": "C-2014", "service_code": "ac_tune_up", "slot_id": "S-1021"},
        "policy_violation",
    ),
    # reschedule: two reschedules used, visit completed or under way, slot taken
    (
        "reschedule_service_appointment",
        {"appointment_id": "A-5003", "new_slot_id": "S-1019"},
        "policy_violation",
    ),
    (
        "reschedule_service_appointment",
        {"appointment_id": "A-5005", "new_slot_id": "S-1021"},
        "invalid_state",
    ),
    (
        "reschedule_service_appointment",
        {"appointment_id": "A-5004", "new_slot_id": "S-1028"},
        "invalid_state",
    ),
    (
        "reschedule_service_appointment",
        {"appointment_id": "A-5008", "new_slot_id": "S-1013"},
        "invalid_state",
    ),
    # cancel: technician on the way, job completed
    ("cancel_service_appointment", {"appointment_id": "A-5004"}, "invalid_state"),
    ("cancel_service_appointment", {"appointment_id": "A-5005"}, "invalid_state"),
    # emergency: service not emergency-eligible, no on-call plumber covers Cedar Mill
    (
        "request_emergency_service",
        {**DMITRI, "service_code": "tv_mounting", "issue_description": "TV fell off"},
        "policy_violation",
    ),
    (
        "request_emergency_service",
        {"customer_id": "C-2003", "service_code": "leak_repair", "issue_description": "water leak"},
        "invalid_state",
    ),
    # pay: already paid, disputed, expired card, no bank account, too much, partial under 25
    (
        "pay_service_invoice",
        {"invoice_id": "INV-3002", "payment_method": "card_on_file", "amount": 10.0},
        "invalid_state",
    ),
    (
        "pay_service_invoice",
        {"invoice_id": "INV-3007", "payment_method": "card_on_file", "amount": 110.0},
        "invalid_state",
    ),
    (
        "pay_service_invoice",
        {"invoice_id": "INV-3003", "payment_method": "card_on_file", "amount": 139.0},
        "invalid_state",
    ),
    (
        "pay_service_invoice",
        {"invoice_id": "INV-3001", "payment_method": "bank_account_on_file", "amount": 149.0},
        "invalid_request",
    ),
    (
        "pay_service_invoice",
        {"invoice_id": "INV-3001", "payment_method": "card_on_file", "amount": 150.0},
        "invalid_request",
    ),
    (
        "pay_service_invoice",
        {"invoice_id": "INV-3001", "payment_method": "card_on_file", "amount": 20.0},
        "policy_violation",
    ),
    # warranty: 90 days over, job not completed, a claim already open
    (
        "file_warranty_claim",
        {"appointment_id": "A-5006", "issue_description": "leaking tank"},
        "policy_violation",
    ),
    (
        "file_warranty_claim",
        {"appointment_id": "A-5001", "issue_description": "still drips"},
        "invalid_state",
    ),
    (
        "file_warranty_claim",
        {"appointment_id": "A-5009", "issue_description": "still squeaks"},
        "invalid_state",
    ),
]


@pytest.mark.parametrize(("tool", "arguments", "code"), REFUSALS)
def test_refusals(tool, arguments, code):
    assert error_code(tool, **arguments) == code


# ----------------------------------------------------------------------- reads


def test_lookup_service_account_any_phone_format():
    ok, customer, _ = call("lookup_service_account", phone="(503) 555-0112")
    assert ok and customer["customer_id"] == "C-2013" and customer["zip_code"] == "97217"
    assert customer["open_invoices"] == [
        {
            "invoice_id": "INV-3003",
            "balance_due": 139.0,
            "status": "overdue",
            "due_on": "2026-03-14",
        }
    ]
    assert call("lookup_service_account", phone="+1 503 555 0142")[1]["name"] == "Tomasz Nowak"


def test_list_service_types():
    ok, listed, _ = call("list_service_types", trade="hvac")
    assert ok and [s["service_code"] for s in listed["services"]] == [
        "ac_tune_up",
        "furnace_repair",
    ]
    assert call("list_service_types")[1]["count"] == 15


def test_estimate_service_cost():
    # plus member: 10% off, no trip fee
    ok, quote, _ = call(
        "estimate_service_cost", service_code="leak_repair", zip_code="97202", customer_id="C-2001"
    )
    assert ok and quote["member_discount"] == 16.5 and quote["estimated_total"] == 148.5
    # outer zone without membership: 35 trip fee
    ok, quote, _ = call("estimate_service_cost", service_code="drain_clearing", zip_code="98660")
    assert quote["zone"] == "outer" and quote["trip_fee"] == 35.0
    assert quote["estimated_total"] == 174.0


def test_find_available_technicians():
    ok, found, _ = call(
        "find_available_technicians", service_code="ac_tune_up", zip_code="97214", date="2026-04-23"
    )
    assert ok and [t["technician_id"] for t in found["technicians"]] == ["T-105"]
    assert [s["slot_id"] for s in found["technicians"][0]["slots"]] == ["S-1021", "S-1022"]
    # best rated first; booked windows are not offered
    ok, found, _ = call(
        "find_available_technicians",
        service_code="leak_repair",
        zip_code="97205",
        date="2026-04-22",
    )
    assert [t["technician_id"] for t in found["technicians"]] == ["T-101", "T-102"]
    assert [s["start"] for s in found["technicians"][0]["slots"]] == ["08:00", "10:00"]


def test_list_service_appointments():
    ok, listed, _ = call("list_service_appointments", customer_id="C-2012")
    assert ok and [a["appointment_id"] for a in listed["appointments"]] == ["A-5017", "A-5011"]
    assert listed["appointments"][1]["technician_name"] == "Chantal Baptiste"
    scheduled = call("list_service_appointments", customer_id="C-2012", status="scheduled")[1]
    assert scheduled["count"] == 1


def test_get_invoice():
    ok, invoice, _ = call("get_service_invoice", invoice_id="INV-3006")
    assert (
        ok and invoice["balance_due"] == 152.0 and invoice["service_name"] == "Deep house cleaning"
    )
    assert len(invoice["payments"]) == 1


# ---------------------------------------------------------------------- writes


def test_book_service_appointment():
    ok, booked, db = call(
        "book_service_appointment",
        customer_id="C-2002",
        service_code="ac_tune_up",
        slot_id="S-1021",
        notes="side gate code 4512",
    )
    assert ok and booked["appointment_id"] == "A-5018" and booked["price_quote"] == 119.0
    assert (booked["technician_id"], booked["date"], booked["start"]) == (
        "T-105",
        "2026-04-23",
        "08:00",
    )
    # the slot is taken and the visit shows up in the customer's list
    assert db.get("slots", "S-1021")["status"] == "booked"
    listed = call("list_service_appointments", db, customer_id="C-2002", status="scheduled")[1]
    assert [a["appointment_id"] for a in listed["appointments"]] == ["A-5018"]
    again = {"customer_id": "C-2009", "service_code": "ac_tune_up", "slot_id": "S-1021"}
    assert error_code("book_service_appointment", db, **again) == "invalid_state"


def test_reschedule_appointment():
    ok, moved, db = call(
        "reschedule_service_appointment", appointment_id="A-5011", new_slot_id="S-1036"
    )
    assert ok and moved["date"] == "2026-04-24" and moved["start"] == "13:00"
    assert moved["reschedule_count"] == 2 and moved["reschedules_left"] == 0
    # the old window is free again, the new one taken; a third move is refused
    assert db.get("slots", "S-1035")["status"] == "open"
    assert db.get("slots", "S-1036")["status"] == "booked"
    third = {"appointment_id": "A-5011", "new_slot_id": "S-1037"}
    assert error_code("reschedule_service_appointment", db, **third) == "policy_violation"
    # a visit cannot be moved on its own day
    db.update("appointments", "A-5001", date="2026-04-20")
    same_day = {"appointment_id": "A-5001", "new_slot_id": "S-1004"}
    assert error_code("reschedule_service_appointment", db, **same_day) == "policy_violation"


def test_cancel_appointment_fees():
    # 23 April is three days away: free
    ok, out, db = call(
        "cancel_service_appointment", appointment_id="A-5001", reason="fixed it myself"
    )
    assert ok and out["cancellation_fee"] == 0.0 and out["reason"] == "fixed it myself"
    assert db.get("slots", "S-1005")["status"] == "open"
    assert error_code("cancel_service_appointment", db, appointment_id="A-5001") == "invalid_state"
    # tomorrow's visit: inside 48 hours, 49 fee
    assert (
        call("cancel_service_appointment", appointment_id="A-5002")[1]["cancellation_fee"] == 49.0
    )


def test_request_emergency_service():
    pipe = {"service_code": "burst_pipe_repair", "issue_description": "pipe burst under sink"}
    ok, job, db = call("request_emergency_service", customer_id="C-2005", **pipe)
    assert ok and job["technician_id"] == "T-101" and job["status"] == "en_route"
    assert job["price_quote"] == 445.0 and job["eta_minutes"] == 60
    # the only on-call plumber for the core zone is now busy
    leak = {"service_code": "leak_repair", "issue_description": "ceiling is dripping"}
    assert error_code("request_emergency_service", db, customer_id="C-2001", **leak) == (
        "invalid_state"
    )
    # plus members pay half the surcharge; an overdue invoice does not block an emergency
    heat = {"service_code": "furnace_repair", "issue_description": "no heat at all"}
    ok, job, _ = call("request_emergency_service", customer_id="C-2001", **heat)
    assert job["emergency_surcharge"] == 75.0 and job["price_quote"] == 295.5
    assert call("request_emergency_service", customer_id="C-2013", **leak)[0]


def test_pay_invoice_partial_then_full():
    ok, paid, db = call(
        "pay_service_invoice", invoice_id="INV-3006", payment_method="card_on_file", amount=52.0
    )
    assert ok and paid["balance_due"] == 100.0 and paid["status"] == "unpaid"
    ok, paid, db = call(
        "pay_service_invoice",
        db,
        invoice_id="INV-3006",
        payment_method="bank_account_on_file",
        amount=100.0,
    )
    assert paid["status"] == "paid" and paid["confirmation"] == "PAY-3006-3"
    assert call("get_service_invoice", db, invoice_id="INV-3006")[1]["balance_due"] == 0.0


def test_paying_overdue_invoice_unblocks_booking():
    ok, paid, db = call(
        "pay_service_invoice",
        invoice_id="INV-3003",
        payment_method="bank_account_on_file",
        amount=139.0,
    )
    assert ok and paid["status"] == "paid"
    drain = {"customer_id": "C-2013", "service_code": "drain_clearing", "slot_id": "S-1001"}
    assert call("book_service_appointment", db, **drain)[1]["price_quote"] == 139.0


def test_file_warranty_claim():
    ok, claim, db = call(
        "file_warranty_claim",
        appointment_id="A-5005",
        issue_description="furnace short-cycles again",
    )
    assert ok and claim["claim_id"] == "WC-0002" and claim["warranty_until"] == "2026-05-31"
    assert db.get("warranty_claims", "WC-0002")["status"] == "open"
    again = {"appointment_id": "A-5005", "issue_description": "still broken"}
    assert error_code("file_warranty_claim", db, **again) == "invalid_state"
