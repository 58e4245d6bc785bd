"""Value normalisation: numbers, times, dates, case, fuzzy support spans."""

from __future__ import annotations

from evaluators.sage.normalize import (
    normalize_text,
    parse_date,
    parse_time,
    span_support,
    typed_key,
    value_similarity,
)


def test_normalize_text():
    # case, number words, ordinal suffixes, punctuation and a leading article
    assert normalize_text("The Two Tickets, 3rd row!") == "2 tickets 3 row"


def test_times():
    assert parse_time("half past 11 in the morning") == "11:30"
    assert parse_time("7 pm") == "19:00"
    assert parse_time("quarter to 8 in the evening") == "19:45"
    # a bare count is not a time
    assert parse_time("2 people") is None


def test_dates():
    assert parse_date("March 3rd") == "md:3-3"
    assert parse_date("2019-03-01") == "md:3-1"
    assert parse_date("next Friday") == "dow:friday"
    assert parse_date("the 4th of this month") == "d:4"
    # a day-only date agrees with a month-day date on the same day
    assert value_similarity("March 5th", "the 5th") == 1.0


def test_value_similarity_typed():
    # equal times in two surface forms
    assert value_similarity("11:30 am", "half past 11 in the morning") == 1.0
    # two different times contradict
    assert value_similarity("6 pm", "7 pm") == 0.0
    # case only
    assert value_similarity("San Jose", "san jose") == 1.0
    # booleans and dontcare are typed
    assert typed_key("True") == ("bool", "true")
    assert typed_key("dontcare") == ("dontcare", "dontcare")


def test_span_support():
    # number words count as digits, whole words only
    assert span_support("2", "A table for two people") == (1.0, "2")
    # a typed value finds its paraphrase
    assert span_support("19:00", "Make it 7 pm tonight")[0] == 1.0
    # an unrelated city is weakly supported (best fuzzy window well below 1)
    assert span_support("San Francisco", "restaurants in San Jose")[0] < 0.7
