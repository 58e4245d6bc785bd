"""The travel domain pack: tools against the seed data and business rules.

Scenarios, task templates and the pack's shape are checked in test_packs.py."""

from functools import partial

import pytest

from tests.domains import helpers

call = partial(helpers.call, "travel")
error_code = partial(helpers.error_code, "travel")


# -------------------------------------------------------------------- refusals

JFK_LHR = {"origin": "JFK", "destination": "LHR"}
MARCUS = {"traveler_id": "TV-1001", "passenger_names": ["Marcus Oyelaran"]}
LISBON = {"city": "Lisbon", "guests": 1}
STAY = {"traveler_id": "TV-1009", "check_in": "2026-06-18", "check_out": "2026-06-22"}
REFUSALS = [
    # search_flights: date in the past, same airport twice, impossible calendar date
    ("search_flights", {**JFK_LHR, "date": "2026-05-11"}, "invalid_request"),
    ("search_flights", {**JFK_LHR, "destination": "JFK", "date": "2026-06-04"}, "invalid_request"),
    ("search_flights", {**JFK_LHR, "date": "2026-02-30"}, "invalid_request"),
    # lookups of unknown records; a booking only opens with the lead passenger's last name
    ("get_flight_status", {"flight_number": "NW999", "date": "2026-05-12"}, "not_found"),
    ("get_flight_booking", {"booking_ref": "AAAAAA", "last_name": "Smith"}, "not_found"),
    ("get_flight_booking", {"booking_ref": "H4DDAM", "last_name": "Smith"}, "invalid_request"),
    ("get_traveler_profile", {"traveler_id": "TV-9999"}, "not_found"),
    ("get_hotel_reservation", {"reservation_id": "HR-0001"}, "not_found"),
    # book_flight: sold-out cabin, cabin not offered, basic outside economy, unknown flight
    (
        "book_flight",
        {"flight_id": "NW100-2026-06-04", "cabin": "business", **MARCUS},
        "invalid_state",
    ),
    (
        "book_flight",
        {"flight_id": "NW62-2026-05-28", "cabin": "premium_economy", **MARCUS},
        "invalid_request",
    ),
    (
        "book_flight",
        {"flight_id": "NW100-2026-06-05", "cabin": "business", "fare_type": "basic", **MARCUS},
        "invalid_request",
    ),
    ("book_flight", {"flight_id": "XX1-2026-06-02", "cabin": "economy", **MARCUS}, "not_found"),
    # book_flight: cancelled flight, flight already flown, more passengers than seats
    (
        "book_flight",
        {"flight_id": "AU233-2026-05-12", "cabin": "economy", **MARCUS},
        "invalid_state",
    ),
    (
        "book_flight",
        {"flight_id": "NW101-2026-04-20", "cabin": "economy", **MARCUS},
        "invalid_state",
    ),
    (
        "book_flight",
        {
            "flight_id": "AU57-2026-06-02",
            "cabin": "economy",
            "traveler_id": "TV-1001",
            "passenger_names": ["A B", "C D", "E F"],
        },
        "invalid_state",
    ),
    # book_flight: more than 9 passengers go through the group desk
    (
        "book_flight",
        {
            "flight_id": "NW455-2026-06-02",
            "cabin": "economy",
            "traveler_id": "TV-1001",
            "passenger_names": [f"Guest {n}" for n in range(10)],
        },
        "policy_violation",
    ),
    # change_flight: basic fare, other route, same flight, flown booking, cabin not on new flight
    (
        "change_flight",
        {"booking_ref": "ZK3N7R", "new_flight_id": "NW100-2026-06-05"},
        "policy_violation",
    ),
    (
        "change_flight",
        {"booking_ref": "H4DDAM", "new_flight_id": "MD210-2026-06-18"},
        "invalid_request",
    ),
    (
        "change_flight",
        {"booking_ref": "H4DDAM", "new_flight_id": "AU412-2026-06-04"},
        "invalid_request",
    ),
    (
        "change_flight",
        {"booking_ref": "M2LQ8E", "new_flight_id": "NW101-2026-06-11"},
        "invalid_state",
    ),
    (
        "change_flight",
        {"booking_ref": "IJ8W2B", "new_flight_id": "AU57-2026-06-02"},
        "invalid_request",
    ),
    # cancel_flight_booking: basic fare after 24 hours, already flown
    ("cancel_flight_booking", {"booking_ref": "ZK3N7R"}, "policy_violation"),
    ("cancel_flight_booking", {"booking_ref": "M2LQ8E"}, "invalid_state"),
    # add_checked_bags: 3 bags per passenger at most, flight cancelled by the airline, flown
    ("add_checked_bags", {"booking_ref": "Q7KX2M", "bags": 4}, "policy_violation"),
    ("add_checked_bags", {"booking_ref": "SY5C0D", "bags": 1}, "invalid_state"),
    ("add_checked_bags", {"booking_ref": "M2LQ8E", "bags": 1}, "invalid_state"),
    # search_hotels: check-out not after check-in, check-in in the past, over 30 nights
    (
        "search_hotels",
        {**LISBON, "check_in": "2026-06-18", "check_out": "2026-06-18"},
        "invalid_request",
    ),
    (
        "search_hotels",
        {**LISBON, "check_in": "2026-05-01", "check_out": "2026-05-03"},
        "invalid_request",
    ),
    (
        "search_hotels",
        {**LISBON, "check_in": "2026-06-01", "check_out": "2026-07-15"},
        "policy_violation",
    ),
    # book_hotel: too many guests per room, too few rooms left, a sold-out night, unknown hotel
    ("book_hotel", {"hotel_id": "HT-202", "guests": 3, **STAY}, "policy_violation"),
    ("book_hotel", {"hotel_id": "HT-202", "guests": 3, "rooms": 3, **STAY}, "invalid_state"),
    (
        "book_hotel",
        {
            "hotel_id": "HT-204",
            "guests": 1,
            "traveler_id": "TV-1008",
            "check_in": "2026-08-13",
            "check_out": "2026-08-15",
        },
        "invalid_state",
    ),
    ("book_hotel", {"hotel_id": "HT-999", "guests": 1, **STAY}, "not_found"),
    # cancel_hotel_reservation: non-refundable rate, stay already completed
    ("cancel_hotel_reservation", {"reservation_id": "HR-5003"}, "policy_violation"),
    ("cancel_hotel_reservation", {"reservation_id": "HR-5006"}, "invalid_state"),
]


@pytest.mark.parametrize(("tool", "arguments", "code"), REFUSALS)
def test_refusals(tool, arguments, code):
    assert error_code(tool, **arguments) == code


# ----------------------------------------------------------------------- reads


def test_search_flights_filters_cabin_seats_and_cancellations():
    # business is sold out on every JFK-LHR flight on 4 June
    ok, found, _ = call("search_flights", **JFK_LHR, date="2026-06-04", cabin="business")
    assert ok and found == {"flights": [], "count": 0}
    ok, found, _ = call("search_flights", **JFK_LHR, date="2026-06-04")
    ids = [f["flight_id"] for f in found["flights"]]
    assert ids == ["NW100-2026-06-04", "AU412-2026-06-04", "MD77-2026-06-04"]
    # max_stops drops the one-stop Meridian flight
    assert call("search_flights", **JFK_LHR, date="2026-06-04", max_stops=0)[1]["count"] == 2
    # AU233 today is cancelled: only NW519 is offered
    ok, found, _ = call("search_flights", origin="SFO", destination="SEA", date="2026-05-12")
    assert [f["flight_id"] for f in found["flights"]] == ["NW519-2026-05-12"]
    assert found["flights"][0]["fares"] == {"economy": 214.0, "business": 560.0}


def test_get_flight_status():
    ok, status, _ = call("get_flight_status", flight_number="NW318", date="2026-05-12")
    assert ok and status["status"] == "delayed" and status["delay_minutes"] == 85
    assert status["estimated_departure"] == "15:35" and status["gate"] == "B14"
    ok, status, _ = call("get_flight_status", flight_number="AU233", date="2026-05-12")
    assert status["status"] == "cancelled" and status["estimated_departure"] is None


def test_get_booking():
    ok, booking, _ = call("get_flight_booking", booking_ref="H4DDAM", last_name="haddad")
    assert ok and booking["passengers"] == ["Omar Haddad", "Leila Haddad"]
    # standard economy: 1 bag each, +1 each for Omar's gold tier
    assert booking["included_bags"] == 4 and booking["flight"]["date"] == "2026-06-04"


def test_get_traveler_profile():
    ok, profile, _ = call("get_traveler_profile", traveler_id="TV-1013")
    assert ok and profile["travel_credit"] == 45.0 and profile["loyalty_tier"] == "silver"
    assert profile["upcoming_bookings"] == [
        {"booking_ref": "P9TRW4", "flight_id": "NW455-2026-06-02", "date": "2026-06-02"}
    ]
    assert [s["reservation_id"] for s in profile["upcoming_stays"]] == ["HR-5007"]


def test_search_hotels():
    lisbon = {"city": "Lisbon", "check_in": "2026-06-18", "check_out": "2026-06-22", "guests": 2}
    ok, found, _ = call("search_hotels", **lisbon)
    assert [h["hotel_id"] for h in found["hotels"]] == ["HT-203", "HT-201", "HT-202"]
    assert found["hotels"][1]["total_prices"] == {"flexible": 740.0, "non_refundable": 632.0}
    # budget (against the cheapest rate) and stars filters
    ok, found, _ = call("search_hotels", **lisbon, max_nightly_rate=200, min_stars=4)
    assert [h["hotel_id"] for h in found["hotels"]] == ["HT-201"]
    # festival sell-out: every Edinburgh hotel has a sold-out night
    edinburgh = {"city": "Edinburgh", "check_in": "2026-08-14", "check_out": "2026-08-17"}
    assert call("search_hotels", **edinburgh, guests=1)[1]["count"] == 0
    # occupancy: 3 guests only fit one room of the Ginza hotel
    tokyo = {"city": "Tokyo", "check_in": "2026-06-01", "check_out": "2026-06-03"}
    ok, found, _ = call("search_hotels", **tokyo, guests=3)
    assert [h["hotel_id"] for h in found["hotels"]] == ["HT-209"]


def test_get_hotel_reservation():
    ok, res, _ = call("get_hotel_reservation", reservation_id="HR-5001")
    assert ok and res["hotel_name"] == "Paddington Crescent Hotel" and res["total_price"] == 1060.0
    assert res["free_cancellation_until"] == "2026-06-03"


# ---------------------------------------------------------------------- writes


def test_book_flight_takes_seats_and_credit():
    aiko = {"traveler_id": "TV-1002", "passenger_names": ["Aiko Tanaka"]}
    ok, booking, db = call(
        "book_flight",
        flight_id="AU880-2026-05-28",
        cabin="premium_economy",
        use_travel_credit=True,
        **aiko,
    )
    assert ok and booking["booking_ref"] == "TR0014" and booking["total_paid"] == 1480.0
    assert booking["credit_applied"] == 120.0 and booking["amount_charged"] == 1360.0
    # the write is visible to later reads
    assert db.get("flights", "AU880-2026-05-28")["seats_left"]["premium_economy"] == 7
    assert call("get_traveler_profile", db, traveler_id="TV-1002")[1]["travel_credit"] == 0.0
    assert call("get_flight_booking", db, booking_ref="TR0014", last_name="Tanaka")[1]["cabin"] == (
        "premium_economy"
    )
    # booking the same flight twice is refused
    again = {"flight_id": "AU880-2026-05-28", "cabin": "economy", **aiko}
    assert error_code("book_flight", db, **again) == "invalid_state"


def test_book_flight_fare_prices_and_passport_rule():
    olga = {
        "flight_id": "NW740-2026-05-20",
        "traveler_id": "TV-1006",
        "cabin": "economy",
        "passenger_names": ["Olga Petrova"],
    }
    # basic = standard economy - 60, flex = standard x 1.3
    assert call("book_flight", **olga, fare_type="basic")[1]["total_paid"] == 108.0
    assert call("book_flight", **olga, fare_type="flex")[1]["total_paid"] == 218.4
    # the passport must be valid 6 months past an international flight, not a domestic one
    hannah = {"traveler_id": "TV-1003", "passenger_names": ["Hannah Lindqvist"], "cabin": "economy"}
    ok, content, _ = call("book_flight", flight_id="NW100-2026-06-05", **hannah)
    assert not ok and content["code"] == "policy_violation" and "2026-12-04" in content["message"]
    assert call("book_flight", flight_id="NW455-2026-06-02", **hannah)[0]


def test_change_flight_fees_and_seats():
    ok, change, db = call("change_flight", booking_ref="H4DDAM", new_flight_id="NW100-2026-06-05")
    # standard fare: 75 x 2 passengers, plus (598 - 548) x 2 fare difference
    assert ok and change["change_fee"] == 150.0 and change["fare_difference"] == 100.0
    assert change["amount_charged"] == 250.0
    assert db.get("bookings", "H4DDAM")["flight_id"] == "NW100-2026-06-05"
    assert db.get("flights", "NW100-2026-06-05")["seats_left"]["economy"] == 12
    assert db.get("flights", "AU412-2026-06-04")["seats_left"]["economy"] == 24
    # changing again to the flight it is now on is refused
    same = {"booking_ref": "H4DDAM", "new_flight_id": "NW100-2026-06-05"}
    assert error_code("change_flight", db, **same) == "invalid_request"
    # flex fares change for free, paying only the fare difference (610 x 1.3 - 777.4)
    ok, change, _ = call("change_flight", booking_ref="IJ8W2B", new_flight_id="NW455-2026-06-02")
    assert change["change_fee"] == 0.0 and change["fare_difference"] == 15.6
    # the airline cancelled AU233: a same-day change is free
    ok, change, _ = call("change_flight", booking_ref="SY5C0D", new_flight_id="NW519-2026-05-12")
    assert ok and change["amount_charged"] == 0.0


def test_cancel_flight_booking_refunds():
    # flex: full refund to the card, seats go back on sale, a second cancel is refused
    ok, out, db = call("cancel_flight_booking", booking_ref="LX82PV")
    assert ok and out["refund_amount"] == 2912.0 and out["refund_method"] == "original_payment"
    assert db.get("bookings", "LX82PV")["status"] == "cancelled"
    assert db.get("flights", "MD210-2026-06-18")["seats_left"]["business"] == 4
    assert error_code("cancel_flight_booking", db, booking_ref="LX82PV") == "invalid_state"
    # standard: travel credit minus 100 per passenger, credited to the account
    ok, out, db = call("cancel_flight_booking", booking_ref="P9TRW4")
    assert out["refund_method"] == "travel_credit" and out["refund_amount"] == 578.0
    assert out["cancellation_fee"] == 200.0
    assert db.get("travelers", "TV-1013")["travel_credit"] == 623.0
    # booked today: free within 24 hours even for a standard fare
    ok, out, _ = call("cancel_flight_booking", booking_ref="KA1H5S")
    assert out["refund_amount"] == 598.0 and out["refund_method"] == "original_payment"
    # the airline cancelled the flight: full refund
    assert call("cancel_flight_booking", booking_ref="SY5C0D")[1]["refund_amount"] == 189.0


def test_add_checked_bags():
    # basic fare includes no bag: 50 per bag
    ok, out, db = call("add_checked_bags", booking_ref="Q7KX2M", bags=2)
    expected = {
        "booking_ref": "Q7KX2M",
        "checked_bags": 2,
        "bags_added": 2,
        "included_bags": 0,
        "fee_charged": 100.0,
    }
    assert ok and out == expected
    assert db.get("bookings", "Q7KX2M")["checked_bags"] == 2
    # a third bag is allowed, a fourth breaks the 3-per-passenger limit
    assert call("add_checked_bags", db, booking_ref="Q7KX2M", bags=1)[1]["fee_charged"] == 50.0
    assert error_code("add_checked_bags", db, booking_ref="Q7KX2M", bags=1) == "policy_violation"
    # Omar's gold tier raises the allowance to 4: 2 more bags are free, a third costs 50
    assert call("add_checked_bags", booking_ref="H4DDAM", bags=2)[1]["fee_charged"] == 0.0
    assert call("add_checked_bags", booking_ref="H4DDAM", bags=3)[1]["fee_charged"] == 50.0


def test_book_hotel():
    ok, res, db = call(
        "book_hotel", hotel_id="HT-201", guests=2, rate_type="non_refundable", **STAY
    )
    assert ok and res["reservation_id"] == "HR-0009" and res["total_price"] == 632.0
    assert res["free_cancellation_until"] == "2026-06-16"
    assert db.get("hotels", "HT-201")["rooms_left"] == 3
    assert call("get_hotel_reservation", db, reservation_id="HR-0009")[1]["status"] == "confirmed"
    # two rooms hold three guests where one room does not
    assert call("book_hotel", hotel_id="HT-202", guests=3, rooms=2, **STAY)[1]["rooms"] == 2


def test_cancel_hotel_reservation():
    ok, out, db = call("cancel_hotel_reservation", reservation_id="HR-5001")
    assert ok and out["refund_amount"] == 1060.0 and out["penalty"] == 0.0
    assert db.get("hotel_reservations", "HR-5001")["status"] == "cancelled"
    assert db.get("hotels", "HT-210")["rooms_left"] == 5
    assert error_code("cancel_hotel_reservation", db, reservation_id="HR-5001") == "invalid_state"
    # past the free-cancellation deadline (11 May) the first night is kept
    ok, out, _ = call("cancel_hotel_reservation", reservation_id="HR-5004")
    assert out["penalty"] == 189.0 and out["refund_amount"] == 189.0
