"""Handlers of the calendar domain: one function per tool in tools.yaml.

The backend clock reads ``NOW`` on ``db.today``. A *slot* is ``(day, start, end)``.
The user is busy during every confirmed, busy event on their own calendars; a
colleague is busy during their ``busy_blocks`` and the user's events they attend.
"""

from __future__ import annotations

from typing import Any

from mads_bench.database import Database, InvalidRequest, InvalidState, NotFound, PolicyViolation
from mads_bench.domains._shared import WEEKDAYS, parse_date, to_hhmm, to_minutes

Slot = tuple[str, str, str]
NOW = "09:00"
OWN_CALENDARS = ("work", "personal", "family")
MAX_EVENT_MINUTES = 8 * 60
MAX_LIST_DAYS = 31
ROOM_HORIZON_DAYS = 30
MAX_ATTENDEES = 25
SLOT_STEP_MINUTES = 30
MAX_SLOTS = 8
STATUS_AFTER = {"accept": "accepted", "tentative": "tentative", "decline": "declined"}


# ----------------------------------------------------------------------- helpers


def _overlaps(slot: Slot, record: dict[str, Any]) -> bool:
    day, start, end = slot
    return (
        record["date"] == day
        and to_minutes(start) < to_minutes(record["end_time"])
        and to_minutes(record["start_time"]) < to_minutes(end)
    )


def _is_past(db: Database, day: str, start: str) -> bool:
    when = parse_date(day)
    return when < db.today or (when == db.today and to_minutes(start) < to_minutes(NOW))


def _check_times(db: Database, slot: Slot) -> None:
    day, start, end = slot
    if to_minutes(end) <= to_minutes(start):
        raise InvalidRequest(f"end time {end} must be after start time {start}")
    if to_minutes(end) - to_minutes(start) > MAX_EVENT_MINUTES:
        raise InvalidRequest("events can last at most 8 hours")
    if _is_past(db, day, start):
        raise InvalidRequest(f"{day} {start} is in the past")


def _contact(db: Database, email: str) -> dict[str, Any]:
    found = db.find("contacts", email=email)
    if not found:
        raise NotFound(f"no contact with e-mail {email!r} in the directory")
    return found[0]


def _holiday(db: Database, day: str) -> str | None:
    found = db.find("events", calendar_id="company_holidays", date=day, status="confirmed")
    return f"{day} is a company holiday ({found[0]['title']})" if found else None


def _my_conflict(db: Database, slot: Slot, ignore: str | None = None) -> dict[str, Any] | None:
    for event in db.find("events", date=slot[0], status="confirmed", show_as="busy"):
        own = event["calendar_id"] in OWN_CALENDARS and event["event_id"] != ignore
        if own and _overlaps(slot, event):
            return event
    return None


def _attendee_busy(
    db: Database, email: str, slot: Slot, ignore: str | None = None
) -> dict[str, Any] | None:
    meetings = [
        e
        for e in db.find("events", date=slot[0], status="confirmed")
        if email in e["attendees"] and e["event_id"] != ignore
    ]
    busy = [b for b in db.find("busy_blocks", email=email) + meetings if _overlaps(slot, b)]
    return busy[0] if busy else None


def _unavailable(contact: dict[str, Any], day: str, start: str = "", end: str = "") -> str | None:
    """Why the contact cannot meet then (day off, outside their hours), or None."""
    weekday = parse_date(day).weekday()
    if WEEKDAYS[weekday] not in contact["working_days"]:
        return f"{contact['name']} does not work on {parse_date(day).strftime('%A')}s"
    hours = contact["available_hours"]
    if start and (start < hours["start"] or end > hours["end"]):
        return (
            f"{contact['name']} only takes meetings between {hours['start']} and "
            f"{hours['end']} (your time zone)"
        )
    return None


def _check_attendees(
    db: Database, emails: list[str], slot: Slot, ignore: str | None = None
) -> None:
    holiday = _holiday(db, slot[0]) if emails else None
    if holiday:
        raise PolicyViolation(f"{holiday}; meetings with attendees cannot be scheduled")
    for email in emails:
        contact = _contact(db, email)
        reason = _unavailable(contact, *slot)
        if reason:
            raise PolicyViolation(reason, attendee=email)
        busy = _attendee_busy(db, email, slot, ignore)
        if busy:
            when = f"{busy['start_time']}-{busy['end_time']} on {slot[0]}"
            raise InvalidState(f"{contact['name']} is busy {when}", attendee=email)


def _check_my_time(db: Database, slot: Slot, ignore: str | None = None) -> None:
    other = _my_conflict(db, slot, ignore)
    if other:
        raise InvalidState(
            f"conflicts with {other['title']!r} ({other['start_time']}-{other['end_time']})",
            conflicting_event_id=other["event_id"],
        )


def _room_is_free(db: Database, room_id: str, slot: Slot, ignore: str | None = None) -> bool:
    bookings = db.find("room_bookings", room_id=room_id)
    events = db.find("events", room_id=room_id, status="confirmed")
    taken = bookings + [e for e in events if e["event_id"] != ignore]
    return not any(_overlaps(slot, b) for b in taken)


def _in_maintenance(room: dict[str, Any], day: str) -> bool:
    return room["status"] == "maintenance" and day <= (room["maintenance_until"] or day)


def _check_room_horizon(db: Database, day: str) -> None:
    if (parse_date(day) - db.today).days > ROOM_HORIZON_DAYS:
        raise PolicyViolation(f"rooms can be booked at most {ROOM_HORIZON_DAYS} days ahead")


def _check_room(
    db: Database, room_id: str, slot: Slot, people: int, ignore: str | None = None
) -> dict[str, Any]:
    room = db.get("rooms", room_id)
    if _in_maintenance(room, slot[0]):
        raise InvalidState(f"{room['name']} is in maintenance until {room['maintenance_until']}")
    _check_room_horizon(db, slot[0])
    if people > room["capacity"]:
        raise PolicyViolation(f"{room['name']} seats {room['capacity']}, not {people} people")
    if not _room_is_free(db, room_id, slot, ignore):
        raise InvalidState(f"{room['name']} is already booked during {slot[1]}-{slot[2]}")
    return room


def _room_location(room: dict[str, Any]) -> str:
    return f"{room['name']} ({room['building']}, floor {room['floor']})"


def _own_event(db: Database, event_id: str) -> dict[str, Any]:
    """The event, if the user may change it (own calendar, organizer, upcoming, not cancelled)."""
    event = db.get("events", event_id)
    if event["calendar_id"] not in OWN_CALENDARS:
        calendar = db.get("calendars", event["calendar_id"])
        raise PolicyViolation(f"the {calendar['name']} calendar is read-only")
    if event["my_role"] != "organizer":
        raise PolicyViolation(
            f"only the organizer ({event['organizer']}) can change {event['title']!r}; "
            "you can decline it or ask them to move it"
        )
    if event["status"] == "cancelled":
        raise InvalidState(f"{event['title']!r} is already cancelled")
    if _is_past(db, event["date"], event["start_time"]):
        raise InvalidState(f"{event['title']!r} has already taken place")
    return event


def _slot_of(record: dict[str, Any]) -> Slot:
    return record["date"], record["start_time"], record["end_time"]


# ------------------------------------------------------------------------- reads


def list_calendar_events(
    db: Database,
    start_date: str,
    end_date: str,
    calendar_id: str | None = None,
    query: str | None = None,
    include_cancelled: bool = False,
) -> dict[str, Any]:
    days = (parse_date(end_date) - parse_date(start_date)).days
    if days < 0:
        raise InvalidRequest("end_date must be on or after start_date")
    if days >= MAX_LIST_DAYS:
        raise InvalidRequest(f"list at most {MAX_LIST_DAYS} days at a time")
    words = (query or "").casefold().split()
    events = [
        e
        for e in db.find("events", calendar_id=calendar_id)
        if start_date <= e["date"] <= end_date
        and (include_cancelled or e["status"] != "cancelled")
        and all(w in e["title"].casefold() for w in words)
    ]
    events.sort(key=lambda e: (e["date"], e["start_time"], e["event_id"]))
    return {"events": events, "count": len(events)}


def get_calendar_event(db: Database, event_id: str) -> dict[str, Any]:
    return db.get("events", event_id)


def find_common_free_slots(
    db: Database,
    date: str,
    duration_minutes: int,
    attendee_emails: list[str] | None = None,
    not_before: str = "09:00",
    not_after: str = "17:00",
) -> dict[str, Any]:
    emails = list(attendee_emails or [])
    if not_after <= not_before:
        raise InvalidRequest("not_after must be later than not_before")
    if _is_past(db, date, "23:59"):
        raise InvalidRequest(f"{date} is in the past")
    contacts = [_contact(db, email) for email in emails]
    notes = [n for n in [_holiday(db, date) if emails else None] if n]
    notes += [n for n in (_unavailable(c, date) for c in contacts) if n]
    first = max(
        [to_minutes(not_before)] + [to_minutes(c["available_hours"]["start"]) for c in contacts]
    )
    last = min(
        [to_minutes(not_after)] + [to_minutes(c["available_hours"]["end"]) for c in contacts]
    )
    slots = []
    starts = [] if notes else range(first, last - duration_minutes + 1, SLOT_STEP_MINUTES)
    for start in starts:
        slot = (date, to_hhmm(start), to_hhmm(start + duration_minutes))
        if len(slots) == MAX_SLOTS:
            break
        if _is_past(db, date, slot[1]):
            continue
        if not _my_conflict(db, slot) and not any(_attendee_busy(db, e, slot) for e in emails):
            slots.append({"start_time": slot[1], "end_time": slot[2]})
    if not slots and not notes:
        notes.append("no common free time in the requested window")
    result = {"date": date, "duration_minutes": duration_minutes, "attendee_emails": emails}
    return {**result, "slots": slots, "notes": notes}


def search_meeting_rooms(
    db: Database,
    date: str,
    start_time: str,
    end_time: str,
    min_capacity: int = 1,
    equipment: list[str] | None = None,
    building: str | None = None,
) -> dict[str, Any]:
    slot = (date, start_time, end_time)
    _check_times(db, slot)
    _check_room_horizon(db, date)
    rooms = [
        r
        for r in db.find("rooms", building=building)
        if r["capacity"] >= min_capacity
        and set(equipment or []) <= set(r["equipment"])
        and not _in_maintenance(r, date)
        and _room_is_free(db, r["room_id"], slot)
    ]
    rooms.sort(key=lambda r: (r["capacity"], r["room_id"]))
    return {"rooms": rooms, "count": len(rooms)}


def lookup_contact(db: Database, query: str) -> dict[str, Any]:
    words = query.casefold().split()
    contacts = [
        c
        for c in db.find("contacts")
        if all(
            w in f"{c['name']} {c['email']} {c['team']} {c['company']}".casefold() for w in words
        )
    ]
    contacts.sort(key=lambda c: c["name"])
    return {"contacts": contacts, "count": len(contacts)}


def list_pending_invitations(db: Database) -> dict[str, Any]:
    invitations = db.find("invitations", status="pending")
    for inv in invitations:
        del inv["event_id"]
        inv["rsvp_open"] = db.today.isoformat() <= inv["rsvp_by"]
    invitations.sort(key=lambda i: (i["date"], i["start_time"], i["invitation_id"]))
    return {"invitations": invitations, "count": len(invitations)}


# ------------------------------------------------------------------------ writes


def create_calendar_event(
    db: Database,
    calendar_id: str,
    title: str,
    date: str,
    start_time: str,
    end_time: str,
    attendee_emails: list[str] | None = None,
    location: str = "",
    room_id: str | None = None,
    description: str = "",
    show_as: str = "busy",
) -> dict[str, Any]:
    calendar = db.get("calendars", calendar_id)
    if calendar["access"] != "owner":
        raise PolicyViolation(f"the {calendar['name']} calendar is read-only")
    attendees, slot = list(attendee_emails or []), (date, start_time, end_time)
    _check_times(db, slot)
    if show_as == "busy":
        _check_my_time(db, slot)
    _check_attendees(db, attendees, slot)
    if room_id is not None:
        if calendar_id != "work":
            raise InvalidRequest("meeting rooms can only be booked for work events")
        location = location or _room_location(_check_room(db, room_id, slot, len(attendees) + 1))
    event_id = db.next_id("events", "E-")
    return db.insert("events", {
        "event_id": event_id, "calendar_id": calendar_id, "title": title, "date": date,
        "start_time": start_time, "end_time": end_time, "my_role": "organizer",
        "organizer": "me", "attendees": attendees, "location": location, "room_id": room_id,
        "show_as": show_as, "status": "confirmed", "description": description,
    })  # fmt: skip


def reschedule_calendar_event(
    db: Database,
    event_id: str,
    new_date: str,
    new_start_time: str,
    new_end_time: str | None = None,
) -> dict[str, Any]:
    event = _own_event(db, event_id)
    if new_end_time is None:
        end = (
            to_minutes(new_start_time)
            + to_minutes(event["end_time"])
            - to_minutes(event["start_time"])
        )
        if end >= 24 * 60:
            raise InvalidRequest("the event would run past midnight")
        new_end_time = to_hhmm(end)
    slot = (new_date, new_start_time, new_end_time)
    if slot == _slot_of(event):
        raise InvalidRequest(f"{event['title']!r} is already at that time")
    _check_times(db, slot)
    if event["show_as"] == "busy":
        _check_my_time(db, slot, ignore=event_id)
    _check_attendees(db, event["attendees"], slot, ignore=event_id)
    if event["room_id"]:
        _check_room(db, event["room_id"], slot, len(event["attendees"]) + 1, ignore=event_id)
    changes = {"date": new_date, "start_time": new_start_time, "end_time": new_end_time}
    return db.update("events", event_id, **changes)


def cancel_calendar_event(
    db: Database, event_id: str, notify_attendees: bool = True, message: str = ""
) -> dict[str, Any]:
    event = _own_event(db, event_id)
    db.update("events", event_id, status="cancelled")
    notified = event["attendees"] if notify_attendees else []
    return {
        "event_id": event_id,
        "title": event["title"],
        "status": "cancelled",
        "notified": notified,
    }


def respond_to_invitation(
    db: Database, invitation_id: str, response: str, comment: str = ""
) -> dict[str, Any]:
    inv = db.get("invitations", invitation_id)
    if inv["status"] != "pending":
        raise InvalidState(f"invitation {invitation_id} was already answered ({inv['status']})")
    if _is_past(db, inv["date"], inv["start_time"]):
        raise InvalidState(f"{inv['title']!r} has already started")
    event_id = None
    if response != "decline":
        if db.today.isoformat() > inv["rsvp_by"]:
            raise PolicyViolation(
                f"RSVP for {inv['title']!r} closed on {inv['rsvp_by']}; "
                f"only the organizer ({inv['organizer']}) can add you now"
            )
        if response == "accept":
            _check_my_time(db, _slot_of(inv))
        event_id = db.next_id("events", "E-")
        fields = {k: inv[k] for k in ("title", "date", "start_time", "end_time", "attendees")}
        db.insert("events", {
            "event_id": event_id, "calendar_id": "work", **fields, "my_role": "attendee",
            "organizer": inv["organizer"], "location": inv["location"], "room_id": None,
            "show_as": "busy" if response == "accept" else "free", "status": "confirmed",
            "description": "",
        })  # fmt: skip
    status = STATUS_AFTER[response]
    db.update("invitations", invitation_id, status=status, event_id=event_id)
    return {
        "invitation_id": invitation_id,
        "title": inv["title"],
        "status": status,
        "event_id": event_id,
    }


def update_event_attendees(
    db: Database,
    event_id: str,
    add_emails: list[str] | None = None,
    remove_emails: list[str] | None = None,
) -> dict[str, Any]:
    added, removed = list(add_emails or []), list(remove_emails or [])
    if not added and not removed:
        raise InvalidRequest("give add_emails or remove_emails")
    event = _own_event(db, event_id)
    for email in removed:
        if email not in event["attendees"]:
            raise InvalidRequest(f"{email} is not invited to {event['title']!r}")
    for email in added:
        if email in event["attendees"]:
            raise InvalidRequest(f"{email} is already invited to {event['title']!r}")
    _check_attendees(db, added, _slot_of(event), ignore=event_id)
    attendees = [e for e in event["attendees"] if e not in removed] + added
    if len(attendees) > MAX_ATTENDEES:
        raise PolicyViolation(f"events can have at most {MAX_ATTENDEES} attendees")
    room = db.get("rooms", event["room_id"]) if event["room_id"] else None
    if room and len(attendees) + 1 > room["capacity"]:
        people = len(attendees) + 1
        raise PolicyViolation(f"{room['name']} seats {room['capacity']}, not {people} people")
    return db.update("events", event_id, attendees=attendees)


def book_meeting_room(db: Database, event_id: str, room_id: str) -> dict[str, Any]:
    event = _own_event(db, event_id)
    if event["calendar_id"] != "work":
        raise InvalidRequest("meeting rooms can only be booked for work events")
    if event["room_id"] == room_id:
        raise InvalidState(f"{room_id} is already booked for {event['title']!r}")
    people = len(event["attendees"]) + 1
    room = _check_room(db, room_id, _slot_of(event), people, ignore=event_id)
    return db.update("events", event_id, room_id=room_id, location=_room_location(room))
