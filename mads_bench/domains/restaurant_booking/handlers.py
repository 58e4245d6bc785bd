"""Handlers of the restaurant booking domain: one function per tool in tools.yaml.

The backend clock reads ``NOW`` on ``db.today``. A table is held for ``DINING_MINUTES``:
the seats left in an area at a seating time are its capacity minus the parties of active
reservations seated less than that long before or after it, and none during a blackout.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from mads_bench.database import Database, InvalidRequest, InvalidState, NotFound, PolicyViolation
from mads_bench.domains._shared import WEEKDAYS, card_expired, parse_date, to_hhmm, to_minutes

NOW = time(12, 0)
DINING_MINUTES = 120
SEATING_STEP_MINUTES = 30
ACTIVE = ("confirmed", "pending_deposit")
MAX_NO_SHOWS = 3
WAITLIST_DAYS_AHEAD = 7


# ----------------------------------------------------------------------- helpers


def _at(day: str, hhmm: str) -> datetime:
    return datetime.combine(parse_date(day), time(int(hhmm[:2]), int(hhmm[3:5])))


def _now(db: Database) -> datetime:
    return datetime.combine(db.today, NOW)


def _bookable(db: Database, restaurant_id: str) -> dict[str, Any]:
    restaurant = db.get("restaurants", restaurant_id)
    if not restaurant["accepts_reservations"]:
        raise PolicyViolation(f"{restaurant['name']} is walk-in only and takes no reservations")
    return restaurant


def _check_request(r: dict[str, Any], db: Database, day: str, party: int, area: str | None) -> None:
    """Date inside the booking window, party within the online limit, area that exists."""
    when = parse_date(day)
    if when < db.today:
        raise InvalidRequest(f"{day} is in the past")
    if (when - db.today).days > r["booking_window_days"]:
        window = r["booking_window_days"]
        raise PolicyViolation(f"{r['name']} takes bookings at most {window} days ahead")
    if party > r["max_party_size"]:
        raise PolicyViolation(
            f"{r['name']} takes parties of up to {r['max_party_size']} online; "
            f"larger groups must call {r['phone']}"
        )
    if area and area not in r["seating"]:
        raise InvalidRequest(f"{r['name']} has no {area} seating")


def _is_open(r: dict[str, Any], day: str) -> bool:
    return WEEKDAYS[parse_date(day).weekday()] in r["open_days"]


def _seating_times(r: dict[str, Any]) -> list[str]:
    times = []
    for service in r["services"]:
        first, last = to_minutes(service["first_seating"]), to_minutes(service["last_seating"])
        times += [to_hhmm(m) for m in range(first, last + 1, SEATING_STEP_MINUTES)]
    return times


def _seats_left(
    db: Database, r: dict[str, Any], day: str, hhmm: str, area: str, ignore: str | None = None
) -> int:
    for block in db.find("blackouts", restaurant_id=r["restaurant_id"], date=day):
        if block["area"] in ("all", area) and block["start_time"] <= hhmm < block["end_time"]:
            return 0
    taken = sum(
        res["party_size"]
        for res in db.find("reservations", restaurant_id=r["restaurant_id"], date=day)
        if res["status"] in ACTIVE
        and res["seating_area"] == area
        and res["reservation_id"] != ignore
        and abs(to_minutes(res["time"]) - to_minutes(hhmm)) < DINING_MINUTES
    )
    return r["seating"][area] - taken


def _check_seating(db: Database, r: dict[str, Any], day: str, hhmm: str) -> None:
    if not _is_open(r, day):
        raise InvalidRequest(f"{r['name']} is closed on {parse_date(day).strftime('%A')}s")
    if hhmm not in _seating_times(r):
        hours = ", ".join(f"{s['first_seating']}-{s['last_seating']}" for s in r["services"])
        raise InvalidRequest(f"{hhmm} is not a seating time at {r['name']} ({hours}, half-hourly)")
    if _at(day, hhmm) <= _now(db):
        raise InvalidRequest(f"the {hhmm} seating on {day} has already passed")


def _free_area(
    db: Database, r: dict[str, Any], day: str, hhmm: str, party: int, area: str | None,
    ignore: str | None = None,
) -> str:  # fmt: skip
    """The requested (or first) area with a table for the party; InvalidState with options."""
    areas = [area] if area else list(r["seating"])
    for candidate in areas:
        if _seats_left(db, r, day, hhmm, candidate, ignore) >= party:
            return candidate
    options = [
        t
        for t in _seating_times(r)
        if _at(day, t) > _now(db)
        and any(_seats_left(db, r, day, t, a, ignore) >= party for a in areas)
    ]
    where = f" in the {area} area" if area else ""
    raise InvalidState(
        f"no table for {party} at {hhmm} on {day}{where}", available_times=options[:6]
    )


def _check_guest(db: Database, phone: str, day: str, hhmm: str, ignore: str | None = None) -> None:
    for res in db.find("reservations", guest_phone=phone, date=day):
        near = abs(to_minutes(res["time"]) - to_minutes(hhmm)) < DINING_MINUTES
        if res["status"] in ACTIVE and res["reservation_id"] != ignore and near:
            raise InvalidState(
                f"{phone} already has reservation {res['reservation_id']} at "
                f"{res['restaurant_name']} at {res['time']} that day",
                reservation_id=res["reservation_id"],
            )


def _deposit_required(r: dict[str, Any], party: int) -> float:
    rule = r["deposit"]
    return float(rule["per_person"] * party) if rule and party >= rule["min_party"] else 0.0


def _active(db: Database, reservation_id: str) -> dict[str, Any]:
    res = db.get("reservations", reservation_id)
    if res["status"] not in ACTIVE:
        raise InvalidState(f"reservation {reservation_id} is {res['status'].replace('_', ' ')}")
    return res


def _check_cutoff(db: Database, res: dict[str, Any], r: dict[str, Any], action: str) -> None:
    hours = r["cancellation_cutoff_hours"]
    cutoff = _at(res["date"], res["time"]) - timedelta(hours=hours)
    if _now(db) >= cutoff:
        raise PolicyViolation(
            f"{r['name']} allows online {action} only until {hours} hours before the seating "
            f"({cutoff:%Y-%m-%d %H:%M}); please call {r['phone']}",
            deposit_paid=res["deposit_paid"],
        )


# ------------------------------------------------------------------------- reads


def search_restaurants(
    db: Database,
    city: str,
    cuisine: str | None = None,
    neighborhood: str | None = None,
    name: str | None = None,
    price_range: str | None = None,
    dietary_option: str | None = None,
    party_size: int | None = None,
) -> dict[str, Any]:
    words = (name or "").casefold().split()
    found = [
        r
        for r in db.find("restaurants", city=city, cuisine=cuisine, price_range=price_range)
        if (neighborhood or "").casefold() in r["neighborhood"].casefold()
        and all(w in r["name"].casefold() for w in words)
        and (dietary_option is None or dietary_option in r["dietary_options"])
        and (
            party_size is None or (r["accepts_reservations"] and party_size <= r["max_party_size"])
        )
    ]
    found.sort(key=lambda r: (-r["rating"], r["name"]))
    fields = ("restaurant_id", "name", "city", "neighborhood", "cuisine", "price_range", "rating",
              "accepts_reservations", "max_party_size", "dietary_options")  # fmt: skip
    restaurants = [{f: r[f] for f in fields} for r in found]
    return {"restaurants": restaurants, "count": len(restaurants)}


def get_restaurant_details(db: Database, restaurant_id: str) -> dict[str, Any]:
    return db.get("restaurants", restaurant_id)


def check_table_availability(
    db: Database,
    restaurant_id: str,
    date: str,
    party_size: int,
    seating_area: str | None = None,
    earliest_time: str = "00:00",
    latest_time: str = "23:30",
) -> dict[str, Any]:
    r = _bookable(db, restaurant_id)
    _check_request(r, db, date, party_size, seating_area)
    result = {"restaurant_id": restaurant_id, "date": date, "party_size": party_size}
    if not _is_open(r, date):
        return {**result, "open": False, "slots": []}
    slots = [
        {"time": t, "seating_area": area, "seats_left": left}
        for t in _seating_times(r)
        if earliest_time <= t <= latest_time and _at(date, t) > _now(db)
        for area in ([seating_area] if seating_area else list(r["seating"]))
        if (left := _seats_left(db, r, date, t, area)) >= party_size
    ]
    return {**result, "open": True, "slots": slots}


def get_restaurant_menu(
    db: Database, restaurant_id: str, dietary_tag: str | None = None, course: str | None = None
) -> dict[str, Any]:
    r = db.get("restaurants", restaurant_id)
    if not r["menu_online"]:
        raise NotFound(f"{r['name']} does not publish its menu online; call {r['phone']}")
    items = [
        {k: v for k, v in item.items() if k not in ("restaurant_id", "available")}
        for item in db.find("menu_items", restaurant_id=restaurant_id, course=course)
        if item["available"] and (dietary_tag is None or dietary_tag in item["dietary_tags"])
    ]
    return {"restaurant_id": restaurant_id, "items": items, "count": len(items)}


def get_reservation(db: Database, reservation_id: str) -> dict[str, Any]:
    return db.get("reservations", reservation_id)


def find_guest_reservations(
    db: Database, guest_phone: str, status: str | None = None
) -> dict[str, Any]:
    found = db.find("reservations", guest_phone=guest_phone, status=status)
    found.sort(key=lambda res: (res["date"], res["time"], res["reservation_id"]))
    return {"guest_phone": guest_phone, "reservations": found, "count": len(found)}


# ------------------------------------------------------------------------ writes


def create_reservation(
    db: Database,
    restaurant_id: str,
    date: str,
    time: str,
    party_size: int,
    guest_name: str,
    guest_phone: str,
    seating_area: str | None = None,
    occasion: str | None = None,
    special_requests: str = "",
) -> dict[str, Any]:
    r = _bookable(db, restaurant_id)
    _check_request(r, db, date, party_size, seating_area)
    _check_seating(db, r, date, time)
    profile = db.find("guests", phone=guest_phone)
    if profile and profile[0]["no_show_count"] >= MAX_NO_SHOWS:
        raise PolicyViolation(
            f"online booking is suspended for {guest_phone} after {MAX_NO_SHOWS} no-shows; "
            f"please call {r['name']} at {r['phone']}"
        )
    _check_guest(db, guest_phone, date, time)
    area = _free_area(db, r, date, time, party_size, seating_area)
    deposit = _deposit_required(r, party_size)
    return db.insert("reservations", {
        "reservation_id": db.next_id("reservations", "RB-"), "restaurant_id": restaurant_id,
        "restaurant_name": r["name"], "guest_name": guest_name, "guest_phone": guest_phone,
        "date": date, "time": time, "party_size": party_size, "seating_area": area,
        "status": "pending_deposit" if deposit else "confirmed", "occasion": occasion,
        "special_requests": special_requests, "deposit_due": deposit, "deposit_paid": 0.0,
        "created_on": db.today.isoformat(),
    })  # fmt: skip


def modify_reservation(
    db: Database,
    reservation_id: str,
    date: str | None = None,
    time: str | None = None,
    party_size: int | None = None,
    seating_area: str | None = None,
) -> dict[str, Any]:
    if date is None and time is None and party_size is None and seating_area is None:
        raise InvalidRequest("give a new date, time, party size or seating area")
    res = _active(db, reservation_id)
    r = db.get("restaurants", res["restaurant_id"])
    _check_cutoff(db, res, r, "changes")
    day, hhmm = date or res["date"], time or res["time"]
    party, area = party_size or res["party_size"], seating_area or res["seating_area"]
    _check_request(r, db, day, party, area)
    _check_seating(db, r, day, hhmm)
    _check_guest(db, res["guest_phone"], day, hhmm, ignore=reservation_id)
    _free_area(db, r, day, hhmm, party, area, ignore=reservation_id)
    due = max(_deposit_required(r, party) - res["deposit_paid"], 0.0)
    return db.update(
        "reservations", reservation_id, date=day, time=hhmm, party_size=party,
        seating_area=area, deposit_due=due, status="pending_deposit" if due else "confirmed",
    )  # fmt: skip


def cancel_reservation(db: Database, reservation_id: str, reason: str = "") -> dict[str, Any]:
    res = _active(db, reservation_id)
    _check_cutoff(db, res, db.get("restaurants", res["restaurant_id"]), "cancellation")
    db.update("reservations", reservation_id, status="cancelled", deposit_due=0.0)
    refund = res["deposit_paid"]
    return {"reservation_id": reservation_id, "status": "cancelled", "refund_amount": refund}


def pay_reservation_deposit(
    db: Database, reservation_id: str, card_last_four: str
) -> dict[str, Any]:
    res = db.get("reservations", reservation_id)
    if res["status"] != "pending_deposit":
        raise InvalidState(f"reservation {reservation_id} has no deposit due ({res['status']})")
    profile = db.find("guests", phone=res["guest_phone"])
    cards = [
        c
        for c in (profile[0]["saved_cards"] if profile else [])
        if c["last_four"] == card_last_four
    ]
    if not cards:
        raise NotFound(f"no saved card ending {card_last_four} for {res['guest_phone']}")
    if card_expired(db, cards[0]["expires"]):
        raise PolicyViolation(
            f"the {cards[0]['brand']} card ending {card_last_four} expired in "
            f"{cards[0]['expires']}; use another saved card"
        )
    amount, paid = res["deposit_due"], res["deposit_paid"] + res["deposit_due"]
    db.update(
        "reservations", reservation_id, status="confirmed", deposit_due=0.0, deposit_paid=paid
    )
    return {"reservation_id": reservation_id, "status": "confirmed", "amount_charged": amount,
            "card_last_four": card_last_four, "deposit_paid": paid}  # fmt: skip


def join_waitlist(
    db: Database,
    restaurant_id: str,
    date: str,
    preferred_time: str,
    party_size: int,
    guest_name: str,
    guest_phone: str,
) -> dict[str, Any]:
    r = _bookable(db, restaurant_id)
    if not r["waitlist_enabled"]:
        raise PolicyViolation(f"{r['name']} does not keep a waitlist")
    _check_request(r, db, date, party_size, None)
    if (parse_date(date) - db.today).days > WAITLIST_DAYS_AHEAD:
        raise PolicyViolation(f"the waitlist opens {WAITLIST_DAYS_AHEAD} days before the date")
    _check_seating(db, r, date, preferred_time)
    if any(_seats_left(db, r, date, preferred_time, a) >= party_size for a in r["seating"]):
        raise InvalidState(f"tables for {party_size} are still free at {preferred_time}; book one")
    waiting = db.find("waitlist", restaurant_id=restaurant_id, date=date, status="waiting")
    if any(w["guest_phone"] == guest_phone for w in waiting):
        raise InvalidState(f"{guest_phone} is already on the {r['name']} waitlist for {date}")
    return db.insert("waitlist", {
        "waitlist_id": db.next_id("waitlist", "WL-"), "restaurant_id": restaurant_id,
        "date": date, "preferred_time": preferred_time, "party_size": party_size,
        "guest_name": guest_name, "guest_phone": guest_phone, "status": "waiting",
        "position": len(waiting) + 1, "created_on": db.today.isoformat(),
    })  # fmt: skip


def update_special_requests(
    db: Database, reservation_id: str, special_requests: str, occasion: str | None = None
) -> dict[str, Any]:
    res = _active(db, reservation_id)
    if _at(res["date"], res["time"]) <= _now(db):
        raise InvalidState(f"reservation {reservation_id} has already started")
    changes = {"special_requests": special_requests}
    if occasion:
        changes["occasion"] = occasion
    return db.update("reservations", reservation_id, **changes)
