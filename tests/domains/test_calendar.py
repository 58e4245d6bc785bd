"""The calendar domain pack: tools against the seed data and business rules.

Scenarios, task templates and the pack's shape are checked in test_packs.py."""

from functools import partial

import pytest

from mads_bench.catalog import load_domain
from tests.domains import helpers
from tests.domains.helpers import MISSING, POLICY, REQ, STATE

DOMAIN = load_domain("calendar")
call = partial(helpers.call, "calendar")
error_code = partial(helpers.error_code, "calendar")

RAJ = "raj.patel@northwind.example"
SOFIA = "sofia.marquez@northwind.example"
NINA = "nina.kowalczyk@northwind.example"
MARCO = "marco.rossi@northwind.example"
LENA = "lena.hoffmann@northwind.example"
KENTA = "kenta.mori@northwind.example"
HANNAH = "hannah.berg@northwind.example"


def event(start, end, day="2026-04-16", **extra):
    return {"calendar_id": "work", "title": "Sync", "date": day, "start_time": start,
            "end_time": end, **extra}  # fmt: skip


# -------------------------------------------------------------------- refusals

WEEK = {"start_date": "2026-04-14", "end_date": "2026-04-24"}


def move(event_id, new_date, new_start_time):
    return {"event_id": event_id, "new_date": new_date, "new_start_time": new_start_time}


# (tool, arguments, error code, words of the message that name the rule)
REFUSALS = [
    # list_calendar_events: reversed range, more than 31 days, impossible date
    ("list_calendar_events", {**WEEK, "start_date": "2026-04-25"}, REQ, "on or after"),
    ("list_calendar_events", {**WEEK, "end_date": "2026-05-15"}, REQ, "at most 31 days"),
    ("list_calendar_events", {**WEEK, "start_date": "2026-02-30"}, REQ, "not a calendar date"),
    ("get_calendar_event", {"event_id": "E-9999"}, MISSING, "E-9999"),
    # find_common_free_slots: unknown colleague, past day, empty window
    ("find_common_free_slots", {"date": "2026-04-16", "duration_minutes": 30,
                                "attendee_emails": ["nobody@northwind.example"]}, MISSING,
     "directory"),
    ("find_common_free_slots", {"date": "2026-04-13", "duration_minutes": 30}, REQ, "past"),
    ("find_common_free_slots", {"date": "2026-04-16", "duration_minutes": 30,
                                "not_before": "15:00", "not_after": "14:00"}, REQ, "not_after"),
    # search_meeting_rooms: more than 30 days ahead, in the past, end before start
    ("search_meeting_rooms", {"date": "2026-05-20", "start_time": "10:00", "end_time": "11:00"},
     POLICY, "30 days ahead"),
    ("search_meeting_rooms", {"date": "2026-04-13", "start_time": "10:00", "end_time": "11:00"},
     REQ, "in the past"),
    ("search_meeting_rooms", {"date": "2026-04-16", "start_time": "11:00", "end_time": "10:00"},
     REQ, "must be after"),
    # create_calendar_event: read-only calendar, clash with the 14:00 expense review,
    # Raj busy 13:00-14:00, Lena off on Thursdays, Kenta only until 10:30, King's Day
    ("create_calendar_event", {**event("10:00", "11:00"), "calendar_id": "team"}, POLICY,
     "Platform team calendar is read-only"),
    ("create_calendar_event", event("14:15", "14:45"), STATE, "Expense report review"),
    ("create_calendar_event", event("13:00", "13:30", attendee_emails=[RAJ]), STATE,
     "Raj Patel is busy 13:00-14:00"),
    ("create_calendar_event", event("12:00", "12:30", attendee_emails=[LENA]), POLICY,
     "does not work on Thursdays"),
    ("create_calendar_event", event("12:00", "12:30", attendee_emails=[KENTA]), POLICY,
     "between 08:00 and 10:30"),
    ("create_calendar_event", event("10:00", "10:30", "2026-04-27", attendee_emails=[RAJ]),
     POLICY, "company holiday"),
    ("create_calendar_event", event("12:00", "12:30", attendee_emails=["x@y.example"]), MISSING,
     "directory"),
    # create_calendar_event: more than 8 hours, in the past (before 09:00 today)
    ("create_calendar_event", event("08:00", "16:15"), REQ, "at most 8 hours"),
    ("create_calendar_event", event("08:00", "08:30", "2026-04-14"), REQ, "in the past"),
    # rooms: 2-seat booth for 3 people, Atrium in maintenance, Glacier taken, personal event,
    # more than 30 days ahead
    ("create_calendar_event", event("12:00", "12:30", attendee_emails=[RAJ, SOFIA],
                                    room_id="R-A03"), POLICY, "Maple seats 2, not 3"),
    ("create_calendar_event", event("12:00", "12:30", room_id="R-301"), STATE, "maintenance"),
    ("create_calendar_event", event("13:00", "13:30", "2026-04-21", room_id="R-102"), STATE,
     "Glacier is already booked"),
    ("create_calendar_event", {**event("12:00", "12:30", room_id="R-101"),
                               "calendar_id": "personal"}, REQ, "only be booked for work"),
    ("create_calendar_event", event("12:00", "12:30", "2026-05-20", room_id="R-101"), POLICY,
     "30 days ahead"),
    # reschedule: someone else's event, read-only calendar, cancelled, already happened,
    # same time, past midnight, into a clash, into a time its room is taken
    ("reschedule_calendar_event", move("E-0018", "2026-04-23", "16:30"), POLICY,
     "only the organizer (olu.adebayo"),
    ("reschedule_calendar_event", move("E-0025", "2026-04-29", "09:00"), POLICY, "read-only"),
    ("reschedule_calendar_event", move("E-0008", "2026-04-17", "16:00"), STATE,
     "already cancelled"),
    ("reschedule_calendar_event", move("E-0026", "2026-04-17", "14:00"), STATE,
     "already taken place"),
    ("reschedule_calendar_event", move("E-0004", "2026-04-15", "15:00"), REQ,
     "already at that time"),
    ("reschedule_calendar_event", move("E-0022", "2026-04-24", "23:00"), REQ, "midnight"),
    ("reschedule_calendar_event", move("E-0005", "2026-04-16", "14:00"), STATE,
     "Expense report review"),
    ("reschedule_calendar_event", move("E-0004", "2026-04-21", "13:00"), STATE,
     "Glacier is already booked"),
    # cancel: someone else's event, already cancelled, already happened
    ("cancel_calendar_event", {"event_id": "E-0010"}, POLICY, "only the organizer"),
    ("cancel_calendar_event", {"event_id": "E-0008"}, STATE, "already cancelled"),
    ("cancel_calendar_event", {"event_id": "E-0026"}, STATE, "already taken place"),
    # respond: unknown, already answered, RSVP closed (accept and tentative), clash with
    # the Focus time block
    ("respond_to_invitation", {"invitation_id": "INV-9999", "response": "accept"}, MISSING,
     "INV-9999"),
    ("respond_to_invitation", {"invitation_id": "INV-0006", "response": "accept"}, STATE,
     "already answered (declined)"),
    ("respond_to_invitation", {"invitation_id": "INV-0004", "response": "accept"}, POLICY,
     "closed on 2026-04-10"),
    ("respond_to_invitation", {"invitation_id": "INV-0004", "response": "tentative"}, POLICY,
     "closed on 2026-04-10"),
    ("respond_to_invitation", {"invitation_id": "INV-0002", "response": "accept"}, STATE,
     "Focus time"),
    # update_event_attendees: nothing to do, not the organizer, removing a stranger,
    # adding twice, Lena on a Thursday, Fjord (4 seats) for 5 people
    ("update_event_attendees", {"event_id": "E-0020"}, REQ, "add_emails or remove_emails"),
    ("update_event_attendees", {"event_id": "E-0006", "add_emails": [MARCO]}, POLICY,
     "only the organizer"),
    ("update_event_attendees", {"event_id": "E-0020", "remove_emails": [RAJ]}, REQ,
     "is not invited"),
    ("update_event_attendees", {"event_id": "E-0020", "add_emails": [SOFIA]}, REQ,
     "already invited"),
    ("update_event_attendees", {"event_id": "E-0020", "add_emails": [LENA]}, POLICY,
     "does not work on Thursdays"),
    ("update_event_attendees", {"event_id": "E-0003", "add_emails": [SOFIA, NINA, HANNAH]},
     POLICY, "Fjord seats 4, not 5"),
    # book_meeting_room: personal event, room already on it, maintenance, too small, unknown
    ("book_meeting_room", {"event_id": "E-0009", "room_id": "R-101"}, REQ,
     "only be booked for work"),
    ("book_meeting_room", {"event_id": "E-0003", "room_id": "R-101"}, STATE, "already booked"),
    ("book_meeting_room", {"event_id": "E-0019", "room_id": "R-301"}, STATE, "maintenance"),
    ("book_meeting_room", {"event_id": "E-0019", "room_id": "R-201"}, POLICY,
     "Summit seats 10, not 12"),
    ("book_meeting_room", {"event_id": "E-0015", "room_id": "R-999"}, MISSING, "R-999"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "arguments", "code", "rule"), REFUSALS)
def test_refusals(tool, arguments, code, rule):
    ok, content, _ = call(tool, **arguments)
    assert not ok and content["code"] == code and rule in content["message"], content


# ----------------------------------------------------------------------- reads


def test_list_calendar_events():
    # cancelled events are hidden unless asked for
    ok, found, _ = call("list_calendar_events", start_date="2026-04-16", end_date="2026-04-16")
    assert ok and [e["event_id"] for e in found["events"]] == ["E-0006", "E-0007"]
    both = call("list_calendar_events", start_date="2026-04-16", end_date="2026-04-16",
                include_cancelled=True)[1]  # fmt: skip
    assert [e["event_id"] for e in both["events"]] == ["E-0006", "E-0007", "E-0008"]
    # one calendar, sorted by date
    personal = call("list_calendar_events", **WEEK, calendar_id="personal")[1]
    assert [e["event_id"] for e in personal["events"]] == [
        "E-0005", "E-0009", "E-0011", "E-0014", "E-0022",
    ]  # fmt: skip
    # title words, case-insensitive
    hits = call("list_calendar_events", **WEEK, query="LENA")[1]
    assert hits["count"] == 1 and hits["events"][0]["start_time"] == "10:00"


def test_get_calendar_event():
    ok, found, _ = call("get_calendar_event", event_id="E-0018")
    assert ok and found["organizer"] == "olu.adebayo@northwind.example"
    assert found["my_role"] == "attendee" and found["room_id"] == "R-201"
    assert len(found["attendees"]) == 9


def test_find_common_free_slots():
    # Raj is busy 13-14, the user 14:00-14:30: 14:30 is the first afternoon slot
    ok, found, _ = call("find_common_free_slots", date="2026-04-16", duration_minutes=30,
                        attendee_emails=[RAJ], not_before="13:00")  # fmt: skip
    assert ok and found["slots"][0] == {"start_time": "14:30", "end_time": "15:00"}
    assert [s["start_time"] for s in found["slots"]] == [
        "14:30",
        "15:00",
        "15:30",
        "16:00",
        "16:30",
    ]
    # Kenta's window in Tokyo is 08:00-10:30 of the user's time; he is busy until 08:30
    found = call("find_common_free_slots", date="2026-04-16", duration_minutes=30,
                 attendee_emails=[KENTA], not_before="08:00")[1]  # fmt: skip
    assert [s["start_time"] for s in found["slots"]] == ["08:30", "09:00", "09:30"]
    # day off and company holiday come back as notes, with no slots
    found = call("find_common_free_slots", date="2026-04-23", duration_minutes=30,
                 attendee_emails=[LENA])[1]  # fmt: skip
    assert found["slots"] == [] and found["notes"] == ["Lena Hoffmann does not work on Thursdays"]
    found = call("find_common_free_slots", date="2026-04-27", duration_minutes=30,
                 attendee_emails=[RAJ])[1]  # fmt: skip
    assert found["notes"] == ["2026-04-27 is a company holiday (King's Day (office closed))"]
    # alone: at most 8 slots, skipping the 10:00-11:30 architecture review
    found = call("find_common_free_slots", date="2026-04-24", duration_minutes=30)[1]
    starts = [s["start_time"] for s in found["slots"]]
    assert starts == ["09:00", "09:30", "11:30", "12:00", "12:30", "13:00", "13:30", "14:00"]


def test_search_meeting_rooms():
    # smallest fitting room first; Glacier is free after its 13:00-14:00 booking
    ok, found, _ = call("search_meeting_rooms", date="2026-04-21", start_time="14:00",
                        end_time="15:00", min_capacity=5, equipment=["video"])  # fmt: skip
    assert ok and [r["room_id"] for r in found["rooms"]] == ["R-102", "R-A02", "R-201"]
    # Fjord is taken 11-12 on 22 April; Maple seats only 2; building filter
    found = call("search_meeting_rooms", date="2026-04-22", start_time="11:00",
                 end_time="11:45", min_capacity=4, building="HQ")[1]  # fmt: skip
    assert [r["room_id"] for r in found["rooms"]] == ["R-102", "R-202", "R-201"]
    # the 16-seat Atrium is in maintenance until 30 April, available on 1 May
    twelve = {"start_time": "10:00", "end_time": "12:00", "min_capacity": 12}
    assert call("search_meeting_rooms", date="2026-04-23", **twelve)[1]["count"] == 0
    assert call("search_meeting_rooms", date="2026-05-01", **twelve)[1]["rooms"][0]["name"] == (
        "Atrium"
    )


def test_lookup_contact():
    ok, found, _ = call("lookup_contact", query="platform")
    names = [c["name"] for c in found["contacts"]]
    assert ok and names == ["Diego Alvarez", "Nina Kowalczyk", "Raj Patel", "Sofia Marquez"]
    found = call("lookup_contact", query="acme")[1]
    assert found["count"] == 1 and found["contacts"][0]["external"] is True
    assert call("lookup_contact", query="nobody here")[1] == {"contacts": [], "count": 0}


def test_list_pending_invitations():
    ok, found, _ = call("list_pending_invitations")
    ids = [i["invitation_id"] for i in found["invitations"]]
    # soonest first; the declined vendor demo is not pending
    assert ok and ids == ["INV-0001", "INV-0004", "INV-0005", "INV-0002", "INV-0003"]
    # the offsite dinner's RSVP closed on 10 April
    assert [i["rsvp_open"] for i in found["invitations"]] == [True, False, True, True, True]


# ---------------------------------------------------------------------- writes


def test_create_calendar_event_books_room_and_blocks_time():
    ok, created, db = call("create_calendar_event", **event("12:00", "12:30"),
                           attendee_emails=[RAJ], room_id="R-101")  # fmt: skip
    assert ok and created["event_id"] == "E-0027" and created["organizer"] == "me"
    assert created["location"] == "Fjord (HQ, floor 1)" and created["status"] == "confirmed"
    # visible to later reads, and the time, the room and Raj are now taken
    assert call("get_calendar_event", db, event_id="E-0027")[1]["title"] == "Sync"
    assert error_code("create_calendar_event", db, **event("12:15", "12:45")) == "invalid_state"
    free = call("find_common_free_slots", db, date="2026-04-16", duration_minutes=30,
                attendee_emails=[RAJ], not_before="12:00", not_after="13:00")[1]  # fmt: skip
    assert free["slots"] == [{"start_time": "12:30", "end_time": "13:00"}]
    # an event shown as free may overlap
    assert call("create_calendar_event", db, **event("12:00", "12:30", show_as="free"))[0]


def test_reschedule_keeps_duration_unless_told():
    ok, moved, db = call("reschedule_calendar_event", event_id="E-0004", new_date="2026-04-16",
                         new_start_time="15:00")  # fmt: skip
    assert ok and (moved["date"], moved["start_time"], moved["end_time"]) == (
        "2026-04-16", "15:00", "16:00",
    )  # fmt: skip
    assert db.get("events", "E-0004")["room_id"] == "R-102"
    ok, moved, _ = call(
        "reschedule_calendar_event",
        db,
        event_id="E-0004",
        new_date="2026-04-16",
        new_start_time="15:00",
        new_end_time="15:30",
    )
    assert ok and moved["end_time"] == "15:30"


def test_cancel_calendar_event_notifies_attendees():
    ok, out, db = call("cancel_calendar_event", event_id="E-0015")
    assert ok and out["status"] == "cancelled" and len(out["notified"]) == 4
    assert db.get("events", "E-0015")["status"] == "cancelled"
    assert error_code("cancel_calendar_event", db, event_id="E-0015") == "invalid_state"
    assert (
        call("cancel_calendar_event", event_id="E-0012", notify_attendees=False)[1]["notified"]
        == []
    )


def test_respond_to_invitation():
    # accept puts a busy event on the work calendar
    ok, out, db = call("respond_to_invitation", invitation_id="INV-0001", response="accept")
    assert ok and out == {"invitation_id": "INV-0001", "title": "Design critique: onboarding flow",
                          "status": "accepted", "event_id": "E-0027"}  # fmt: skip
    added = db.get("events", "E-0027")
    assert added["my_role"] == "attendee" and added["show_as"] == "busy"
    assert "INV-0001" not in [
        i["invitation_id"] for i in call("list_pending_invitations", db)[1]["invitations"]
    ]
    # declining is allowed after the RSVP deadline and adds nothing
    ok, out, db = call("respond_to_invitation", db, invitation_id="INV-0004", response="decline")
    assert ok and out["status"] == "declined" and out["event_id"] is None
    # tentative shows as free
    ok, out, db = call("respond_to_invitation", db, invitation_id="INV-0003", response="tentative")
    assert db.get("events", out["event_id"])["show_as"] == "free"


def test_update_event_attendees():
    ok, updated, db = call("update_event_attendees", event_id="E-0020", add_emails=[NINA, MARCO],
                           remove_emails=[SOFIA])  # fmt: skip
    assert ok and updated["attendees"] == [NINA, MARCO]
    assert db.get("events", "E-0020")["attendees"] == [NINA, MARCO]
    # Nina is now busy at 13:30 on 23 April
    clash = event("13:30", "14:00", "2026-04-23", calendar_id="personal", show_as="free",
                  attendee_emails=[NINA])  # fmt: skip
    assert error_code("create_calendar_event", db, **clash) == "invalid_state"


def test_book_meeting_room_replaces_room():
    ok, booked, db = call("book_meeting_room", event_id="E-0003", room_id="R-102")
    assert ok and booked["room_id"] == "R-102" and booked["location"] == "Glacier (HQ, floor 1)"
    # Fjord is released, Glacier taken
    rooms = call("search_meeting_rooms", db, date="2026-04-14", start_time="11:00",
                 end_time="12:00", equipment=["video"], building="HQ")[1]  # fmt: skip
    assert [r["room_id"] for r in rooms["rooms"]] == ["R-101", "R-201"]
