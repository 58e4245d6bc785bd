"""Tests of `mads_bench.text`: each setting of the one value normaliser and sentence splitter
that a caller relies on (agents, validator, SAGE, ATOD)."""

from __future__ import annotations

from mads_bench.text import canonical_number, normalise, split_sentences

SAGE = {
    "casefold": False,
    "underscores": False,
    "punctuation": "values",
    "numbers": "words",
    "drop_leading": {"the", "a", "on"},
}


def test_defaults_lower_case_and_single_spaces() -> None:
    # casefold, underscores as spaces, whitespace collapsed; punctuation and numbers untouched
    assert normalise("  Premium_Economy,\tSTRASSE  1,200 ") == "premium economy, strasse 1,200"
    assert normalise("Straße") == "strasse"  # casefold, not lower


def test_agents_form_spells_numbers_one_way() -> None:
    # the scripted agents: 1,200.00 = 1200, signs and punctuation kept
    assert normalise("Pay 1,200.00 to Premium_Economy", numbers="canonical") == (
        "pay 1200 to premium economy"
    )
    assert normalise("refund -59.90, ref O-12.", numbers="canonical") == "refund -59.9, ref o-12."
    # a number glued to a word or decimal point is not a number on its own
    assert normalise("A1 v2.0.1", numbers="canonical") == "a1 v2.0.1"


def test_validator_form_keeps_ascii_words_only() -> None:
    # the validator: punctuation (and letters outside a-z) become word breaks
    assert normalise("Order #O-12: café_au_lait", punctuation="words") == "order o 12 caf au lait"
    assert normalise("$1,200.00", punctuation="words") == "1 200 00"


def test_sage_form() -> None:
    # SAGE: number words and ordinals as digits, a leading article dropped, value marks kept
    assert normalise("The Two Tickets, 3rd row!", **SAGE) == "2 tickets 3 row"
    assert normalise("at 11:30 am, $20.50 @ 2-3 pm", **SAGE) == "at 11:30 am $20.50 @ 2-3 pm"
    # a dot between letters is not a decimal point
    assert normalise("ana@x.com", **SAGE) == "ana@x com"
    # underscores stay, a possessive 's and a sentence full stop go, typographic ’ is '
    assert normalise("Ana’s premium_economy seat.", **SAGE) == "ana premium_economy seat"
    # a full stop right after an ordinal's digit stays (the ordinal goes first)
    assert normalise("the 3rd.", **SAGE) == "3."
    # lower, not casefold: ß stays
    assert normalise("Straße", **SAGE) == "straße"
    # the last word is never dropped
    assert normalise("The", **SAGE) == "the"


def test_canonical_number() -> None:
    # integers without .0, else the shortest repr
    assert canonical_number(1200.0) == "1200" and canonical_number(-59.99) == "-59.99"
    # the validator's amounts: magnitude, six places
    assert canonical_number(-59.99, signed=False, places=6) == "59.99"
    assert canonical_number(0.1 + 0.2, signed=False, places=6) == "0.3"
    # rounding applies to non-integers only: 0.9999999 stays a decimal
    assert canonical_number(0.9999999, places=6) == "1.0"
    assert canonical_number(0.1 + 0.2) == "0.30000000000000004"


def test_split_sentences_default_splits_at_line_breaks() -> None:
    # ATOD clauses and the role-confusion check: a line break always ends a sentence
    assert split_sentences("Hi. I need a bus!\nAlso  what's\n\nthe weather?  ") == [
        "Hi.",
        "I need a bus!",
        "Also  what's",
        "the weather?",
    ]
    assert split_sentences("") == [] and split_sentences(" \n ") == []


def test_split_sentences_without_line_breaks() -> None:
    # SAGE: only whitespace after . ! ? splits; a bare line break does not
    assert split_sentences("Is it late\nNo. Fine", newlines=False) == ["Is it late\nNo.", "Fine"]


def test_split_sentences_end_marks() -> None:
    # the scripted user: a line break ends a sentence only when more whitespace follows it
    assert split_sentences("yes\nno", ends=".!?\n", newlines=False) == ["yes\nno"]
    assert split_sentences("yes\n\nno. ok", ends=".!?\n", newlines=False) == ["yes", "no.", "ok"]


def test_split_sentences_strip() -> None:
    # the role-confusion check strips list bullets, not other whitespace
    assert split_sentences("- Where is it?\n* Now\r", strip=" -*\t") == ["Where is it?", "Now\r"]
    # SAGE embeds sentences as written: strip="" keeps the text's own edges
    assert split_sentences("  Done. Ok ", newlines=False, strip="") == ["  Done.", "Ok "]
