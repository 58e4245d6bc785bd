"""Handlers of the home-services domain: one function per tool in tools.yaml.

The rules a real dispatch and billing API enforces live here: the service area and which
technicians cover a zip code for a trade, booking from tomorrow up to 60 days ahead, no
double booking, overdue invoices blocking new regular work, two reschedules per visit, a
late-cancellation fee inside 48 hours, on-call dispatch for emergency services only, invoice
payment rules and a 90-day workmanship warranty.
"""

from __future__ import annotations

import re
from datetime import timedelta
from functools import partial
from typing import Any

from mads_bench.database import (
    Database,
    InvalidRequest,
    InvalidState,
    NotFound,
    PolicyViolation,
)
from mads_bench.domains._shared import VALID_ISO_DATE, card_expired, parse_date

TRIP_FEE = 35.0  # outer-zone visits; waived for plus members
MEMBER_DISCOUNT = 0.10  # plus members, on the base price
EMERGENCY_SURCHARGE = 150.0  # halved for plus members
LATE_CANCEL_FEE = 49.0
FREE_CANCEL_DAYS = 2  # cancelling a visit less than 48 hours ahead costs the fee
MAX_RESCHEDULES = 2
BOOKING_HORIZON_DAYS = 60
WARRANTY_DAYS = 90
MIN_PARTIAL_PAYMENT = 25.0
ETA_MINUTES = {"core": 60, "outer": 120}


# This pack's date refusals name the format.
_day = partial(parse_date, expected=VALID_ISO_DATE)


def _area(db: Database, zip_code: str) -> dict[str, Any]:
    try:
        return db.get("service_areas", zip_code)
    except NotFound:
        served = sorted(a["zip_code"] for a in db.find("service_areas"))
        raise PolicyViolation(
            f"zip code {zip_code} is outside our service area", served_zip_codes=served
        ) from None


def _covering(db: Database, service: dict[str, Any], zip_code: str) -> list[dict[str, Any]]:
    """Technicians who do this service's trade in this zip code; refuses if there are none."""
    _area(db, zip_code)
    techs = [
        t
        for t in db.find("technicians")
        if service["trade"] in t["trades"] and zip_code in t["service_zips"]
    ]
    if not techs:
        raise PolicyViolation(f"no {service['trade']} technicians serve zip code {zip_code}")
    return techs


def _quote(
    db: Database, service: dict, zip_code: str, customer: dict | None, emergency: bool = False
) -> dict[str, Any]:
    member = customer is not None and customer["membership"] == "plus"
    discount = round(service["base_price"] * MEMBER_DISCOUNT, 2) if member else 0.0
    trip = 0.0 if member or _area(db, zip_code)["zone"] == "core" else TRIP_FEE
    surcharge = (EMERGENCY_SURCHARGE / (2 if member else 1)) if emergency else 0.0
    return {
        "base_price": service["base_price"],
        "member_discount": discount,
        "trip_fee": trip,
        "emergency_surcharge": surcharge,
        "estimated_total": round(service["base_price"] - discount + trip + surcharge, 2),
    }


def _view(db: Database, appointment: dict[str, Any]) -> dict[str, Any]:
    service = db.get("service_types", appointment["service_code"])
    tech = db.get("technicians", appointment["technician_id"])
    return {**appointment, "service_name": service["name"], "technician_name": tech["name"]}


def _check_visit_date(db: Database, text: str) -> None:
    day = _day(text)
    if day <= db.today:
        raise InvalidRequest("regular visits start tomorrow; use emergency service if urgent")
    if day > db.today + timedelta(days=BOOKING_HORIZON_DAYS):
        raise InvalidRequest(f"the schedule is open {BOOKING_HORIZON_DAYS} days ahead")


def _open_slot(db: Database, slot_id: str, service: dict, zip_code: str) -> dict[str, Any]:
    """A slot the customer may take for this service, or the reason why not."""
    slot = db.get("slots", slot_id)
    if slot["status"] != "open":
        raise InvalidState(f"slot {slot_id} is no longer available")
    _check_visit_date(db, slot["date"])
    if slot["technician_id"] not in {t["technician_id"] for t in _covering(db, service, zip_code)}:
        raise InvalidRequest(
            f"technician {slot['technician_id']} does not do {service['name']} in {zip_code}"
        )
    return slot


def _check_no_clash(db: Database, customer_id: str, slot: dict, ignore: str = "") -> None:
    for other in db.find("appointments", customer_id=customer_id, status="scheduled"):
        same_time = (other["date"], other["start"]) == (slot["date"], slot["start"])
        if same_time and other["appointment_id"] != ignore:
            raise InvalidState(
                f"customer already has appointment {other['appointment_id']} on "
                f"{slot['date']} at {slot['start']}"
            )


def _take_slot(db: Database, appointment: dict, slot: dict) -> dict[str, Any]:
    db.update("slots", slot["slot_id"], status="booked")
    changes = {k: slot[k] for k in ("slot_id", "technician_id", "date", "start", "end")}
    return {**appointment, **changes}


# ----------------------------------------------------------------------------- reads


def lookup_service_account(db: Database, phone: str) -> dict[str, Any]:
    digits = re.sub(r"\D", "", phone)[-10:]
    for customer in db.find("customers"):
        if re.sub(r"\D", "", customer["phone"])[-10:] == digits:
            invoices = db.find("invoices", customer_id=customer["customer_id"])
            open_invoices = [
                {k: i[k] for k in ("invoice_id", "balance_due", "status", "due_on")}
                for i in invoices
                if i["status"] in ("unpaid", "overdue", "disputed")
            ]
            return {**customer, "open_invoices": open_invoices}
    raise NotFound(f"no customer with phone number {phone}")


def list_service_types(db: Database, trade: str | None = None) -> dict[str, Any]:
    services = db.find("service_types", trade=trade)
    return {"services": services, "count": len(services)}


def estimate_service_cost(
    db: Database, service_code: str, zip_code: str, customer_id: str | None = None
) -> dict[str, Any]:
    service = db.get("service_types", service_code)
    customer = db.get("customers", customer_id) if customer_id else None
    _covering(db, service, zip_code)
    return {
        "service_code": service_code,
        "service_name": service["name"],
        "zip_code": zip_code,
        "zone": _area(db, zip_code)["zone"],
        "duration_hours": service["duration_hours"],
        **_quote(db, service, zip_code, customer),
    }


def find_available_technicians(
    db: Database, service_code: str, zip_code: str, date: str
) -> dict[str, Any]:
    service = db.get("service_types", service_code)
    techs = _covering(db, service, zip_code)
    _check_visit_date(db, date)
    found = []
    for tech in sorted(techs, key=lambda t: -t["rating"]):
        slots = db.find("slots", technician_id=tech["technician_id"], date=date, status="open")
        if slots:
            windows = [{k: s[k] for k in ("slot_id", "start", "end")} for s in slots]
            found.append(
                {
                    "technician_id": tech["technician_id"],
                    "name": tech["name"],
                    "rating": tech["rating"],
                    "years_experience": tech["years_experience"],
                    "slots": sorted(windows, key=lambda s: s["start"]),
                }
            )
    return {
        "service_code": service_code,
        "zip_code": zip_code,
        "date": date,
        "technicians": found,
        "count": len(found),
    }


def list_service_appointments(
    db: Database, customer_id: str, status: str | None = None
) -> dict[str, Any]:
    db.get("customers", customer_id)
    found = [_view(db, a) for a in db.find("appointments", customer_id=customer_id, status=status)]
    found.sort(key=lambda a: (a["date"], a["start"] or ""))
    return {"appointments": found, "count": len(found)}


def get_service_invoice(db: Database, invoice_id: str) -> dict[str, Any]:
    invoice = db.get("invoices", invoice_id)
    appointment = db.get("appointments", invoice["appointment_id"])
    service = db.get("service_types", appointment["service_code"])
    return {**invoice, "service_name": service["name"], "service_date": appointment["date"]}


# ---------------------------------------------------------------------------- writes


def book_service_appointment(
    db: Database, customer_id: str, service_code: str, slot_id: str, notes: str = ""
) -> dict[str, Any]:
    customer = db.get("customers", customer_id)
    service = db.get("service_types", service_code)
    overdue = db.find("invoices", customer_id=customer_id, status="overdue")
    if overdue:
        raise PolicyViolation(
            f"invoice {overdue[0]['invoice_id']} is overdue ({overdue[0]['balance_due']:.2f}); "
            "it must be paid before new work is booked"
        )
    slot = _open_slot(db, slot_id, service, customer["zip_code"])
    _check_no_clash(db, customer_id, slot)
    appointment = _take_slot(
        db,
        {
            "appointment_id": db.next_id("appointments", "A-5", width=3),
            "customer_id": customer_id,
            "service_code": service_code,
            "status": "scheduled",
            "emergency": False,
            "price_quote": _quote(db, service, customer["zip_code"], customer)["estimated_total"],
            "reschedule_count": 0,
            "completed_on": None,
            "booked_on": db.today.isoformat(),
            "notes": notes,
        },
        slot,
    )
    return _view(db, db.insert("appointments", appointment))


def reschedule_service_appointment(
    db: Database, appointment_id: str, new_slot_id: str
) -> dict[str, Any]:
    appointment = db.get("appointments", appointment_id)
    if appointment["status"] != "scheduled":
        raise InvalidState(f"appointment {appointment_id} is {appointment['status']}")
    if appointment["reschedule_count"] >= MAX_RESCHEDULES:
        raise PolicyViolation(
            f"an appointment can be rescheduled at most {MAX_RESCHEDULES} times; "
            f"{appointment_id} already was"
        )
    if _day(appointment["date"]) <= db.today:
        raise PolicyViolation("a visit cannot be moved on its own day; cancel it instead")
    customer = db.get("customers", appointment["customer_id"])
    service = db.get("service_types", appointment["service_code"])
    slot = _open_slot(db, new_slot_id, service, customer["zip_code"])
    _check_no_clash(db, customer["customer_id"], slot, ignore=appointment_id)
    db.update("slots", appointment["slot_id"], status="open")
    moved = _take_slot(db, appointment, slot)
    moved["reschedule_count"] += 1
    db.update("appointments", appointment_id, **moved)
    return {**_view(db, moved), "reschedules_left": MAX_RESCHEDULES - moved["reschedule_count"]}


def cancel_service_appointment(
    db: Database, appointment_id: str, reason: str | None = None
) -> dict[str, Any]:
    appointment = db.get("appointments", appointment_id)
    if appointment["status"] == "en_route":
        raise InvalidState(
            "the technician is already on the way; the visit can no longer be cancelled"
        )
    if appointment["status"] != "scheduled":
        raise InvalidState(f"appointment {appointment_id} is {appointment['status']}")
    days_ahead = (_day(appointment["date"]) - db.today).days
    fee = LATE_CANCEL_FEE if days_ahead < FREE_CANCEL_DAYS else 0.0
    db.update("slots", appointment["slot_id"], status="open")
    db.update("appointments", appointment_id, status="cancelled", cancellation_fee=fee)
    return {
        "appointment_id": appointment_id,
        "status": "cancelled",
        "cancellation_fee": fee,
        "reason": reason,
    }


def request_emergency_service(
    db: Database, customer_id: str, service_code: str, issue_description: str
) -> dict[str, Any]:
    customer = db.get("customers", customer_id)
    service = db.get("service_types", service_code)
    if not service["emergency_eligible"]:
        raise PolicyViolation(
            f"{service['name']} is not an emergency service; book a regular visit instead"
        )
    zip_code, today = customer["zip_code"], db.today.isoformat()
    busy = {a["technician_id"] for a in db.find("appointments", emergency=True, date=today)}
    on_call = [
        t
        for t in _covering(db, service, zip_code)
        if t["on_call"] and t["technician_id"] not in busy
    ]
    if not on_call:
        raise InvalidState(
            f"no on-call {service['trade']} technician is free for {zip_code} right now; "
            "the earliest regular visit is tomorrow"
        )
    quote = _quote(db, service, zip_code, customer, emergency=True)
    appointment = db.insert(
        "appointments",
        {
            "appointment_id": db.next_id("appointments", "A-5", width=3),
            "customer_id": customer_id,
            "service_code": service_code,
            "technician_id": on_call[0]["technician_id"],
            "slot_id": None,
            "date": today,
            "start": None,
            "end": None,
            "status": "en_route",
            "emergency": True,
            "price_quote": quote["estimated_total"],
            "reschedule_count": 0,
            "completed_on": None,
            "booked_on": today,
            "notes": issue_description,
        },
    )
    eta = ETA_MINUTES[_area(db, zip_code)["zone"]]
    return {
        **_view(db, appointment),
        "eta_minutes": eta,
        "emergency_surcharge": quote["emergency_surcharge"],
    }


def pay_service_invoice(
    db: Database, invoice_id: str, payment_method: str, amount: float
) -> dict[str, Any]:
    invoice = db.get("invoices", invoice_id)
    if invoice["status"] == "paid":
        raise InvalidState(f"invoice {invoice_id} is already paid")
    if invoice["status"] == "disputed":
        raise InvalidState(f"invoice {invoice_id} is under dispute; payment is on hold")
    method = db.get("customers", invoice["customer_id"])[payment_method]
    if method is None:
        raise InvalidRequest(f"no {payment_method.replace('_', ' ')} for this customer")
    if "expires" in method and card_expired(db, method["expires"]):
        raise InvalidState(f"the card ending {method['last4']} expired in {method['expires']}")
    balance = invoice["balance_due"]
    if amount > balance:
        raise InvalidRequest(f"amount exceeds the balance due of {balance:.2f}")
    if amount < MIN_PARTIAL_PAYMENT and amount != balance:
        raise PolicyViolation(f"partial payments must be at least {MIN_PARTIAL_PAYMENT:.2f}")
    left = round(balance - amount, 2)
    payments = invoice["payments"] + [
        {"amount": amount, "method": payment_method, "date": db.today.isoformat()}
    ]
    status = "paid" if left == 0 else invoice["status"]
    db.update("invoices", invoice_id, balance_due=left, status=status, payments=payments)
    return {
        "invoice_id": invoice_id,
        "amount_paid": amount,
        "balance_due": left,
        "status": status,
        "payment_method": payment_method,
        "confirmation": f"PAY-{invoice_id[-4:]}-{len(payments)}",
    }


def file_warranty_claim(
    db: Database, appointment_id: str, issue_description: str
) -> dict[str, Any]:
    appointment = db.get("appointments", appointment_id)
    if appointment["status"] != "completed":
        raise InvalidState(
            f"appointment {appointment_id} is {appointment['status']}, not completed"
        )
    ends = _day(appointment["completed_on"]) + timedelta(days=WARRANTY_DAYS)
    if db.today > ends:
        raise PolicyViolation(
            f"the {WARRANTY_DAYS}-day workmanship warranty for {appointment_id} ended on "
            f"{ends.isoformat()}"
        )
    if db.find("warranty_claims", appointment_id=appointment_id, status="open"):
        raise InvalidState(f"a warranty claim for {appointment_id} is already open")
    claim = db.insert(
        "warranty_claims",
        {
            "claim_id": db.next_id("warranty_claims", "WC-", width=4),
            "appointment_id": appointment_id,
            "customer_id": appointment["customer_id"],
            "issue": issue_description,
            "status": "open",
            "filed_on": db.today.isoformat(),
        },
    )
    return {
        **claim,
        "warranty_until": ends.isoformat(),
        "next_step": "a technician will call within one business day to book a free return visit",
    }
