"""Tests of the conversation runner: every domain to `done`, behavior effects, end reasons,
the malformed-output rule and determinism."""

from __future__ import annotations

import json
import re

import pytest

from mads_bench.catalog import domain_names, domain_of, load_domain
from mads_bench.pre_act import parse_step, validate_turn
from simulation.agents.text import (
    DONE_TOKEN,
    NOT_PROCESSED_NOTICE,
    asks_confirmation,
    declines_with_alternatives,
)
from simulation.agents.wording import assistant_wording
from simulation.environment import simulate
from simulation.runner import RunLimits


def scenario(scenario_id: str):
    return next(s for s in load_domain(scenario_id.split("-")[0]).scenarios if s.id == scenario_id)


def says(trajectory) -> list[str]:
    return [
        parse_step(m.content).action.text
        for m in trajectory.messages
        if m.role == "assistant" and parse_step(m.content, strict=False).action.type == "say"
    ]


def full_opening_seed(item) -> int:
    """A seed whose user gives, in the opening, every value no behavior holds back (another
    seed may leave one out until asked, as people do)."""
    from simulation.agents.user import ScriptedUser
    from simulation.runner import conversation_seed

    return next(
        seed
        for seed in range(50)
        if not ScriptedUser(
            item, seed=conversation_seed(seed, item.id, 0), domain=domain_of(item)
        ).deferred
    )


def tool_steps(trajectory) -> list[tuple[int, str, bool]]:
    return [
        (m.turn_index, m.tool_result.name, m.tool_result.ok)
        for m in trajectory.messages
        if m.role == "tool"
    ]


@pytest.mark.parametrize("domain", [d for d in domain_names() if load_domain(d).scenarios])
def test_every_hand_written_scenario_runs_to_done(domain: str) -> None:
    for item in load_domain(domain).scenarios:
        trajectory = simulate(item, seed=0)
        # the scripted pair finishes every scenario with the user's [DONE]
        assert trajectory.end_reason == "done", item.id
        assert DONE_TOKEN in trajectory.messages[-1].content
        assert trajectory.messages[0].role == "system"
        turns: dict[int, list] = {}
        for index, message in enumerate(trajectory.messages):
            if message.role == "assistant":
                # every step strict-parses and has no recorded problems
                turns.setdefault(message.turn_index, []).append(parse_step(message.content))
                assert message.parse_problems == []
            if message.role == "tool":
                # each result answers the call right before it
                call = trajectory.messages[index - 1].tool_call
                assert message.tool_result.call_id == call.id
        for turn, steps in turns.items():
            # first step has a plan, the turn ends with exactly one say
            assert validate_turn(steps) == [], (item.id, turn)


def test_partial_information_forces_a_question_and_an_answer() -> None:
    mug = scenario("mock-buy-mug-unhappy")
    trajectory = simulate(mug, seed=full_opening_seed(mug))
    users = [m.content for m in trajectory.messages if m.role == "user"]
    # the opening lacks the quantity, the assistant asks, the next user message answers
    assert "quantity" not in users[0]
    assert any("quantity" in t and t.endswith("?") for t in says(trajectory))
    # the answer gives the value, labelled or on its own ("It's 2.")
    assert re.search(r"(^|\s)2\b", users[1])


def test_timeout_is_retried_in_the_same_turn() -> None:
    mug = scenario("mock-buy-mug-unhappy")
    trajectory = simulate(mug, seed=full_opening_seed(mug))
    # first search times out, the retry succeeds, both in turn 0
    assert tool_steps(trajectory)[:2] == [(0, "search_items", False), (0, "search_items", True)]
    assert [i.kind for i in trajectory.injections if i.tool] == ["timeout"]


def test_backend_failure_retry_and_goal_revision() -> None:
    trajectory = simulate(scenario("banking-transfer-revision-unhappy"), seed=0)
    steps = tool_steps(trajectory)
    # 502 then a successful retry of the same call
    assert steps[:2] == [(0, "list_customer_accounts", False), (0, "list_customer_accounts", True)]
    transfers = [
        m.tool_call.arguments
        for m in trajectory.messages
        if m.tool_call and m.tool_call.name == "transfer_between_accounts"
    ]
    # the transfer uses the revised amount; 500 is never sent
    assert [t["amount"] for t in transfers] == [800]
    assert "goal_revision" in [i.kind for i in trajectory.injections]


def test_empty_results_are_reported_with_alternatives_then_retried() -> None:
    trajectory = simulate(scenario("travel-tokyo-hotel-unhappy"), seed=0)
    # the assistant tells the user, offers alternatives, and searches again after the answer
    empty_say = next(t for t in says(trajectory) if "search for hotels" in t.casefold())
    assert declines_with_alternatives(empty_say) and asks_confirmation(empty_say)
    searches = [s for s in tool_steps(trajectory) if s[1] == "search_hotels"]
    assert len(searches) == 2 and searches[0][0] < searches[1][0]


def test_policy_refusal_is_explained_and_impossible_declines_with_fallback() -> None:
    golf = simulate(scenario("travel-golf-bags-unhappy"), seed=0)
    # the refusal's rule is relayed with an alternative
    assert any("special baggage desk" in t and declines_with_alternatives(t) for t in says(golf))
    kettle = simulate(scenario("mock-kettle-impossible"), seed=0)
    # the workflow runs, then the fallback is spoken after a seeded apology
    last = says(kettle)[-1]
    assert any(last.startswith(lead) for lead in assistant_wording().acts["decline_lead"].phrases)
    assert "The red kettle is out of stock." in last and "the blue mug or a restock notice" in last
    assert declines_with_alternatives(last)


def test_adversarial_tone_shows_in_every_user_message() -> None:
    trajectory = simulate(scenario("banking-lost-card-abroad-unhappy"), seed=0)
    users = [m.content for m in trajectory.messages if m.role == "user"]
    tone = [i for i in trajectory.injections if i.kind == "adversarial_tone"]
    # severe: one record per user turn and a shouted phrase in each message
    assert len(tone) == len(users)
    assert all(any(w.isupper() and len(w) > 3 for w in u.split()) for u in users)


def test_same_seed_gives_byte_identical_json() -> None:
    item = scenario("banking-duplicate-charge-unhappy")
    first = simulate(item, seed=5, repetition=1).model_dump_json()
    # same seed and repetition: the same bytes; the id carries scenario, repetition and seed
    assert simulate(item, seed=5, repetition=1).model_dump_json() == first
    assert json.loads(first)["id"] == "banking-duplicate-charge-unhappy/r1/s5"


def test_turn_cap() -> None:
    trajectory = simulate(scenario("mock-buy-mug-unhappy"), seed=0, limits=RunLimits(max_turns=1))
    # one user turn, then the cap
    assert trajectory.end_reason == "turn_cap"


def fake_assistant(replies):
    from simulation.backends import get_backend

    return get_backend("fake:", replies=replies, cycle=True)


def test_malformed_output_rule() -> None:
    item = scenario("mock-cancel-normal")
    backend = fake_assistant(["I will just chat without tags."])
    trajectory = simulate(item, assistant="fake:", backends={"fake:": backend})
    assistants = [m for m in trajectory.messages if m.role == "assistant"]
    # kept verbatim with its problems; two malformed turns in a row end the run as an error
    assert trajectory.end_reason == "error" and len(assistants) == 2
    assert assistants[0].content == "I will just chat without tags."
    assert any(p.startswith("missing_think") for p in assistants[0].parse_problems)
    # the user saw the fixed notice and repeated itself
    second_user = [m for m in trajectory.messages if m.role == "user"][1]
    assert second_user.content.startswith("I said:")
    assert NOT_PROCESSED_NOTICE not in [m.content for m in trajectory.messages]


def test_recoverable_output_is_carried_out() -> None:
    item = scenario("mock-cancel-normal")
    backend = fake_assistant(
        ["<think>ok</think><action type='say'>All done, it has been cancelled"]
    )
    trajectory = simulate(item, assistant="fake:", backends={"fake:": backend})
    step = trajectory.messages[2]
    # problems recorded, the say recovered and shown, the user finishes
    assert step.parse_problems and trajectory.end_reason == "done"


def test_repeated_identical_tool_call_is_a_loop() -> None:
    item = scenario("mock-cancel-normal")
    call = (
        '<think>t</think><action type="tool">{"name": "get_item", "arguments": {"item_id": "I1"}}'
    )
    trajectory = simulate(item, assistant="fake:", backends={"fake:": fake_assistant([call])})
    # three identical calls with identical results end the run
    assert trajectory.end_reason == "loop" and len(tool_steps(trajectory)) == 3


@pytest.mark.slow
def test_transformers_assistant_runs_end_to_end(tiny_lm_path) -> None:
    # a random tiny LM as the assistant: whatever it writes, the run ends cleanly, recorded
    from simulation.backends import get_backend

    backend = get_backend("transformers:tiny-lm")
    trajectory = simulate(
        scenario("mock-cancel-normal"),
        assistant="transformers:tiny-lm",
        limits=RunLimits(max_turns=2, max_steps_per_turn=2),
        backends={"transformers:tiny-lm": backend},
    )
    assert trajectory.end_reason in ("turn_cap", "loop", "error")
    assert trajectory.backends == {
        "user": "scripted",
        "assistant": "transformers:tiny-lm",
        "tool": "backend",
    }
    assert [m.role for m in trajectory.messages[:3]] == ["system", "user", "assistant"]


def test_react_style_has_no_plan() -> None:
    trajectory = simulate(scenario("mock-buy-mug-unhappy"), style="react")
    steps = [
        parse_step(m.content, style="react") for m in trajectory.messages if m.role == "assistant"
    ]
    # the ReAct variant finishes too, and no step carries a plan
    assert trajectory.end_reason == "done" and all(s.plan is None for s in steps)
