"""The `compact` prompt context: shorter step prompts that keep every value a gold step uses."""

from __future__ import annotations

import json

import pytest

from mads_bench.catalog import domain_of
from mads_bench.datasets import DatasetBuildError, build_dataset
from mads_bench.pre_act import parse_step
from mads_bench.text import normalise
from simulation.agents.context import apply_context, compact_context
from simulation.agents.prompts import assistant_system_prompt, brief_system_prompt
from simulation.agents.text import value_in


@pytest.fixture(scope="module")
def compact(trajectory_file):
    return build_dataset([trajectory_file], include_unvalidated=True, context="compact")


def test_brief_system_prompt_keeps_signatures_and_drops_descriptions() -> None:
    from mads_bench.catalog import load_domain

    scenario = load_domain("banking").scenarios[0]
    full = assistant_system_prompt(domain_of(scenario), scenario)
    brief = brief_system_prompt(full)
    tools = load_domain("banking").tools_for(scenario)
    for tool in tools:
        # the signature line survives without its description
        signature = tool.signature().removesuffix(f": {tool.description}")
        assert f"- {signature}\n" in brief + "\n"
        assert tool.description not in brief
    # format and rules are untouched, and the result is much shorter
    assert "<plan>" in brief and "Confirm with the user before any write tool" in brief
    assert len(brief) < 0.6 * len(full)
    # idempotent, and a foreign system message is returned as it is
    assert brief_system_prompt(brief) == brief
    assert brief_system_prompt("You are helpful.") == "You are helpful."


def test_compact_context_reduces_only_earlier_turns_to_their_actions() -> None:
    step = '<think>{t}</think>\n<plan>1. {t}</plan>\n<action type="tool">{a}</action>'
    call = json.dumps({"name": "get_order", "arguments": {"order_id": "A-1"}})
    chat = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Where is A-1?"},
        {"role": "assistant", "content": step.format(t="look up", a=call)},
        {"role": "tool", "content": '{"status": "shipped"}'},
        {"role": "assistant", "content": '<think>ok</think>\n<action type="say">Shipped.</action>'},
        {"role": "user", "content": "And cancel it"},
        {"role": "assistant", "content": step.format(t="cancel", a=call)},
    ]
    out = compact_context(chat)
    # earlier turn: reasoning and plan elided, the action kept exactly (still strict Pre-Act)
    old = parse_step(out[2]["content"])
    assert old.think == "" and old.plan is None and old.action.arguments == {"order_id": "A-1"}
    assert out[4]["content"] == '<think></think>\n<action type="say">Shipped.</action>'
    # current turn (after the last user message) whole; user and tool messages untouched
    assert out[6] == chat[6] and out[5] == chat[5] and out[3] == chat[3] and out[1] == chat[1]
    # the input is not modified, and `full` is the identity
    assert "look up" in chat[2]["content"]
    assert apply_context(chat, "full") == chat
    with pytest.raises(ValueError, match="unknown context 'tiny'"):
        apply_context(chat, "tiny")


def test_unparseable_earlier_step_is_kept_verbatim() -> None:
    chat = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "no tags at all"},
        {"role": "user", "content": "hello?"},
    ]
    assert compact_context(chat)[1]["content"] == "no tags at all"


def test_compact_build_has_the_same_rows_and_gold_with_shorter_prompts(built, compact) -> None:
    for split in ("train", "test"):
        full_rows, compact_rows = built.configs["grpo"][split], compact.configs["grpo"][split]
        assert len(full_rows) == len(compact_rows)
        # the gold columns and completions are those of the full build
        for column in ("gold_action_type", "gold_tool_name", "gold_tool_arguments", "gold_say"):
            assert full_rows[column] == compact_rows[column]
        completions = built.configs["sft"][split]["completion"]
        assert completions == compact.configs["sft"][split]["completion"]
        full_chars = sum(len(m["content"]) for p in full_rows["prompt"] for m in p)
        compact_chars = sum(len(m["content"]) for p in compact_rows["prompt"] for m in p)
        assert compact_chars < 0.8 * full_chars
    # whole conversations stay full; the card says which context the prompts use
    assert built.configs["trajectories"]["train"][:] == compact.configs["trajectories"]["train"][:]
    assert "`compact` context" in compact.card and "`full` context" in built.card
    assert compact.report.context == "compact"


def test_compact_prompts_keep_every_gold_argument_value(built, compact) -> None:
    # every string value of a gold tool call found in the full prompt is in the compact one
    # (as a value is found: a date also when said "April 16th")
    checked = 0
    full_rows = built.configs["grpo"]["train"]
    for full, short in zip(full_rows, compact.configs["grpo"]["train"], strict=True):
        if full["gold_action_type"] != "tool":
            continue
        full_text = normalise("\n".join(m["content"] for m in full["prompt"]), numbers="canonical")
        short_text = normalise(
            "\n".join(m["content"] for m in short["prompt"]), numbers="canonical"
        )
        for value in json.loads(full["gold_tool_arguments"]).values():
            if isinstance(value, str) and value_in(value, full_text):
                assert value_in(value, short_text), (full["scenario_id"], value)
                checked += 1
    assert checked > 100


def test_unknown_context_is_a_build_error(trajectory_file) -> None:
    with pytest.raises(DatasetBuildError, match="unknown context 'short'"):
        build_dataset([trajectory_file], include_unvalidated=True, context="short")
