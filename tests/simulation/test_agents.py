"""Tests of the simulation agents: text helpers, persona style, scripted user and assistant,
LLM agents on the `fake:` backend."""

from __future__ import annotations

import pytest

from mads_bench.catalog import domain_of, load_domain, load_personas
from mads_bench.data_model import Message, Scenario, ToolResult
from mads_bench.pre_act import parse_step
from mads_bench.text import normalise
from simulation.agents import LLMAssistant, LLMUser, ScriptedAssistant, ScriptedUser, make_agent
from simulation.agents.grounding import SlotGrounding
from simulation.agents.prompts import assistant_system_prompt
from simulation.agents.speech import describe_result, is_empty_result, spoken_fallback
from simulation.agents.style import StyleProfile
from simulation.agents.text import (
    DONE_TOKEN,
    asks_confirmation,
    is_affirmative,
    mentioned_slots,
    same_value,
    spoken_value,
    value_in,
)


def mock(scenario_id: str):
    return next(s for s in load_domain("mock").scenarios if s.id == scenario_id)


def said(text: str) -> list[Message]:
    return [Message(role="assistant", content=text, turn_index=0)]


def canonical(text: str) -> str:
    # the agents' normal form, in which `value_in` looks for values
    return normalise(text, numbers="canonical")


def test_text_helpers() -> None:
    # numbers are compared in one spelling, strings case-insensitively, whole tokens only
    assert canonical("Pay 1,200.00 to Premium_Economy") == "pay 1200 to premium economy"
    assert value_in(142.80, canonical("bill of 142.8 dollars"))
    assert not value_in("O1", canonical("order O12"))
    # the longest label wins: "charge amount" is not also "amount"
    assert mentioned_slots("the charge amount?", ["amount", "charge_amount"]) == ["charge_amount"]
    # a frustrated "don't" in another sentence does not cancel the yes
    assert is_affirmative("I don't trust these bots. Yes, please go ahead.")
    assert not is_affirmative("No, don't do that.")
    assert asks_confirmation("I am ready to cancel order O1. Shall I go ahead?")
    # a whole number is not found inside a decimal ("3" in a 4.3 rating), but at a full stop
    assert not value_in(3, canonical("rating 4.3")) and value_in(3, canonical("for 3."))


def test_object_values() -> None:
    address = {"recipient": "Ana Ruiz", "line1": "210 Grove St", "line2": None, "zip": "07302"}
    # an object is said as its filled-in values, in order
    assert spoken_value(address) == "Ana Ruiz, 210 Grove St, 07302"
    # it appears in a text when every filled-in value does; one missing value is enough to fail
    assert value_in(address, canonical("new address: Ana Ruiz, 210 Grove St, 07302."))
    assert not value_in(address, canonical("Ana Ruiz, 07302"))
    # objects compare key by key, values normalised
    assert same_value(address, {**address, "recipient": "ANA RUIZ"})
    assert not same_value(address, {**address, "line2": "Apt 1"})


def test_object_slot_is_grounded_as_a_whole() -> None:
    sofa = next(
        s
        for s in load_domain("online_shopping").scenarios
        if s.id == "online_shopping-sofa-new-address-unhappy"
    )
    grounding = SlotGrounding(sofa)
    call = sofa.gold_workflow[1].arguments  # update_order_address(order_id, address)
    users = [canonical("Send my sofa order ORD-50004 to my new apartment.")]
    # the old address's city and ZIP are in the tool result, but the new address was never
    # said: the whole object is missing, so the assistant asks for "the new address"
    tools = canonical('{"city": "Jersey City", "postal_code": "07302", "line1": "55 Montgomery"}')
    assert grounding.resolve(call, users, tools)[1] == ["new_address"]
    users.append(canonical(f"new address: {spoken_value(sofa.slots['new_address'])}"))
    # once said, nothing is missing and nothing is derived from the task context
    assert grounding.resolve(call, users, tools)[1:] == ([], [], [])


def test_speech_helpers() -> None:
    # the fallback instruction becomes first-person speech with the alternative
    text = spoken_fallback("Explain that the kettle is out of stock and offer the blue mug.")
    assert text == "I'm sorry. The kettle is out of stock. I can offer the blue mug instead."
    # a search answer with no records is empty; a record with an empty list field is not
    assert is_empty_result({"products": [], "count": 0, "query": "x"})
    assert not is_empty_result({"a": 1, "b": 2, "c": 3, "d": 4, "open_invoices": []})
    # a write that succeeded found something, even with an empty list in its answer
    cancelled = {"event_id": "E-1", "status": "cancelled", "notified": []}
    assert not is_empty_result(cancelled, "write") and is_empty_result({"events": []}, "read")
    # a record with a nested object is not a search answer
    assert not is_empty_result({"order": {"id": "O1"}, "lines": []})
    # an empty list inside a result reads "none", not "nothing found"
    assert describe_result(cancelled) == "event ID E-1; status cancelled; notified: none"


def test_style_profiles_are_read_from_persona_fields() -> None:
    personas = load_personas()
    tomasz = StyleProfile.from_persona(personas["tomasz_nowak"])
    # quoted greeting and sign-off of the writing style
    assert (tomasz.greeting, tomasz.sign_off) == ("Good day.", "Thank you.")
    assert tomasz.apply(["I need help."], [], opening=True, closing=True) == (
        "Good day. I need help. Thank you."
    )
    # "All lowercase, almost no punctuation" persona: lowercase, full stops dropped
    aiko = StyleProfile.from_persona(personas["aiko_tanaka"])
    assert aiko.apply(["I want A."], ["order ID: X1"]) == "i want a details: order id: x1"
    # terse dash-list persona: one fact per "- " line, filler sentences left out
    marcus = StyleProfile.from_persona(personas["marcus_oyelaran"])
    filler = ("Sure, here you go.",)
    assert marcus.apply(["Sure, here you go."], ["amount: 5"], filler=filler) == "- amount: 5"


def test_user_opening_withholds_partial_information() -> None:
    user = ScriptedUser(mock("mock-buy-mug-unhappy"), seed=0, domain=load_domain("mock"))
    opening = user.respond([]).content
    # the withheld quantity (2) is not volunteered; the item name is
    assert "quantity" not in opening and "blue mug" in opening
    # asked for it, the user answers and records the reveal
    answer = user.respond(said("Could you tell me the quantity?")).content
    assert "quantity" in answer.lower() and " 2" in answer  # worded per seed, value in full
    assert [i.detail for i in user.injections] == [
        "withheld ['quantity']",
        "revealed quantity when asked",
    ]


def test_user_confirms_then_says_done() -> None:
    user = ScriptedUser(mock("mock-cancel-normal"), seed=0, domain=load_domain("mock"))
    user.respond([])
    # a "shall I" question is confirmed, a completion report ends the conversation
    assert is_affirmative(user.respond(said("Shall I cancel order O1?")).content)
    closing = user.respond(said("All done. Order O1 has been cancelled.")).content
    assert closing.endswith(DONE_TOKEN)
    # the decline-with-alternatives path also ends it
    other = ScriptedUser(mock("mock-cancel-normal"), seed=0, domain=load_domain("mock"))
    other.respond([])
    assert DONE_TOKEN in other.respond(said("I'm sorry. I can offer a mug instead.")).content


def test_user_never_ends_on_a_non_answer() -> None:
    # no leaving after a few stalls: an assistant that never answers meets the turn cap
    user = ScriptedUser(mock("mock-cancel-normal"), seed=0, domain=load_domain("mock"))
    user.respond([])
    replies = [user.respond(said("Let me think.")).content for _ in range(6)]
    assert not any(DONE_TOKEN in r for r in replies)


def test_user_holds_the_assistant_to_its_request() -> None:
    # "all done" without the outcome (the order's new status) gets a follow-up naming it;
    # the report that tells it ends the conversation
    user = ScriptedUser(mock("mock-cancel-normal"), seed=0, domain=load_domain("mock"))
    user.respond([])
    follow_up = user.respond(said("All done, everything is taken care of.")).content
    assert DONE_TOKEN not in follow_up and "status" in follow_up
    view = said("All done, everything is taken care of.") + said("Order O1 is now cancelled.")
    assert DONE_TOKEN in user.respond(view).content


def test_user_follow_ups_are_worded_variously() -> None:
    # the follow-up is one of several wordings, chosen by the seed
    scenario = mock("mock-cancel-normal")
    texts = set()
    for seed in range(12):
        user = ScriptedUser(scenario, seed=seed, domain=domain_of(scenario))
        user.respond([])
        texts.add(user.respond(said("All done, everything is taken care of.")).content)
    assert len(texts) >= 4


def test_user_incremental_revelation_and_revision() -> None:
    scenario = Scenario.model_validate(
        {
            **load_domain("banking").scenarios[0].model_dump(),
            "complexity": "unhappy",
            "behaviors": [
                {"kind": "incremental_constraint_revelation", "reveal_order": ["account"]},
                {"kind": "goal_revision", "after_user_turn": 2, "revised_slots": {"account": "x"}},
            ],
        }
    )
    user = ScriptedUser(scenario, seed=0, domain=domain_of(scenario))
    # the queued slot is held back in the opening and revealed on the next turn
    assert "account: checking" not in user.respond([]).content
    assert "account: checking" in user.respond(said("Noted.")).content
    # at user turn 2 the revision is announced with the new value
    revised = user.respond(said("Working on it.")).content
    assert "account: x" in revised  # this persona writes key: value lines
    assert any(i.kind == "goal_revision" for i in user.injections)


def test_persona_slips_spare_values_and_cues() -> None:
    import random

    personas = load_personas()
    samuel = StyleProfile.from_persona(personas["samuel_adeyemi"])  # typos, 'pls', 'thx'
    assert {"typos", "abbreviations"} <= set(samuel.slips) and "pls" in samuel.abbreviations
    sentence = "I would like to know what the status is with the order from the store"
    slipped = {
        samuel.apply([sentence, "Yes, please."], ["the note: what the"], rng=random.Random(seed),
                     protected=("the note", "what the"))
        for seed in range(30)
    }  # fmt: skip
    # seeded typos and abbreviations differ between draws ...
    assert len(slipped) > 5 and any("teh" in t or "pls" in t for t in slipped)
    for text in slipped:
        # ... never inside a label or value, and a yes stays a yes
        assert "the note: what the" in text.split("details: ")[-1] and is_affirmative(text)
    # a persona without slips writes the same with or without a generator
    tomasz = StyleProfile.from_persona(personas["tomasz_nowak"])
    assert tomasz.apply([sentence], [], rng=random.Random(0)) == tomasz.apply([sentence], [])


def test_adversarial_tone_scales_with_intensity() -> None:
    base = load_domain("mock").scenarios[0]
    texts = {}
    for intensity in ("mild", "severe"):
        scenario = base.model_validate(
            {
                **base.model_dump(),
                "complexity": "unhappy",
                "behaviors": [{"kind": "adversarial_tone", "intensity": intensity}],
            }
        )
        texts[intensity] = (
            ScriptedUser(scenario, seed=3, domain=domain_of(scenario)).respond([]).content
        )
    # severe adds two phrases, the first in capitals; mild at most one, never shouted
    assert any(w.isupper() and len(w) > 3 for w in texts["severe"].split())
    assert not any(w.isupper() and len(w) > 3 for w in texts["mild"].split())


def test_assistant_grounds_retries_and_asks() -> None:
    scenario = mock("mock-buy-mug-unhappy")
    assistant = ScriptedAssistant(scenario, domain=domain_of(scenario))
    view = [Message(role="user", content="I want to buy a blue mug.", turn_index=0)]

    def step(result: ToolResult | None = None):
        if result is not None:
            view.append(Message(role="tool", content="{}", turn_index=0, tool_result=result))
        message = assistant.respond(view)
        view.append(message)
        return parse_step(message.content)  # strict: raises if not well-formed

    first = step()
    # the query is grounded, so it searches first; the plan names both tools
    assert first.action.arguments == {"query": "blue mug"} and "place_order" in first.plan
    timeout = {"code": "timeout", "message": "late", "retryable": True}
    retry = step(ToolResult(call_id="c0", name="search_items", ok=False, content=timeout))
    # a timeout is retried at once, and the think says which error and which attempt
    assert retry.action.name == "search_items" and retry.plan is None
    assert "timeout" in retry.think and "attempt 2" in retry.think
    items = {"items": [{"item_id": "I1", "name": "blue mug", "stock": 3}]}
    ask = step(ToolResult(call_id="c1", name="search_items", ok=True, content=items))
    # the quantity never came up, so it asks instead of guessing
    assert "quantity" in ask.action.text and ask.action.text.endswith("?")
    assert "place_order" in ask.think


def test_make_agent_factory() -> None:
    scenario = mock("mock-cancel-normal")
    # scripted specs give the scripted agents; a bad role or tool spec is a clear error
    assert isinstance(
        make_agent("assistant", "scripted", scenario, domain=domain_of(scenario)), ScriptedAssistant
    )
    with pytest.raises(ValueError, match="unknown role"):
        make_agent("judge", "scripted", scenario, domain=domain_of(scenario))
    with pytest.raises(ValueError, match="tool agent spec"):
        make_agent("tool", "scripted", scenario, domain=domain_of(scenario))


def test_llm_agents_on_fake_backend() -> None:
    from simulation.backends import get_backend

    scenario = mock("mock-cancel-normal")
    backend = get_backend("fake:", replies=['<think>t</think><action type="say">Hi'])
    assistant = make_agent(
        "assistant", "fake:", scenario, backend=backend, domain=domain_of(scenario)
    )
    assert isinstance(assistant, LLMAssistant)
    view = [Message(role="system", content="sys", turn_index=0)]
    # the stop string is restored so the step parses; the call stops at </action>
    assert assistant.respond(view).content.endswith("</action>")
    assert backend.settings[0]["stop"] == ["</action>"]
    user_backend = get_backend("fake:", replies=["hello there", ""])
    user = make_agent("user", "fake:", scenario, backend=user_backend, domain=domain_of(scenario))
    assert isinstance(user, LLMUser)
    # the brief is the system message; an empty reply ends with [DONE]
    assert user.respond([]).content == "hello there"
    assert "Priya Raman" in user_backend.calls[0][0]["content"]
    assert user.respond(said("Anything else?")).content == DONE_TOKEN


def test_llm_assistant_reads_the_context_it_was_trained_on() -> None:
    from simulation.agents.context import compact_context
    from simulation.backends import get_backend

    scenario = mock("mock-cancel-normal")
    domain = domain_of(scenario)
    step = '<think>long thought</think>\n<plan>1. greet</plan>\n<action type="say">Hi</action>'
    view = [
        Message(role="system", content=assistant_system_prompt(domain, scenario), turn_index=0),
        Message(role="user", content="Hello", turn_index=0),
        Message(role="assistant", content=step, turn_index=0),
        Message(role="user", content="Cancel O1", turn_index=1),
    ]
    seen = {}
    for context in ("full", "compact"):
        backend = get_backend("fake:", replies=['<action type="say">ok</action>'])
        make_agent(
            "assistant", "fake:", scenario, backend=backend, domain=domain, context=context
        ).respond(view)
        seen[context] = backend.calls[0]
    chat = [{"role": m.role, "content": m.content} for m in view]
    assert seen["full"] == chat
    # exactly the dataset's compact step prompt: brief tools, earlier turns' actions only
    assert seen["compact"] == compact_context(chat) != chat
    assert "long thought" not in seen["compact"][2]["content"]
    with pytest.raises(ValueError, match="unknown context"):
        LLMAssistant(backend, context="tiny")


def test_user_brief_keeps_the_llm_user_in_its_part() -> None:
    from mads_bench.catalog import load_all_scenarios
    from simulation.agents.prompts import user_system_prompt

    for scenario in load_all_scenarios(include_mock=True):
        brief = user_system_prompt(domain_of(scenario), scenario)
        persona = load_personas()[scenario.persona]
        # who the user is and how they write
        assert persona.name in brief and persona.writing_style in brief
        assert "customer-service assistant of" in brief and scenario.objective in brief
        # the rules: own voice, never the assistant, no made-up details, never the brief
        for rule in ("no speaker label", "Never write the assistant's part", "never make up"):
            assert rule in brief
        assert "Never say or hint that you were given" in brief and DONE_TOKEN in brief
        # nothing only the scenario file knows: gold tools, success criteria, the fallback
        for call in scenario.gold_workflow:
            assert call.name not in brief
        for criterion in scenario.success_criteria:
            assert criterion not in brief
        if scenario.fallback_behavior:
            assert scenario.fallback_behavior not in brief
        if scenario.impossible:
            assert "tells you this is not possible" in brief


@pytest.mark.parametrize(
    ("raw", "text", "repairs"),
    [
        ("I'd like to cancel order 7.", "I'd like to cancel order 7.", []),
        ("User: cancel order 7", "cancel order 7", ["speaker label removed"]),
        ("Priya: cancel order 7", "cancel order 7", ["speaker label removed"]),
        (
            "Cancel it.\nAssistant: Done! Anything else?\nUser: no",
            "Cancel it.",
            ["cut where the reply wrote the assistant part"],
        ),
        (
            "Thanks, bye! [DONE] Assistant: bye",
            "Thanks, bye! [DONE]",
            ["text after [DONE] dropped"],
        ),
        ('"Cancel order 7."', "Cancel order 7.", ["quotes removed"]),
        ("   ", DONE_TOKEN, []),
    ],
)
def test_llm_user_replies_are_parsed(raw, text, repairs) -> None:
    from simulation.agents.prompts import parse_user_reply

    assert parse_user_reply(raw, "Priya Raman") == (text, repairs)


def test_llm_user_records_what_it_repaired() -> None:
    from simulation.backends import get_backend

    scenario = mock("mock-cancel-normal")
    backend = get_backend("fake:", replies=["User: please cancel my order\nAssistant: sure"])
    message = make_agent(
        "user", "fake:", scenario, backend=backend, domain=domain_of(scenario)
    ).respond([])
    assert message.content == "please cancel my order"
    assert message.parse_problems == [
        "speaker label removed",
        "cut where the reply wrote the assistant part",
    ]
