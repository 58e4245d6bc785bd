"""Normalised value matching: numbers, dates, times, phones and free text."""

from datetime import date

from simulation.validator.values import Evidence, dates_in, times_in, value_found, word_overlap

TODAY = date(2026, 4, 15)


def test_numbers_match_across_spellings():
    evidence = Evidence.of(["Move $1,200.00 and pay -59.99, two bags"], today=TODAY)
    # separators, sign, currency and number words do not matter
    assert value_found(1200, evidence) and value_found(59.99, evidence)
    assert value_found(2, evidence) and value_found("1200", evidence)
    # a different amount is not found
    assert not value_found(1300, evidence)


def test_dates_in_natural_forms():
    # ISO, month-day, day-month with weekday, ordinal, and relative words (today = 15 April)
    text = "2026-05-01, April 20th, Friday 17 April, the 3rd of May 2027, tomorrow"
    assert dates_in(text, TODAY) == {
        "2026-05-01",
        "2026-04-20",
        "2026-04-17",
        "2027-05-03",
        "2026-04-16",
    }


def test_times_in_natural_forms():
    # 24h, am/pm with and without minutes, noon; bare numbers are not times
    assert times_in("at 14:30, 2pm, 9:15 am or noon, table for 4") == {
        "14:30",
        "14:00",
        "09:15",
        "12:00",
    }


def test_ids_phones_and_words():
    evidence = Evidence.of(["Call (312) 555-0142 about order ORD-50006, Premium_Economy"])
    # phone digits match in any formatting; ids and enum-like words by word boundaries
    assert value_found("+1-312-555-0142", evidence)
    assert value_found("ord-50006", evidence) and value_found("premium economy", evidence)
    # a prefix of an id is not the id
    assert not value_found("ORD-5000", evidence)


def test_word_overlap_of_free_text():
    evidence = Evidence.of(["burst pipe under the kitchen sink"])
    # content words "burst pipe kitchen sink water" -> 4 of 5 occur
    assert word_overlap("Burst pipe in the kitchen sink, water", evidence) == 0.8
