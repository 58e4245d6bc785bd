"""The handler helpers the packs share (mads_bench/domains/_shared.py), and how each pack
words the one refusal that differs: an impossible date."""

from datetime import date

import pytest

from mads_bench.database import Database, InvalidRequest
from mads_bench.domains._shared import (
    VALID_ISO_DATE,
    card_expired,
    days_since,
    parse_date,
    pick,
    to_hhmm,
    to_minutes,
)
from tests.domains import helpers

DB = Database({}, {}, date(2026, 3, 16))

# An impossible date in each pack's first date-taking tool, and the wording it is refused in:
# calendar and restaurant booking say what it is not, travel and home services name the format.
IMPOSSIBLE_DATES = [
    ("calendar", "list_calendar_events", {"start_date": "2026-02-30", "end_date": "2026-03-02"},
     "'2026-02-30' is not a calendar date"),
    ("restaurant_booking", "check_table_availability",
     {"restaurant_id": "RST-101", "date": "2026-02-30", "party_size": 2},
     "'2026-02-30' is not a calendar date"),
    ("travel", "search_flights", {"origin": "JFK", "destination": "LHR", "date": "2026-02-30"},
     "'2026-02-30' is not a valid date (YYYY-MM-DD)"),
    ("home_services", "find_available_technicians",
     {"service_code": "ac_tune_up", "zip_code": "97214", "date": "2026-04-31"},
     "'2026-04-31' is not a valid date (YYYY-MM-DD)"),
]  # fmt: skip


def test_parse_date_reads_iso_dates():
    assert parse_date("2026-04-16") == date(2026, 4, 16)
    assert parse_date("2026-04-16", VALID_ISO_DATE) == date(2026, 4, 16)


def test_parse_date_refuses_by_default_as_not_a_calendar_date():
    with pytest.raises(InvalidRequest) as err:
        parse_date("2026-02-30")
    assert err.value.message == "'2026-02-30' is not a calendar date"


def test_parse_date_refuses_with_the_expected_wording_it_is_given():
    with pytest.raises(InvalidRequest) as err:
        parse_date("16/04/2026", VALID_ISO_DATE)
    assert err.value.message == "'16/04/2026' is not a valid date (YYYY-MM-DD)"


@pytest.mark.parametrize(
    ("domain", "tool", "arguments", "message"),
    IMPOSSIBLE_DATES,
    ids=[domain for domain, *_ in IMPOSSIBLE_DATES],
)
def test_each_pack_refuses_an_impossible_date_in_its_wording(domain, tool, arguments, message):
    refusal = helpers.error(domain, tool, **arguments)
    assert refusal == {"code": "invalid_request", "message": message}


def test_clock_times_round_trip():
    # midnight, the calendar's NOW, the last half-hour seating of the day
    for hhmm, minutes in [("00:00", 0), ("09:00", 540), ("23:30", 1410)]:
        assert to_minutes(hhmm) == minutes and to_hhmm(minutes) == hhmm


def test_days_since_counts_to_the_backend_date():
    assert days_since(DB, "2026-03-16") == 0
    assert days_since(DB, "2026-02-14") == 30
    assert days_since(DB, "2026-03-20") == -4  # a future date counts negative


def test_pick_keeps_the_order_asked_for_and_needs_every_field():
    record = {"id": "A1", "status": "placed", "total": 9.5}
    assert list(pick(record, "total", "id")) == ["total", "id"]
    with pytest.raises(KeyError):
        pick(record, "missing")


def test_a_card_is_valid_through_its_expiry_month():
    assert card_expired(DB, "2026-02")
    assert not card_expired(DB, "2026-03") and not card_expired(DB, "2027-01")
