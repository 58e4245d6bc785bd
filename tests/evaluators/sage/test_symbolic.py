"""S1 rules: definitive answers where the schema and acts decide, abstention otherwise."""

from __future__ import annotations

from evaluators.sage import DialogueAct, compile_turn
from evaluators.sage.symbolic import s1_decide
from tests.evaluators.sage.conftest import turn


def decide(spec, record, criterion_id):
    criterion = next(c for c in compile_turn(spec, record) if c.criterion_id == criterion_id)
    return s1_decide(criterion, record)[0]


def test_clean_turn_all_false(spec):
    record = turn()
    # every criterion of the clean turn is decided false by S1
    assert [s1_decide(c, record)[0] for c in compile_turn(spec, record)] == [False] * 5


def test_uv(spec):
    record = turn(state_after={"restaurant_name": "Sino", "city": "Oakland", "time": "7 pm"})
    # Oakland is nowhere in the history or user turn: S1 abstains, S2 must decide
    assert decide(spec, record, "UV:city") is None
    # a value given in another surface form is found by the INFORM act
    record = turn(
        state_after={"restaurant_name": "Sino", "city": "San Jose", "time": "19:00"},
        user_acts=[DialogueAct(act="INFORM", slot="time", values=["7 pm"])],
    )
    assert decide(spec, record, "UV:time") is False


def test_iuv(spec):
    dropped = turn(state_after={"restaurant_name": "Sino", "time": "7 pm"})
    # the user INFORMed city, s_t has no city: ignored user value
    assert decide(spec, dropped, "IUV:city") is True
    stale = turn(
        state_before={"restaurant_name": "Sino", "city": "Oakland"},
        state_after={"restaurant_name": "Sino", "city": "Oakland", "time": "7 pm"},
    )
    # s_t keeps a different (stale) city: not verbatim, S2 decides
    assert decide(spec, stale, "IUV:city") is None


def test_wnf(spec):
    def asking(slot):
        return turn(
            agent="?",
            agent_acts=[DialogueAct(act="REQUEST", slot=slot)],
            state_after={"restaurant_name": "Sino"},
        )

    # an unfilled required slot is legal
    assert decide(spec, asking("city"), "WNF:city") is False
    # re-asking a filled slot is a wrong next field
    assert decide(spec, asking("restaurant_name"), "WNF:restaurant_name") is True
    # a slot outside the intent is a wrong next field
    assert decide(spec, asking("phone_number"), "WNF:phone_number") is True
    # an optional empty slot is in the indeterminate set: abstain
    assert decide(spec, asking("party_size"), "WNF:party_size") is None


def test_pc(spec):
    premature = turn(
        state_after={"restaurant_name": "Sino"}, agent_acts=[DialogueAct(act="NOTIFY_SUCCESS")]
    )
    # confirming with city and time empty
    assert decide(spec, premature, "PC") is True
    # the same text without acts: S1 cannot tell whether it confirms
    assert decide(spec, premature.without_acts(), "PC") is None
    # a search intent is not a transaction: any confirmation is premature
    search = turn(intent="FindRestaurants", agent_acts=[DialogueAct(act="NOTIFY_SUCCESS")])
    assert decide(spec, search, "PC") is True
