"""Handlers of the travel domain: one function per tool in tools.yaml.

Fares in the seed are standard fares; basic economy is cheaper, flex dearer. The rules a
real agency API enforces live here: seat inventory, passport validity, group size,
change and cancellation rules per fare type, baggage limits and hotel stay rules.
"""

from __future__ import annotations

from datetime import date, timedelta
from functools import partial
from typing import Any

from mads_bench.database import (
    Database,
    InvalidRequest,
    InvalidState,
    NotFound,
    PolicyViolation,
)
from mads_bench.domains._shared import VALID_ISO_DATE, parse_date, pick, to_hhmm, to_minutes

MAX_PASSENGERS = 9
BASIC_DISCOUNT = 60.0  # basic economy = standard economy fare minus this
FLEX_MARKUP = 1.3
CHANGE_FEE = 75.0  # per passenger, standard fares
CANCEL_FEE = 100.0  # per passenger, kept from the travel credit of standard fares
BAG_FEE = 50.0  # per checked bag beyond the allowance
MAX_BAGS_PER_PASSENGER = 3
INCLUDED_BAGS = {"basic": 0, "standard": 1, "flex": 1}
PREMIUM_CABIN_BAGS = 2  # premium economy and business, any fare
PASSPORT_MARGIN_DAYS = 182  # passports must stay valid ~6 months after an international flight
MAX_NIGHTS = 30
SUMMARY_FIELDS = (
    "flight_id flight_number airline origin destination date depart_time arrive_time "
    "arrives_next_day duration_minutes stops via status fares seats_left"
).split()


# This pack's date refusals name the format.
_day = partial(parse_date, expected=VALID_ISO_DATE)


def _summary(flight: dict[str, Any]) -> dict[str, Any]:
    return pick(flight, *SUMMARY_FIELDS)


def _fare(flight: dict[str, Any], cabin: str, fare_type: str) -> float:
    """Per-passenger price of a cabin and fare type on a flight."""
    if cabin not in flight["fares"]:
        raise InvalidRequest(
            f"{flight['flight_number']} has no {cabin} cabin", cabins=sorted(flight["fares"])
        )
    standard = flight["fares"][cabin]
    if fare_type == "basic":
        if cabin != "economy":
            raise InvalidRequest("basic fares are sold in economy only")
        return standard - BASIC_DISCOUNT
    return round(standard * FLEX_MARKUP, 2) if fare_type == "flex" else standard


def _move_seats(db: Database, flight: dict[str, Any], cabin: str, count: int) -> None:
    """Take ``count`` seats (negative: release them) in a cabin of a flight."""
    seats = dict(flight["seats_left"])
    if seats.get(cabin, 0) < count:
        raise InvalidState(
            f"only {seats.get(cabin, 0)} {cabin} seats left on {flight['flight_id']}",
            seats_left=seats.get(cabin, 0),
        )
    seats[cabin] = seats.get(cabin, 0) - count
    db.update("flights", flight["flight_id"], seats_left=seats)


def _confirmed_booking(db: Database, booking_ref: str) -> tuple[dict, dict]:
    booking = db.get("bookings", booking_ref)
    if booking["status"] != "confirmed":
        raise InvalidState(f"booking {booking_ref} is {booking['status']}")
    return booking, db.get("flights", booking["flight_id"])


def _included_bags(db: Database, booking: dict[str, Any]) -> int:
    per_passenger = (
        PREMIUM_CABIN_BAGS if booking["cabin"] != "economy" else INCLUDED_BAGS[booking["fare_type"]]
    )
    if db.get("travelers", booking["traveler_id"])["loyalty_tier"] == "gold":
        per_passenger += 1
    return per_passenger * len(booking["passengers"])


def _nights(check_in: str, check_out: str, today: date) -> list[str]:
    start, end = _day(check_in), _day(check_out)
    if start < today:
        raise InvalidRequest(f"check-in {check_in} is in the past")
    if end <= start:
        raise InvalidRequest("check-out must be after check-in")
    if (end - start).days > MAX_NIGHTS:
        raise PolicyViolation(f"stays are limited to {MAX_NIGHTS} nights per reservation")
    return [(start + timedelta(days=n)).isoformat() for n in range((end - start).days)]


def _cancellation_deadline(hotel: dict[str, Any], check_in: str) -> str:
    return (_day(check_in) - timedelta(days=hotel["free_cancellation_days"])).isoformat()


# ------------------------------------------------------------------------- flights


def search_flights(
    db: Database,
    origin: str,
    destination: str,
    date: str,
    passengers: int = 1,
    cabin: str | None = None,
    max_stops: int | None = None,
) -> dict[str, Any]:
    if origin.upper() == destination.upper():
        raise InvalidRequest("origin and destination must differ")
    if _day(date) < db.today:
        raise InvalidRequest(f"{date} is in the past; today is {db.today.isoformat()}")
    found = []
    for flight in db.find("flights", origin=origin, destination=destination, date=date):
        cabins = [cabin] if cabin else list(flight["fares"])
        if flight["status"] == "cancelled" or (
            max_stops is not None and flight["stops"] > max_stops
        ):
            continue
        if any(flight["seats_left"].get(c, 0) >= passengers for c in cabins):
            found.append(_summary(flight))
    found.sort(key=lambda f: f["depart_time"])
    return {"flights": found, "count": len(found)}


def get_flight_status(db: Database, flight_number: str, date: str) -> dict[str, Any]:
    matches = db.find("flights", flight_number=flight_number, date=date)
    if not matches:
        raise NotFound(f"no flight {flight_number} on {date}")
    flight = matches[0]
    estimated = (to_minutes(flight["depart_time"]) + flight["delay_minutes"]) % (24 * 60)
    fields = "flight_number airline date origin destination status delay_minutes gate"
    return {
        **pick(flight, *fields.split()),
        "scheduled_departure": flight["depart_time"],
        "scheduled_arrival": flight["arrive_time"],
        "estimated_departure": None if flight["status"] == "cancelled" else to_hhmm(estimated),
    }


def get_flight_booking(db: Database, booking_ref: str, last_name: str) -> dict[str, Any]:
    booking = db.get("bookings", booking_ref)
    if booking["contact_last_name"].casefold() != last_name.strip().casefold():
        raise InvalidRequest(f"last name does not match booking {booking_ref}")
    flight = db.get("flights", booking["flight_id"])
    return {**booking, "flight": _summary(flight), "included_bags": _included_bags(db, booking)}


def get_traveler_profile(db: Database, traveler_id: str) -> dict[str, Any]:
    traveler = db.get("travelers", traveler_id)
    trips = [
        {**pick(b, "booking_ref", "flight_id"), "date": db.get("flights", b["flight_id"])["date"]}
        for b in db.find("bookings", traveler_id=traveler_id, status="confirmed")
    ]
    stays = [
        pick(r, "reservation_id", "hotel_id", "check_in", "check_out")
        for r in db.find("hotel_reservations", traveler_id=traveler_id, status="confirmed")
    ]
    trips.sort(key=lambda t: t["date"])
    return {**traveler, "upcoming_bookings": trips, "upcoming_stays": stays}


def book_flight(
    db: Database,
    flight_id: str,
    traveler_id: str,
    cabin: str,
    passenger_names: list[str],
    fare_type: str = "standard",
    use_travel_credit: bool = False,
) -> dict[str, Any]:
    traveler = db.get("travelers", traveler_id)
    flight = db.get("flights", flight_id)
    if flight["status"] == "cancelled":
        raise InvalidState(f"flight {flight_id} is cancelled")
    if _day(flight["date"]) < db.today or flight["status"] in ("departed", "landed"):
        raise InvalidState(f"flight {flight_id} has already departed")
    if len(passenger_names) > MAX_PASSENGERS:
        raise PolicyViolation(
            f"online bookings take at most {MAX_PASSENGERS} passengers; larger groups go "
            "through the group desk"
        )
    price = _fare(flight, cabin, fare_type)
    needed = _day(flight["date"]) + timedelta(days=PASSPORT_MARGIN_DAYS)
    if flight["international"] and _day(traveler["passport_expiry"]) < needed:
        raise PolicyViolation(
            f"passport expires {traveler['passport_expiry']}; international travel needs it "
            f"valid until at least {needed.isoformat()}"
        )
    if db.find("bookings", traveler_id=traveler_id, flight_id=flight_id, status="confirmed"):
        raise InvalidState(f"traveler {traveler_id} already has a booking on {flight_id}")
    _move_seats(db, flight, cabin, len(passenger_names))
    total = round(price * len(passenger_names), 2)
    credit = min(traveler["travel_credit"], total) if use_travel_credit else 0.0
    db.update("travelers", traveler_id, travel_credit=round(traveler["travel_credit"] - credit, 2))
    booking = db.insert(
        "bookings",
        {
            "booking_ref": db.next_id("bookings", "TR", width=4),
            "traveler_id": traveler_id,
            "flight_id": flight_id,
            "cabin": cabin,
            "fare_type": fare_type,
            "passengers": list(passenger_names),
            "contact_last_name": passenger_names[0].split()[-1],
            "checked_bags": 0,
            "status": "confirmed",
            "booked_on": db.today.isoformat(),
            "total_paid": total,
        },
    )
    return {
        **booking,
        "credit_applied": credit,
        "amount_charged": round(total - credit, 2),
        "included_bags": _included_bags(db, booking),
    }


def change_flight(db: Database, booking_ref: str, new_flight_id: str) -> dict[str, Any]:
    booking, old = _confirmed_booking(db, booking_ref)
    new = db.get("flights", new_flight_id)
    if new_flight_id == old["flight_id"]:
        raise InvalidRequest(f"booking {booking_ref} is already on {new_flight_id}")
    # an airline cancellation entitles the traveler to a free rebooking, whatever the fare
    involuntary = old["status"] == "cancelled"
    if not involuntary and booking["fare_type"] == "basic":
        raise PolicyViolation("basic economy fares cannot be changed")
    if not involuntary and _day(old["date"]) <= db.today:
        raise PolicyViolation("changes close on the day of departure; see the airport desk")
    if (new["origin"], new["destination"]) != (old["origin"], old["destination"]):
        raise InvalidRequest("a change keeps the same route; book a new trip for another route")
    if new["status"] == "cancelled" or _day(new["date"]) < db.today:
        raise InvalidState(f"flight {new_flight_id} cannot be booked ({new['status']})")
    count = len(booking["passengers"])
    new_price = _fare(new, booking["cabin"], booking["fare_type"]) * count
    _move_seats(db, new, booking["cabin"], count)
    _move_seats(db, old, booking["cabin"], -count)
    fee = 0.0 if involuntary or booking["fare_type"] == "flex" else CHANGE_FEE * count
    difference = 0.0 if involuntary else round(max(0.0, new_price - booking["total_paid"]), 2)
    db.update(
        "bookings",
        booking_ref,
        flight_id=new_flight_id,
        total_paid=round(booking["total_paid"] + difference, 2),
    )
    return {
        "booking_ref": booking_ref,
        "status": "confirmed",
        "old_flight_id": old["flight_id"],
        "new_flight_id": new_flight_id,
        "change_fee": fee,
        "fare_difference": difference,
        "amount_charged": round(fee + difference, 2),
    }


def cancel_flight_booking(db: Database, booking_ref: str) -> dict[str, Any]:
    booking, flight = _confirmed_booking(db, booking_ref)
    paid, count = booking["total_paid"], len(booking["passengers"])
    method, refund, fee = "original_payment", paid, 0.0
    if flight["status"] == "cancelled":
        pass  # the airline cancelled: full refund
    elif _day(flight["date"]) <= db.today:
        raise PolicyViolation("online cancellation closes on the day of departure")
    elif booking["booked_on"] == db.today.isoformat():
        pass  # free cancellation within 24 hours of booking
    elif booking["fare_type"] == "basic":
        raise PolicyViolation(
            "basic economy fares are non-refundable and cannot be cancelled after 24 hours"
        )
    elif booking["fare_type"] == "standard":
        fee = min(paid, CANCEL_FEE * count)
        method, refund = "travel_credit", round(paid - fee, 2)
        traveler = db.get("travelers", booking["traveler_id"])
        db.update(
            "travelers",
            traveler["traveler_id"],
            travel_credit=round(traveler["travel_credit"] + refund, 2),
        )
    if flight["status"] != "cancelled":
        _move_seats(db, flight, booking["cabin"], -count)
    db.update("bookings", booking_ref, status="cancelled")
    return {
        "booking_ref": booking_ref,
        "status": "cancelled",
        "refund_amount": refund,
        "refund_method": method,
        "cancellation_fee": fee,
    }


def add_checked_bags(db: Database, booking_ref: str, bags: int) -> dict[str, Any]:
    booking, flight = _confirmed_booking(db, booking_ref)
    if flight["status"] == "cancelled" or _day(flight["date"]) < db.today:
        raise InvalidState(f"flight {flight['flight_id']} is {flight['status']}; rebook first")
    count, before = len(booking["passengers"]), booking["checked_bags"]
    limit = MAX_BAGS_PER_PASSENGER * count
    if before + bags > limit:
        raise PolicyViolation(
            f"at most {MAX_BAGS_PER_PASSENGER} checked bags per passenger ({limit} on this "
            f"booking); it already has {before}",
            bags_remaining=limit - before,
        )
    included = _included_bags(db, booking)
    fee = BAG_FEE * (max(0, before + bags - included) - max(0, before - included))
    db.update("bookings", booking_ref, checked_bags=before + bags)
    return {
        "booking_ref": booking_ref,
        "checked_bags": before + bags,
        "bags_added": bags,
        "included_bags": included,
        "fee_charged": fee,
    }


# -------------------------------------------------------------------------- hotels


def search_hotels(
    db: Database,
    city: str,
    check_in: str,
    check_out: str,
    guests: int,
    rooms: int = 1,
    max_nightly_rate: float | None = None,
    min_stars: int | None = None,
) -> dict[str, Any]:
    nights = _nights(check_in, check_out, db.today)
    found = []
    for hotel in db.find("hotels", city=city):
        lowest = min(hotel["rates"].values())
        if set(nights) & set(hotel["sold_out_dates"]) or hotel["rooms_left"] < rooms:
            continue
        if hotel["max_occupancy"] * rooms < guests:
            continue
        if (max_nightly_rate is not None and lowest > max_nightly_rate) or (
            min_stars is not None and hotel["stars"] < min_stars
        ):
            continue
        totals = {k: round(v * len(nights) * rooms, 2) for k, v in hotel["rates"].items()}
        found.append({**hotel, "nights": len(nights), "total_prices": totals})
    found.sort(key=lambda h: min(h["rates"].values()))
    return {"hotels": found, "count": len(found)}


def get_hotel_reservation(db: Database, reservation_id: str) -> dict[str, Any]:
    reservation = db.get("hotel_reservations", reservation_id)
    hotel = db.get("hotels", reservation["hotel_id"])
    deadline = _cancellation_deadline(hotel, reservation["check_in"])
    return {
        **reservation,
        "hotel_name": hotel["name"],
        "city": hotel["city"],
        "free_cancellation_until": deadline,
    }


def book_hotel(
    db: Database,
    hotel_id: str,
    traveler_id: str,
    check_in: str,
    check_out: str,
    guests: int,
    rooms: int = 1,
    rate_type: str = "flexible",
) -> dict[str, Any]:
    db.get("travelers", traveler_id)
    hotel = db.get("hotels", hotel_id)
    nights = _nights(check_in, check_out, db.today)
    if guests > hotel["max_occupancy"] * rooms:
        raise PolicyViolation(
            f"{hotel['name']} sleeps at most {hotel['max_occupancy']} guests per room; "
            f"{guests} guests need more rooms"
        )
    sold_out = sorted(set(nights) & set(hotel["sold_out_dates"]))
    if sold_out:
        raise InvalidState(f"{hotel['name']} is sold out on {', '.join(sold_out)}")
    if hotel["rooms_left"] < rooms:
        raise InvalidState(f"only {hotel['rooms_left']} rooms left at {hotel['name']}")
    db.update("hotels", hotel_id, rooms_left=hotel["rooms_left"] - rooms)
    rate = hotel["rates"][rate_type]
    reservation = db.insert(
        "hotel_reservations",
        {
            "reservation_id": db.next_id("hotel_reservations", "HR-", width=4),
            "traveler_id": traveler_id,
            "hotel_id": hotel_id,
            "check_in": check_in,
            "check_out": check_out,
            "nights": len(nights),
            "guests": guests,
            "rooms": rooms,
            "rate_type": rate_type,
            "nightly_rate": rate,
            "total_price": round(rate * len(nights) * rooms, 2),
            "status": "confirmed",
            "booked_on": db.today.isoformat(),
        },
    )
    return {
        **reservation,
        "hotel_name": hotel["name"],
        "city": hotel["city"],
        "free_cancellation_until": _cancellation_deadline(hotel, check_in),
    }


def cancel_hotel_reservation(db: Database, reservation_id: str) -> dict[str, Any]:
    reservation = db.get("hotel_reservations", reservation_id)
    if reservation["status"] != "confirmed":
        raise InvalidState(f"reservation {reservation_id} is {reservation['status']}")
    if _day(reservation["check_in"]) <= db.today:
        raise InvalidState("the stay has already started; contact the hotel")
    if reservation["rate_type"] == "non_refundable":
        raise PolicyViolation("non-refundable rates cannot be cancelled or refunded")
    hotel = db.get("hotels", reservation["hotel_id"])
    deadline = _cancellation_deadline(hotel, reservation["check_in"])
    # past the free-cancellation deadline the first night is charged
    penalty = (
        0.0
        if db.today.isoformat() <= deadline
        else reservation["nightly_rate"] * reservation["rooms"]
    )
    db.update("hotel_reservations", reservation_id, status="cancelled")
    db.update("hotels", hotel["hotel_id"], rooms_left=hotel["rooms_left"] + reservation["rooms"])
    return {
        "reservation_id": reservation_id,
        "status": "cancelled",
        "refund_amount": round(reservation["total_price"] - penalty, 2),
        "penalty": penalty,
        "free_cancellation_until": deadline,
    }
