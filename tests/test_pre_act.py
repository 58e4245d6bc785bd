"""Tests for mads_bench.pre_act: exact parses, every strict error, lenient recovery, properties."""

import pickle

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from mads_bench.pre_act import (
    Action,
    ParsedStep,
    PreActParseError,
    PreActStep,
    canonical_json,
    parse_step,
    render_step,
    validate_turn,
)

THINK = "<think>a</think>"  # 16 characters: the action of most error cases starts at char 16
SAY = '<action type="say">'  # 19 characters


def _tool(body: str) -> str:
    return f'{THINK}<action type="tool">{body}</action>'


# --------------------------------------------------------------------------- exact parses


def test_spec_example_tool_step():
    # the SPEC §4.1 example, one block per line, parses to the full typed step
    text = (
        "<think>The user gave an order id; look it up.</think>\n"
        "<plan>1. get_order\n2. tell the user the status</plan>\n"
        '<action type="tool">{"name": "get_order", "arguments": {"order_id": "A-1001"}}</action>'
    )
    assert parse_step(text) == PreActStep(
        think="The user gave an order id; look it up.",
        plan="1. get_order\n2. tell the user the status",
        action=Action(type="tool", name="get_order", arguments={"order_id": "A-1001"}),
    )


def test_say_step_strips_inner_text_and_allows_whitespace_between_blocks():
    # whitespace before, between and after blocks is fine; inner text is stripped
    text = '\n  <think>\n  Greet.\n</think>\n\n<action type="say">\n Hello, Ann!\n</action>\n  '
    step = parse_step(text)
    assert step.think == "Greet."
    assert step.plan is None
    assert step.action == Action.say("Hello, Ann!")


def test_say_text_may_hold_angle_brackets_and_closing_action_tags():
    # the say block ends at the LAST </action>, so its text keeps brackets and tags
    text = f'{THINK}{SAY}Use <b>bold</b> or type "</action>" literally; 3 > 2.</action>'
    assert parse_step(text).action.text == 'Use <b>bold</b> or type "</action>" literally; 3 > 2.'


def test_tool_json_strings_may_hold_closing_action_tags():
    # a tool body is read as JSON, so a "</action>" inside a JSON string is not the end
    text = _tool('{"name": "note", "arguments": {"body": "x</action>y"}}')
    assert parse_step(text).action == Action.tool("note", {"body": "x</action>y"})


def test_think_may_mention_other_tags():
    # think ends at the first </think>; plan/action tags inside it are plain text
    text = '<think>maybe <plan>1.</plan> then <action type="say">hi</action>?</think>' + (
        f"{SAY}ok</action>"
    )
    step = parse_step(text)
    assert step.think == 'maybe <plan>1.</plan> then <action type="say">hi</action>?'
    assert step.action.text == "ok"


def test_empty_think_and_empty_plan_are_accepted():
    # the tags are what the format needs; empty content is for validate_turn to judge
    step = parse_step(f"<think></think><plan> </plan>{SAY}hi</action>")
    assert (step.think, step.plan) == ("", "")


def test_react_style_parses_steps_without_plan():
    # the ReAct variant is the same format without <plan>
    step = parse_step(f"{THINK}{SAY}hi</action>", style="react")
    assert step == PreActStep(think="a", action=Action.say("hi"))


def test_unknown_style_is_a_programming_error():
    # a bad style raises even in lenient mode: it is not model output
    with pytest.raises(ValueError, match="unknown style"):
        parse_step("x", strict=False, style="cot")
    with pytest.raises(ValueError, match="unknown style"):
        render_step(PreActStep(think="a", action=Action.say("b")), style="cot")


# --------------------------------------------------------------------------- strict errors

STRICT_ERRORS = [
    # (text, style, reason, position) -- one case per row, comment says what is wrong
    ("", "pre_act", "missing_think", 0),  # empty output
    ("  \n", "pre_act", "missing_think", 3),  # whitespace only
    (f"{SAY}hi</action>", "pre_act", "missing_think", 0),  # no think at all
    (f"oops {THINK}{SAY}x</action>", "pre_act", "text_outside_tags", 0),  # text before think
    (f"{SAY}x</action>{THINK}", "pre_act", "unexpected_tag", 0),  # action before think
    (f"<THINK>a</THINK>{SAY}x</action>", "pre_act", "malformed_tag", 0),  # wrong case opener
    (f"<think>a</THINK>{SAY}x</action>", "pre_act", "malformed_tag", 8),  # wrong case closer
    ("<think>a", "pre_act", "unclosed_tag", 0),  # think never closed
    (f"{THINK}<plan>p", "pre_act", "unclosed_tag", 16),  # plan never closed
    (f"{THINK}<plan>p</plan>{SAY}x</action>", "react", "plan_not_allowed", 16),  # plan in react
    (THINK, "pre_act", "missing_action", 16),  # nothing after think
    (f"{THINK} sure", "pre_act", "missing_action", 17),  # prose instead of an action
    (f"{THINK} sure {SAY}x</action>", "pre_act", "text_outside_tags", 17),  # prose before action
    (f"{THINK}<think>b</think>{SAY}x</action>", "pre_act", "unexpected_tag", 16),  # two thinks
    (f"{THINK}<plan>p</plan><plan>q</plan>{SAY}x</action>", "pre_act", "unexpected_tag", 30),
    (f"{THINK}<action type='say'>x</action>", "pre_act", "bad_action_type", 16),  # quotes
    (f'{THINK}<action type="ask">x</action>', "pre_act", "bad_action_type", 16),  # unknown type
    (f"{THINK}<action>x</action>", "pre_act", "bad_action_type", 16),  # no type attribute
    (f'{THINK}<Action type="say">x</action>', "pre_act", "bad_action_type", 16),  # case
    (f"{THINK}{SAY}x", "pre_act", "unclosed_tag", 16),  # say never closed
    (f"{THINK}{SAY} \n </action>", "pre_act", "empty_say", 35),  # say without text
    (f"{THINK}{SAY}x</action>\n{SAY}y</action>", "pre_act", "multiple_actions", 46),  # 2 says
    (
        _tool('{"name": "f", "arguments": {}}') + f" {SAY}y</action>",
        "pre_act",
        "multiple_actions",
        76,
    ),  # a tool call then a say in one step
    (f"{THINK}{SAY}x</action> bye", "pre_act", "text_outside_tags", 46),  # text after action
    (f"{THINK}{SAY}x</action><plan>p</plan>", "pre_act", "unexpected_tag", 45),  # late plan
    (
        THINK + '<action type="tool">{"name": "f"}',
        "pre_act",
        "unclosed_tag",
        16,
    ),  # tool never closed
    (_tool('{"name": "f", "arguments": {}'), "pre_act", "invalid_tool_json", 65),  # cut JSON
    (_tool("[1, 2]"), "pre_act", "tool_json_not_object", 36),  # JSON but not an object
    (_tool('{"arguments": {}}'), "pre_act", "missing_tool_name", 36),  # no name
    (_tool('{"name": 3, "arguments": {}}'), "pre_act", "bad_tool_name", 36),  # name not a str
    (_tool('{"name": "", "arguments": {}}'), "pre_act", "bad_tool_name", 36),  # empty name
    (_tool('{"name": "f"}'), "pre_act", "missing_arguments", 36),  # no arguments
    (_tool('{"name": "f", "arguments": [1]}'), "pre_act", "arguments_not_object", 36),  # list
    (_tool('{"name": "f", "arguments": {}, "id": 1}'), "pre_act", "unexpected_tool_keys", 36),
    (_tool('{"name": "f", "arguments": {}} extra'), "pre_act", "invalid_tool_json", 67),  # extra
    (_tool('{"name": "f", "arguments": {"v": NaN}}'), "pre_act", "invalid_tool_json", 36),  # NaN
    (_tool("[" * 100_000), "pre_act", "invalid_tool_json", 36),  # nesting past recursion limit
]


@pytest.mark.parametrize(("text", "style", "reason", "position"), STRICT_ERRORS)
def test_strict_error_reason_and_position(text, style, reason, position):
    # strict raises a typed ValueError naming the problem and where it is
    with pytest.raises(PreActParseError) as info:
        parse_step(text, style=style)
    assert (info.value.reason, info.value.position) == (reason, position)
    assert isinstance(info.value, ValueError)
    assert f"[{reason}]" in str(info.value)
    # lenient reports the same first problem instead of raising
    assert parse_step(text, strict=False, style=style).reasons[0] == reason


def test_invalid_json_message_says_what_and_where():
    # the human message names the block, the char offset and the JSON error
    text = _tool('{"name": "get_order" "arguments": {}}')
    with pytest.raises(PreActParseError) as info:
        parse_step(text)
    assert str(info.value) == (
        "invalid JSON in <action type=\"tool\"> at char 57: Expecting ',' delimiter "
        "[invalid_tool_json]"
    )
    assert text[57] == '"'


def test_parse_error_survives_pickling():
    # errors cross process boundaries (datasets.map(num_proc=...), pytest-xdist) intact
    with pytest.raises(PreActParseError) as info:
        parse_step("<think>a")
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.reason, copy.position, str(copy)) == ("unclosed_tag", 0, str(info.value))


@pytest.mark.parametrize("value", [None, b"<think>", ["<think>a</think>"], 3])
def test_non_strings(value):
    # strict raises not_a_string; lenient returns an empty result with one problem
    with pytest.raises(PreActParseError) as info:
        parse_step(value)
    assert info.value.reason == "not_a_string"
    parsed = parse_step(value, strict=False)
    assert (parsed.think, parsed.plan, parsed.action) == (None, None, None)
    assert parsed.reasons == ["not_a_string"]


# --------------------------------------------------------------------------- lenient recovery

LENIENT_CASES = [
    # (text, expected think, expected action, reasons) -- one recovery per row
    (f"{THINK}{SAY}Hi there", "a", Action.say("Hi there"), ["unclosed_tag"]),  # cut at the end
    (
        f"Sure! {THINK}{SAY}hi</action> Thanks.",
        "a",
        Action.say("hi"),
        ["text_outside_tags", "text_outside_tags"],
    ),  # chatter around the tags
    (f"{THINK}<action type='say'>hi</action>", "a", Action.say("hi"), ["bad_action_type"]),
    (f"{THINK}< ACTION Type=SAY >hi</action>", "a", Action.say("hi"), ["bad_action_type"]),
    (
        _tool("{'name': 'f', 'arguments': {'k': 'v'}}"),
        "a",
        Action.tool("f", {"k": "v"}),
        ["invalid_tool_json"],
    ),  # single quotes
    (
        _tool('{"name": "f", "arguments": {"k": [1, 2,],},}'),
        "a",
        Action.tool("f", {"k": [1, 2]}),
        ["invalid_tool_json"],
    ),  # trailing commas
    (
        _tool('```json\n{"name": "f", "arguments": {}}\n```'),
        "a",
        Action.tool("f"),
        ["invalid_tool_json"],
    ),  # markdown code fence
    (
        _tool('{"name": "f", "arguments": "{\\"k\\": 1}"}'),
        "a",
        Action.tool("f", {"k": 1}),
        ["arguments_not_object"],
    ),  # OpenAI-style arguments string
    (_tool('{"name": "f"}'), "a", Action.tool("f"), ["missing_arguments"]),  # defaults to {}
    (
        _tool('{"name": "f", "arguments": {}, "id": 7}'),
        "a",
        Action.tool("f"),
        ["unexpected_tool_keys"],
    ),  # extra keys ignored
    (
        _tool('{"name": "f", "arguments": {"v": NaN}}'),
        "a",
        None,
        ["invalid_tool_json", "invalid_tool_json"],
    ),  # NaN cannot be a tool argument
    (f"{SAY}hi</action>", None, Action.say("hi"), ["missing_think"]),  # no think
    (f"<think>hmm {SAY}hi</action>", "hmm", Action.say("hi"), ["unclosed_tag"]),  # think cut
    (
        f"<Think >a</THINK>{SAY}hi</action>",
        "a",
        Action.say("hi"),
        ["malformed_tag", "malformed_tag"],
    ),  # tag spelling
    (f"{THINK}{SAY}x</action>\n{SAY}y</action>", "a", Action.say("x"), ["multiple_actions"]),
    (
        f'{THINK}<action type="function">{{"name": "f", "arguments": {{}}}}</action>',
        "a",
        Action.tool("f"),
        ["bad_action_type"],
    ),  # unknown type, JSON body: a tool call
    (f"{SAY}hi</action>{THINK}", "a", Action.say("hi"), ["unexpected_tag", "missing_action"]),
    (f"{THINK}{SAY}   </action>", "a", None, ["empty_say"]),  # nothing to say
]


@pytest.mark.parametrize(("text", "think", "action", "reasons"), LENIENT_CASES)
def test_lenient_recovers(text, think, action, reasons):
    # lenient returns whatever it could recover and names every deviation
    parsed = parse_step(text, strict=False)
    assert (parsed.think, parsed.action, parsed.reasons) == (think, action, reasons)


def test_lenient_recovers_plan_after_stray_text():
    # a plan separated from think by chatter is still found
    parsed = parse_step(f"{THINK} ok <plan>1. ask</plan>{SAY}hi</action>", strict=False)
    assert (parsed.plan, parsed.action, parsed.reasons) == (
        "1. ask",
        Action.say("hi"),
        ["text_outside_tags"],
    )


def test_lenient_keeps_plan_in_react_style_but_reports_it():
    # react forbids a plan; lenient keeps the text and records the problem
    parsed = parse_step(f"{THINK}<plan>p</plan>{SAY}hi</action>", strict=False, style="react")
    assert (parsed.plan, parsed.reasons) == ("p", ["plan_not_allowed"])


@pytest.mark.parametrize(
    "text",
    [
        "<" * 300_000,  # a wall of openers
        "<action" * 100_000,  # tag fragments without '>'
        "<think>" * 100_000,  # think opened over and over, never closed
        f"{THINK}{SAY}" + "</action><action " * 50_000,  # many fake second actions
        _tool("{" * 200_000),  # JSON nesting far past the recursion limit
        "\x00\ufffd\udcff" * 100_000,  # binary-ish characters and a lone surrogate
    ],
)
def test_lenient_survives_huge_adversarial_inputs(text):
    # big inputs neither crash nor hit the internal-error fallback
    parsed = parse_step(text, strict=False)
    assert isinstance(parsed, ParsedStep)
    assert parsed.problems and "internal_error" not in parsed.reasons


# --------------------------------------------------------------------------- render and models


def test_render_exact_text_and_react_drops_plan():
    # one block per line; the react renderer leaves the plan out
    step = PreActStep(think="t", plan="1. ask", action=Action.say("Which date?"))
    assert (
        render_step(step)
        == '<think>t</think>\n<plan>1. ask</plan>\n<action type="say">Which date?</action>'
    )
    assert (
        render_step(step, style="react")
        == '<think>t</think>\n<action type="say">Which date?</action>'
    )


@pytest.mark.parametrize(
    "build",
    [
        lambda: PreActStep(think="a</think>", action=Action.say("x")),  # closes think early
        lambda: PreActStep(think="a", plan="</plan>", action=Action.say("x")),  # closes plan
        lambda: Action.say("  "),  # empty say
        lambda: Action.say("x</action>\n<action type='say'>y"),  # reads as two actions
        lambda: Action(type="tool", arguments={}),  # tool without a name
        lambda: Action(type="tool", name="f", arguments={"v": float("nan")}),  # NaN argument
        lambda: Action(type="tool", name="f", arguments={"v": {1, 2}}),  # a set is not JSON
        lambda: Action(type="say", text="x", name="f"),  # say with a tool name
        lambda: Action(type="say", text="x", extra=1),  # extra="forbid"
    ],
)
def test_models_reject_values_that_cannot_round_trip(build):
    # invalid steps cannot be built, so every valid step renders to parseable text
    with pytest.raises(ValidationError):
        build()


def test_canonical_json_sorts_keys_and_drops_whitespace():
    # equal JSON values give equal strings whatever the key order
    assert (
        canonical_json({"b": 1, "a": {"d": [1, 2], "c": "é"}}) == '{"a":{"c":"é","d":[1,2]},"b":1}'
    )
    assert canonical_json({"x": 1, "y": 2}) == canonical_json({"y": 2, "x": 1})
    assert canonical_json({"x": 1}) != canonical_json({"x": 1.0})  # exact, no numeric folding


# --------------------------------------------------------------------------- validate_turn

_TOOL = PreActStep(think="look up", plan="1. get_order 2. tell", action=Action.tool("get_order"))
_SAY = PreActStep(think="answer", action=Action.say("It ships today."))


def test_validate_turn_accepts_tool_steps_then_one_say():
    # plan on the first step, tool steps, one final say: no problems
    assert validate_turn([_TOOL, _TOOL.model_copy(update={"plan": None}), _SAY]) == []
    assert validate_turn([_SAY.model_copy(update={"plan": "1. answer"})]) == []


def test_validate_turn_problems():
    # each rule of SPEC §4.1 produces one named problem
    assert validate_turn([]) == ["step 0: empty_turn: a turn needs at least one step"]
    assert validate_turn([_SAY]) == [
        "step 0: missing_plan: the first step of a turn needs a <plan>"
    ]
    assert validate_turn([_TOOL, _SAY, _SAY]) == [
        "step 1: early_say: only the last step of a turn may say"
    ]
    assert validate_turn([_TOOL]) == ["step 0: missing_say: the turn must end with one say action"]
    empty_think = _SAY.model_copy(update={"think": ""})
    assert validate_turn([_TOOL, empty_think]) == ["step 1: empty_think: <think> is empty"]
    # react: no plan needed, and a plan is a problem
    assert validate_turn([_SAY], style="react") == []
    assert validate_turn([_TOOL, _SAY], style="react") == [
        "step 0: plan_not_allowed: react steps have no <plan>"
    ]


# --------------------------------------------------------------------------- properties

FRAGMENTS = [
    "<think>",
    "</think>",
    "<plan>",
    "</plan>",
    SAY,
    '<action type="tool">',
    "</action>",
    "<action",
    "<",
    ">",
    "/",
    "type=",
    "'",
    '"',
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\\",
    " ",
    "\n",
    '{"name": "f", "arguments": {}}',
    '"name"',
    '"arguments"',
    "NaN",
    "<THINK>",
    "< action >",
    "\x00",
    "\ufffd",
    "\u2028",
    "é",
]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
TEXTS = st.text(max_size=40) | st.lists(
    st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=12
).map("".join)


@st.composite
def steps(draw):
    """Any valid step: arbitrary unicode text (tags, quotes, brackets) and JSON arguments."""
    if draw(st.booleans()):
        action = dict(
            type="tool",
            name=draw(TEXTS),
            arguments=draw(st.dictionaries(TEXTS, JSON_VALUES, max_size=4)),
        )
    else:
        action = dict(type="say", text=draw(TEXTS))
    try:
        return PreActStep(think=draw(TEXTS), plan=draw(st.none() | TEXTS), action=Action(**action))
    except ValidationError:
        assume(False)


def _check_agreement(text, style="pre_act"):
    """Lenient never raises; strict raises only PreActParseError; they agree when strict passes."""
    parsed = parse_step(text, strict=False, style=style)
    assert isinstance(parsed, ParsedStep) and "internal_error" not in parsed.reasons
    try:
        step = parse_step(text, style=style)
    except PreActParseError as err:
        assert parsed.reasons[0] == err.reason and 0 <= err.position <= len(text)
    else:
        assert (parsed.think, parsed.plan, parsed.action, parsed.problems) == (
            step.think,
            step.plan,
            step.action,
            [],
        )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(steps(), st.sampled_from(["pre_act", "react"]))
def test_render_parse_round_trip(step, style):
    # strict and lenient parse of a rendered step give the step back (react drops the plan)
    expected = step if style == "pre_act" else step.model_copy(update={"plan": None})
    text = render_step(step, style=style)
    assert parse_step(text, style=style) == expected
    _check_agreement(text, style)
    # tool arguments come back canonically identical (e.g. no int/float drift)
    if step.action.type == "tool":
        parsed_args = parse_step(text, style=style).action.arguments
        assert canonical_json(parsed_args) == canonical_json(step.action.arguments)


@settings(max_examples=300, deadline=None)
@given(
    TEXTS | st.binary(max_size=60).map(lambda b: b.decode("latin-1")),
    st.sampled_from(["pre_act", "react"]),
)
def test_random_text_never_crashes_lenient(text, style):
    # arbitrary text and tag soup: lenient never raises and agrees with strict
    _check_agreement(text, style)


SEED_TEXTS = [
    render_step(
        PreActStep(think="t", plan="1. a\n2. b", action=Action.tool("f", {"k": [1, "</action>"]}))
    ),
    render_step(PreActStep(think="x < y", action=Action.say('<b>"hi"</b> </action> done'))),
    render_step(PreActStep(think="", plan="", action=Action.tool("g", {"n": {"m": None}}))),
    render_step(PreActStep(think="r", action=Action.say("ok")), style="react"),
]


def _mutate(data, text):
    """Cut one to three short slices out of ``text`` and splice tag fragments or junk in."""
    for _ in range(data.draw(st.integers(1, 3))):
        start = data.draw(st.integers(0, len(text)))
        stop = data.draw(st.integers(start, min(len(text), start + 12)))
        insert = data.draw(st.sampled_from(FRAGMENTS) | st.text(max_size=3))
        text = text[:start] + insert + text[stop:]
    return text


@settings(max_examples=2000, deadline=None)
@given(st.sampled_from(SEED_TEXTS), st.data(), st.sampled_from(["pre_act", "react"]))
def test_mutated_valid_outputs_never_crash_lenient(text, data, style):
    # valid outputs with slices cut out and fragments spliced in: the nastiest near-misses
    _check_agreement(_mutate(data, text), style)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(steps(), st.data(), st.sampled_from(["pre_act", "react"]))
def test_mutated_generated_steps_never_crash_lenient(step, data, style):
    # the same near-misses around generated steps (arbitrary unicode and JSON)
    _check_agreement(_mutate(data, render_step(step, style=style)), style)
