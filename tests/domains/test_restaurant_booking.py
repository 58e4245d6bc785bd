"""The restaurant booking pack: tools on the seed data and business rules.

Scenarios, task templates and the pack's shape are checked in test_packs.py."""

from functools import partial

import pytest

from mads_bench.catalog import load_domain
from tests.domains import helpers
from tests.domains.helpers import MISSING, POLICY, REQ, STATE

DOMAIN = load_domain("restaurant_booking")
call = partial(helpers.call, "restaurant_booking")
error_code = partial(helpers.error_code, "restaurant_booking")

SOFIA = {"guest_name": "Sofia Romano", "guest_phone": "+1-312-555-0142"}
THEO = {"guest_name": "Theo Papadopoulos", "guest_phone": "+1-312-555-0134"}
KWAME = {"guest_name": "Kwame Asante", "guest_phone": "+1-415-555-0177"}
RAFAEL = {"guest_name": "Rafael Mendes", "guest_phone": "+1-773-555-0199"}
CARLOS = {"guest_name": "Carlos Ruiz", "guest_phone": "+1-773-555-0188"}


def table(restaurant_id, day, hhmm, party, guest=SOFIA, **extra):
    return {"restaurant_id": restaurant_id, "date": day, "time": hhmm, "party_size": party,
            **guest, **extra}  # fmt: skip


def wait(restaurant_id, day, hhmm, party=2, guest=THEO):
    return {"restaurant_id": restaurant_id, "date": day, "preferred_time": hhmm,
            "party_size": party, **guest}  # fmt: skip


# -------------------------------------------------------------------- refusals


def avail(restaurant_id, day, party=2, **extra):
    return {"restaurant_id": restaurant_id, "date": day, "party_size": party, **extra}


# (tool, arguments, error code, words of the message that name the rule)
REFUSALS = [
    # lookups of unknown records; Kinbo publishes no menu online
    ("get_restaurant_details", {"restaurant_id": "RST-999"}, MISSING, "RST-999"),
    ("get_reservation", {"reservation_id": "RB-9999"}, MISSING, "RB-9999"),
    ("get_restaurant_menu", {"restaurant_id": "RST-103"}, MISSING, "does not publish"),
    # check_table_availability: walk-in only, past, beyond Kinbo's 14-day window, above its
    # online limit of 6, an area it does not have, an impossible date
    ("check_table_availability", avail("RST-105", "2026-05-22"), POLICY, "walk-in only"),
    ("check_table_availability", avail("RST-101", "2026-05-19"), REQ, "in the past"),
    ("check_table_availability", avail("RST-103", "2026-06-05"), POLICY, "14 days ahead"),
    ("check_table_availability", avail("RST-103", "2026-05-28", 12), POLICY, "up to 6 online"),
    ("check_table_availability", avail("RST-103", "2026-05-28", seating_area="patio"), REQ,
     "no patio seating"),
    ("check_table_availability", avail("RST-101", "2026-02-30"), REQ, "not a calendar date"),
    # create_reservation: closed on Mondays, not a seating time, lunch already over today,
    # Kinbo full at 19:30, Tide & Thyme's patio closed, three no-shows, a second table
    # within 2 hours of Rafael's Trattoria Lucca booking
    ("create_reservation", table("RST-101", "2026-05-25", "19:00", 2), REQ, "closed on Mondays"),
    ("create_reservation", table("RST-101", "2026-05-22", "16:00", 2), REQ, "not a seating time"),
    ("create_reservation", table("RST-205", "2026-05-20", "11:30", 2), REQ, "already passed"),
    ("create_reservation", table("RST-103", "2026-05-23", "19:30", 2), STATE, "no table for 2"),
    ("create_reservation", table("RST-203", "2026-05-21", "19:00", 2, seating_area="patio"),
     STATE, "in the patio area"),
    ("create_reservation", table("RST-101", "2026-05-22", "19:00", 2, CARLOS), POLICY,
     "suspended"),
    ("create_reservation", table("RST-103", "2026-05-23", "21:00", 2, RAFAEL), STATE,
     "already has reservation RB-0011"),
    # modify_reservation: nothing to change, cancelled, inside Koji's 72-hour cutoff, above
    # the online limit, a bar that would hold 12 of 10 seats, Trattoria Lucca's Monday
    ("modify_reservation", {"reservation_id": "RB-0003"}, REQ, "give a new"),
    ("modify_reservation", {"reservation_id": "RB-0013", "time": "20:00"}, STATE, "cancelled"),
    ("modify_reservation", {"reservation_id": "RB-0022", "party_size": 1}, POLICY,
     "72 hours before"),
    ("modify_reservation", {"reservation_id": "RB-0003", "party_size": 9}, POLICY,
     "up to 8 online"),
    ("modify_reservation", {"reservation_id": "RB-0020", "party_size": 6}, STATE,
     "in the bar area"),
    ("modify_reservation", {"reservation_id": "RB-0005", "date": "2026-05-25"}, REQ,
     "closed on Mondays"),
    # cancel_reservation: inside Maison Lune's 48-hour cutoff, already cancelled, completed
    ("cancel_reservation", {"reservation_id": "RB-0001"}, POLICY, "48 hours before"),
    ("cancel_reservation", {"reservation_id": "RB-0013"}, STATE, "cancelled"),
    ("cancel_reservation", {"reservation_id": "RB-0015"}, STATE, "completed"),
    # pay_reservation_deposit: nothing due, card not on file, expired card
    ("pay_reservation_deposit", {"reservation_id": "RB-0002", "card_last_four": "5100"}, STATE,
     "no deposit due"),
    ("pay_reservation_deposit", {"reservation_id": "RB-0010", "card_last_four": "9999"}, MISSING,
     "no saved card ending 9999"),
    ("pay_reservation_deposit", {"reservation_id": "RB-0011", "card_last_four": "1881"}, POLICY,
     "expired in 2026-03"),
    # join_waitlist: no waitlist, tables still free, more than 7 days ahead, twice, walk-in
    ("join_waitlist", wait("RST-102", "2026-05-23", "19:00"), POLICY, "does not keep a waitlist"),
    ("join_waitlist", wait("RST-103", "2026-05-23", "21:00"), STATE, "still free"),
    ("join_waitlist", wait("RST-103", "2026-05-29", "19:00"), POLICY, "opens 7 days"),
    ("join_waitlist", wait("RST-103", "2026-05-23", "19:30",
                           guest={"guest_name": "Yuki Sato", "guest_phone": "+1-415-555-0166"}),
     STATE, "already on"),
    ("join_waitlist", wait("RST-105", "2026-05-23", "19:00"), POLICY, "walk-in only"),
    # update_special_requests: cancelled and completed reservations
    ("update_special_requests", {"reservation_id": "RB-0013", "special_requests": "Window"},
     STATE, "cancelled"),
    ("update_special_requests", {"reservation_id": "RB-0006", "special_requests": "Window"},
     STATE, "completed"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "arguments", "code", "rule"), REFUSALS)
def test_refusals(tool, arguments, code, rule):
    ok, content, _ = call(tool, **arguments)
    assert not ok and content["code"] == code and rule in content["message"], content


def test_refusal_details():
    # a full slot names the times that are still free
    ok, content, _ = call("create_reservation", **table("RST-103", "2026-05-23", "19:30", 2))
    assert content["available_times"] == ["17:30", "18:00", "21:00", "21:30", "22:00"]
    # the cutoff refusal says how much deposit is at stake
    ok, content, _ = call("cancel_reservation", reservation_id="RB-0001")
    assert "2026-05-18 19:30" in content["message"] and content["deposit_paid"] == 200.0
    # notes cannot change once the seating has started (lunch at 11:30 today)
    started = {**DOMAIN.database().get("reservations", "RB-0014"), "date": "2026-05-20",
               "time": "11:30"}  # fmt: skip
    db = DOMAIN.database({"reservations": [started]})
    note = {"reservation_id": "RB-0014", "special_requests": "Window"}
    assert error_code("update_special_requests", db, **note) == "invalid_state"


# ----------------------------------------------------------------------- reads


def test_search_restaurants():
    ok, found, _ = call("search_restaurants", city="Chicago", cuisine="italian")
    assert ok and [r["restaurant_id"] for r in found["restaurants"]] == ["RST-101"]
    assert found["restaurants"][0]["name"] == "Trattoria Lucca"

    def ids(**filters):
        return [r["restaurant_id"] for r in call("search_restaurants", **filters)[1]["restaurants"]]

    # best rated first; dietary option, online party size, neighborhood words, name words
    assert ids(city="San Francisco", dietary_option="vegan") == ["RST-201", "RST-205"]
    assert ids(city="Chicago", party_size=10) == ["RST-102", "RST-107"]
    assert ids(city="Chicago", neighborhood="west") == ["RST-101", "RST-102"]
    assert ids(city="Chicago", name="smoke & ember") == ["RST-107"]
    assert ids(city="San Francisco", cuisine="indian") == []


def test_get_restaurant_details():
    ok, found, _ = call("get_restaurant_details", restaurant_id="RST-104")
    assert ok and found["deposit"] == {"min_party": 1, "per_person": 50.0}
    assert found["cancellation_cutoff_hours"] == 48 and found["open_days"][0] == "wed"


def test_check_table_availability():
    # Kinbo is full from 17:30+2h reservations until 21:00 on Saturday
    ok, found, _ = call("check_table_availability", **avail("RST-103", "2026-05-23"),
                        earliest_time="19:00")  # fmt: skip
    assert (
        ok
        and found["open"]
        and found["slots"][:2]
        == [
            {"time": "21:00", "seating_area": "indoor", "seats_left": 12},
            {"time": "21:00", "seating_area": "bar", "seats_left": 4},
        ]
    )
    # closed on Mondays, bought out on Saturday
    closed = call("check_table_availability", **avail("RST-101", "2026-05-25"))[1]
    assert closed["open"] is False and closed["slots"] == []
    buyout = call("check_table_availability", **avail("RST-104", "2026-05-23"))[1]
    assert buyout["open"] is True and buyout["slots"] == []
    # today only seatings after the 12:00 clock
    today = call("check_table_availability", **avail("RST-205", "2026-05-20"))[1]
    assert today["slots"][0] == {"time": "12:30", "seating_area": "indoor", "seats_left": 28}


def test_get_restaurant_menu():
    # the sold-out gnocchi is left out
    ok, menu, _ = call("get_restaurant_menu", restaurant_id="RST-201", dietary_tag="vegan")
    assert ok and [i["item_id"] for i in menu["items"]] == ["M-203", "M-204"]
    dessert = call("get_restaurant_menu", restaurant_id="RST-201", course="dessert")[1]
    panna_cotta = {"item_id": "M-206", "name": "Panna cotta", "course": "dessert", "price": 10.0,
                   "dietary_tags": ["vegetarian", "gluten_free"]}  # fmt: skip
    assert dessert["items"] == [panna_cotta]


def test_get_reservation():
    ok, found, _ = call("get_reservation", reservation_id="RB-0001")
    assert ok and found["restaurant_name"] == "Maison Lune" and found["deposit_paid"] == 200.0


def test_find_guest_reservations():
    ok, found, _ = call("find_guest_reservations", guest_phone=RAFAEL["guest_phone"])
    assert ok and [r["reservation_id"] for r in found["reservations"]] == ["RB-0011", "RB-0002"]
    no_shows = call("find_guest_reservations", guest_phone=CARLOS["guest_phone"],
                    status="no_show")[1]  # fmt: skip
    assert no_shows["count"] == 3
    assert call("find_guest_reservations", guest_phone="+1-212-555-0000")[1]["count"] == 0


# ---------------------------------------------------------------------- writes


def test_create_reservation_takes_seats():
    ok, res, db = call("create_reservation", **table("RST-101", "2026-05-22", "19:00", 2),
                       seating_area="indoor", occasion="date_night")  # fmt: skip
    assert ok and res["reservation_id"] == "RB-0024" and res["status"] == "confirmed"
    assert res["deposit_due"] == 0.0 and res["created_on"] == "2026-05-20"
    # visible to later reads; two indoor seats fewer; no second table that evening
    assert call("get_reservation", db, reservation_id="RB-0024")[1]["occasion"] == "date_night"
    slots = call("check_table_availability", db, **avail("RST-101", "2026-05-22"),
                 earliest_time="19:00", latest_time="19:00")[1]["slots"]  # fmt: skip
    assert slots[0] == {"time": "19:00", "seating_area": "indoor", "seats_left": 38}
    again = table("RST-101", "2026-05-22", "20:30", 2)
    assert error_code("create_reservation", db, **again) == "invalid_state"
    # without an area the first one with room is used
    ok, res, _ = call("create_reservation", **table("RST-103", "2026-05-23", "21:00", 2, THEO))
    assert res["seating_area"] == "indoor"


def test_deposit_flow():
    # six at Tide & Thyme: $30 a person held until paid, refunded on time
    ok, res, db = call("create_reservation", **table("RST-203", "2026-05-30", "19:00", 6, KWAME))
    assert ok and res["status"] == "pending_deposit" and res["deposit_due"] == 180.0
    ok, paid, db = call("pay_reservation_deposit", db, reservation_id="RB-0024",
                        card_last_four="3782")  # fmt: skip
    assert ok and paid == {"reservation_id": "RB-0024", "status": "confirmed",
                           "amount_charged": 180.0, "card_last_four": "3782",
                           "deposit_paid": 180.0}  # fmt: skip
    assert db.get("reservations", "RB-0024")["status"] == "confirmed"
    again = {"reservation_id": "RB-0024", "card_last_four": "3782"}
    assert error_code("pay_reservation_deposit", db, **again) == "invalid_state"
    ok, out, db = call("cancel_reservation", db, reservation_id="RB-0024")
    assert out == {"reservation_id": "RB-0024", "status": "cancelled", "refund_amount": 180.0}


def test_modify_reservation():
    # six at Trattoria Lucca needs a $150 deposit; back to four, it is confirmed again
    ok, res, db = call("modify_reservation", reservation_id="RB-0005", party_size=6)
    assert ok and res["status"] == "pending_deposit" and res["deposit_due"] == 150.0
    ok, res, db = call("modify_reservation", db, reservation_id="RB-0005", party_size=4)
    assert res["status"] == "confirmed" and res["deposit_due"] == 0.0
    # a new time keeps the rest; the old slot frees up
    ok, res, db = call("modify_reservation", reservation_id="RB-0004", time="20:00")
    assert ok and (res["time"], res["party_size"], res["special_requests"]) == (
        "20:00", 4, "High chair for a toddler.",
    )  # fmt: skip
    assert db.get("reservations", "RB-0004")["time"] == "20:00"


def test_cancel_reservation():
    ok, out, db = call("cancel_reservation", reservation_id="RB-0002", reason="plans changed")
    assert ok and out == {"reservation_id": "RB-0002", "status": "cancelled", "refund_amount": 0.0}
    assert db.get("reservations", "RB-0002")["status"] == "cancelled"
    assert error_code("cancel_reservation", db, reservation_id="RB-0002") == "invalid_state"


def test_join_waitlist():
    ok, entry, db = call("join_waitlist", **wait("RST-103", "2026-05-23", "19:30"))
    assert ok and entry["waitlist_id"] == "WL-0003" and entry["position"] == 2
    assert entry["status"] == "waiting"
    assert db.get("waitlist", "WL-0003")["guest_phone"] == THEO["guest_phone"]


def test_update_special_requests():
    note = "One guest is vegan and allergic to tree nuts."
    ok, res, db = call("update_special_requests", reservation_id="RB-0003",
                       special_requests=note, occasion="celebration")  # fmt: skip
    assert ok and res["special_requests"] == note and res["occasion"] == "celebration"
    assert db.get("reservations", "RB-0003")["special_requests"] == note
