"""The Pre-Act assistant step format (SPEC §4.1): types, renderer, strict and lenient parser.

One assistant step is one model output::

    <think>free-text reasoning</think>
    <plan>numbered plan for the rest of the turn</plan>     (optional; never in "react" style)
    <action type="tool">{"name": "get_order", "arguments": {"order_id": "A-1001"}}</action>
    or <action type="say">text shown to the user</action>

What the strict parser accepts, exactly: whitespace (as ``str.isspace``) before, between and
after the blocks, and nothing else outside them; tags spelled exactly as above; the blocks in
the order think, optional plan, exactly one action. Inner text of think/plan/say is stripped.
``<think>`` ends at the first ``</think>`` and ``<plan>`` at the first ``</plan>``, so they may
hold any other text. A tool action holds one JSON object ``{"name": str, "arguments": object}``
(no other keys; NaN/Infinity rejected), read as JSON so its strings may contain ``</action>``.
A say action ends at the LAST ``</action>`` of the text, so its text may contain ``<``, ``>``
and even ``</action>`` -- unless ``</action>`` is followed (after whitespace) by another
``<action``, which is read as a second action. The models reject values that could not
round-trip (a ``</think>`` inside think, an empty say, ...), so ``render_step`` output always
parses back to an equal step.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, overload

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

__all__ = [
    "STYLES",
    "Action",
    "ParsedStep",
    "PreActParseError",
    "PreActStep",
    "Style",
    "canonical_json",
    "parse_step",
    "render_step",
    "validate_turn",
]

Style = Literal["pre_act", "react"]
STYLES: tuple[str, ...] = ("pre_act", "react")

_WS = re.compile(r"\s*")
_ACTION_OPEN = re.compile(r"<\s*action\b[^<>]*>", re.IGNORECASE)  # any spelling; exact checked
_ACTION_TYPE = re.compile(r"""type\s*=\s*["']?\s*(\w+)""", re.IGNORECASE)
_SECOND_ACTION = re.compile(r"</action>\s*(<action\b)", re.IGNORECASE)
_THINK_OPEN_ANY = re.compile(r"<\s*think\s*>", re.IGNORECASE)
_THINK_CLOSE_ANY = re.compile(r"<\s*/\s*think\s*>", re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_EXACT_OPEN = {"tool": '<action type="tool">', "say": '<action type="say">'}


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def canonical_json(obj: Any) -> str:
    """Serialise a JSON value canonically: sorted keys, no whitespace, unicode kept.

    Args:
        obj (`Any`): a JSON-able value (raises `TypeError`/`ValueError` otherwise, incl. NaN).

    Returns:
        `str`: equal for equal JSON values; ``1`` and ``1.0`` stay different.

    Example:
        >>> canonical_json({"b": [1, {"y": 2, "x": "é"}], "a": None})
        '{"a":null,"b":[1,{"x":"é","y":2}]}'
    """
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


class Action(BaseModel):
    """One action: a tool call (``name`` + ``arguments``) or a user-facing ``say`` (``text``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["tool", "say"] = Field(
        description="'tool' calls a tool, 'say' talks to the user."
    )
    name: str | None = Field(default=None, min_length=1, description="Tool name (tool only).")
    arguments: dict[str, Any] | None = Field(
        default=None, description="Tool arguments (tool only)."
    )
    text: str | None = Field(default=None, description="Stripped user-facing text (say only).")

    @field_validator("text")
    @classmethod
    def _strip_text(cls, value: str | None) -> str | None:
        return None if value is None else value.strip()

    @model_validator(mode="after")
    def _check_fields(self) -> Action:
        if self.type == "tool":
            if self.name is None or self.arguments is None or self.text is not None:
                raise ValueError("a tool action needs name and arguments and no text")
            try:
                canonical_json(self.arguments)
            except (TypeError, ValueError, RecursionError) as err:
                raise ValueError(f"tool arguments are not JSON: {err}") from None
        else:
            if self.text is None or self.name is not None or self.arguments is not None:
                raise ValueError("a say action needs text and no name or arguments")
            if not self.text:
                raise ValueError("say text is empty")
            if _SECOND_ACTION.search(self.text):
                raise ValueError("say text would read as two actions ('</action>' then '<action')")
        return self

    @classmethod
    def tool(cls, name: str, arguments: dict[str, Any] | None = None) -> Action:
        """Build a tool action (``arguments`` defaults to ``{}``)."""
        return cls(type="tool", name=name, arguments={} if arguments is None else arguments)

    @classmethod
    def say(cls, text: str) -> Action:
        """Build a say action."""
        return cls(type="say", text=text)


class PreActStep(BaseModel):
    """One well-formed assistant step; think/plan are stored stripped."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    think: str = Field(description="Free-text reasoning (may be empty, never holds '</think>').")
    plan: str | None = Field(default=None, description="Plan for the rest of the turn, or None.")
    action: Action = Field(description="The single action of the step.")

    @field_validator("think", "plan")
    @classmethod
    def _strip_block(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        if f"</{info.field_name}>" in value:
            raise ValueError(f"{info.field_name} must not contain '</{info.field_name}>'")
        return value.strip()


class ParsedStep(BaseModel):
    """What the lenient parser recovered; ``problems`` lists every deviation as
    ``"<reason>: <message naming the char offset>"`` (empty exactly when strict succeeds)."""

    model_config = ConfigDict(extra="forbid")

    think: str | None = Field(default=None, description="Recovered think text.")
    plan: str | None = Field(default=None, description="Recovered plan text.")
    action: Action | None = Field(default=None, description="Recovered action.")
    problems: list[str] = Field(default_factory=list, description="Deviations from strict.")

    @property
    def reasons(self) -> list[str]:
        """Machine codes of ``problems`` (e.g. ``["unclosed_tag"]``)."""
        return [problem.split(":", 1)[0] for problem in self.problems]


class PreActParseError(ValueError):
    """A strict parse failure: ``reason`` (machine code), ``position`` (char offset), message."""

    def __init__(self, reason: str, position: int, message: str) -> None:
        super().__init__(f"{message} [{reason}]")
        self.reason, self.position, self.message = reason, position, message

    def __reduce__(self) -> tuple[type, tuple[str, int, str]]:  # picklable across processes
        return type(self), (self.reason, self.position, self.message)


def _check_style(style: str) -> None:
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; expected one of {STYLES}")


def render_step(step: PreActStep, style: Style = "pre_act") -> str:
    """Render a step as model output text, one block per line.

    Args:
        step (`PreActStep`): the step; its plan is left out in ``"react"`` style.
        style (`str`): ``"pre_act"`` or ``"react"``.

    Returns:
        `str`: text that ``parse_step(text, style=style)`` parses back to ``step``.

    Example:
        >>> step = PreActStep(think="Need the order.", plan="1. look up", action=Action.tool(
        ...     "get_order", {"order_id": "A-1001"}))
        >>> print(render_step(step))
        <think>Need the order.</think>
        <plan>1. look up</plan>
        <action type="tool">{"name": "get_order", "arguments": {"order_id": "A-1001"}}</action>
    """
    _check_style(style)
    blocks = [f"<think>{step.think}</think>"]
    if step.plan is not None and style == "pre_act":
        blocks.append(f"<plan>{step.plan}</plan>")
    action = step.action
    if action.type == "tool":
        body = json.dumps({"name": action.name, "arguments": action.arguments}, ensure_ascii=False)
    else:
        body = action.text
    blocks.append(f"{_EXACT_OPEN[action.type]}{body}</action>")
    return "\n".join(blocks)


@overload
def parse_step(text: Any, *, strict: Literal[True] = ..., style: Style = ...) -> PreActStep: ...
@overload
def parse_step(text: Any, *, strict: Literal[False], style: Style = ...) -> ParsedStep: ...
def parse_step(
    text: Any, *, strict: bool = True, style: Style = "pre_act"
) -> PreActStep | ParsedStep:
    """Parse one assistant step.

    Args:
        text (`str`): the model output.
        strict (`bool`): raise on any deviation (default) or recover what can be recovered.
        style (`str`): ``"pre_act"`` or ``"react"`` (no ``<plan>`` allowed).

    Returns:
        `PreActStep` when strict; `ParsedStep` (never raises, whatever ``text`` is) otherwise.

    Raises:
        `PreActParseError`: strict mode only, with ``reason`` and ``position``.

    Example:
        >>> parse_step('<think>hi</think> <action type="say"> Hello! </action>').action.text
        'Hello!'
        >>> lenient = parse_step("<think>x</think><action type='say'>Hi", strict=False)
        >>> lenient.action.text, lenient.reasons
        ('Hi', ['bad_action_type', 'unclosed_tag'])
    """
    _check_style(style)
    if not isinstance(text, str):
        reason, message = "not_a_string", f"expected str, got {type(text).__name__}"
        if strict:
            raise PreActParseError(reason, 0, message)
        return ParsedStep(problems=[f"{reason}: {message}"])
    parser = _Parser(text, style, strict)
    if strict:
        return parser.run()
    try:
        return parser.run()
    except Exception as err:  # lenient never raises; property tests keep this path unused
        return ParsedStep(problems=[*parser.problems, f"internal_error: {err!r}"])


class _Parser:
    """Single pass over one step; in strict mode ``fail`` raises, otherwise it records and the
    caller recovers. The recovery code runs only after a failure, so lenient and strict agree
    on every input that strict accepts."""

    def __init__(self, text: str, style: str, strict: bool) -> None:
        self.text, self.style, self.strict = text, style, strict
        self.problems: list[str] = []

    def fail(self, reason: str, position: int, message: str) -> None:
        if self.strict:
            raise PreActParseError(reason, position, message)
        self.problems.append(f"{reason}: {message}")

    def ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()

    def run(self) -> PreActStep | ParsedStep:
        t = self.text
        think, pos = self.block("think", self.ws(0))
        pos, plan = self.ws(pos), None
        if not self.strict and not t.startswith("<plan>", pos):
            nxt = _ACTION_OPEN.search(t, pos)
            found = t.find("<plan>", pos, len(t) if nxt is None else nxt.start())
            if found != -1:
                self.no_action_here(pos)  # the problem strict reports here
                pos = found
        if t.startswith("<plan>", pos):
            if self.style == "react":
                self.fail("plan_not_allowed", pos, f"<plan> at char {pos} is not allowed in react")
            plan, pos = self.block("plan", pos)
        action, end = self.action(self.ws(pos))
        self.tail(self.ws(max(pos, end)))
        if self.strict:
            return PreActStep(think=think, plan=plan, action=action)
        return ParsedStep(think=think, plan=plan, action=action, problems=self.problems)

    def block(self, tag: str, pos: int) -> tuple[str | None, int]:
        """Read ``<tag>...</tag>`` expected at ``pos``; return (stripped inner, position after)."""
        t, opener, closer = self.text, f"<{tag}>", f"</{tag}>"
        start = pos if t.startswith(opener, pos) else t.find(opener, pos)
        if start == -1:
            fuzzy = _THINK_OPEN_ANY.search(t, pos) if tag == "think" else None
            if fuzzy is None:
                self.fail(f"missing_{tag}", pos, f"no {opener} at or after char {pos}")
                return None, pos
            start, body = fuzzy.start(), fuzzy.end()
            self.fail(
                "malformed_tag", start, f"expected {opener} at char {start}, got {fuzzy[0]!r}"
            )
        else:
            if start != pos:
                wrong_order = t.startswith(("<plan>", "<action"), pos)
                where = "another tag" if wrong_order else "text"
                message = f"{opener} must come first, found {where} at char {pos}"
                self.fail("unexpected_tag" if wrong_order else "text_outside_tags", pos, message)
            body = start + len(opener)
        end = t.find(closer, body)
        if end != -1:
            return t[body:end].strip(), end + len(closer)
        fuzzy = _THINK_CLOSE_ANY.search(t, body) if tag == "think" else None
        if fuzzy is not None:
            message = f"expected {closer} at char {fuzzy.start()}, got {fuzzy[0]!r}"
            self.fail("malformed_tag", fuzzy.start(), message)
            return t[body : fuzzy.start()].strip(), fuzzy.end()
        self.fail("unclosed_tag", start, f"{opener} at char {start} is never closed by {closer}")
        nxt = _ACTION_OPEN.search(t, body)
        stop = len(t) if nxt is None else nxt.start()
        if tag == "think" and 0 <= t.find("<plan>", body, stop):
            stop = t.find("<plan>", body, stop)
        return t[body:stop].strip(), stop

    def action(self, pos: int) -> tuple[Action | None, int]:
        t = self.text
        opening = _ACTION_OPEN.match(t, pos)
        if opening is None:
            self.no_action_here(pos)
            opening = _ACTION_OPEN.search(t, pos) or _ACTION_OPEN.search(t)
            if opening is None:
                return None, len(t)
        kind = next((k for k, tag in _EXACT_OPEN.items() if opening.group() == tag), None)
        if kind is None:
            got, where = opening.group(), opening.start()
            message = f'expected <action type="tool"> or <action type="say"> at char {where}'
            self.fail("bad_action_type", where, f"{message}, got {got!r}")
            attr = _ACTION_TYPE.search(opening.group())
            kind = attr.group(1).lower() if attr else None
            if kind not in _EXACT_OPEN:
                kind = "tool" if t[opening.end() :].lstrip().startswith("{") else "say"
        return (self.tool if kind == "tool" else self.say)(opening)

    def no_action_here(self, pos: int) -> None:
        t = self.text
        if t.startswith(("<think>", "<plan>"), pos):
            self.fail("unexpected_tag", pos, f"expected <action> at char {pos}, not another block")
        elif pos < len(t) and _ACTION_OPEN.search(t, pos):
            self.fail("text_outside_tags", pos, f"unexpected text at char {pos} before <action>")
        else:
            self.fail("missing_action", pos, f"no <action> block at or after char {pos}")

    def say(self, opening: re.Match[str]) -> tuple[Action | None, int]:
        t, body = self.text, opening.end()
        close = t.rfind("</action>", body)
        end = close + len("</action>")
        if close == -1:
            self.fail("unclosed_tag", opening.start(), self.unclosed_action(opening))
            close = end = len(t)
        inner = t[body:close]
        second = _SECOND_ACTION.search(inner)
        if second is not None:
            position = body + second.start(1)
            self.fail("multiple_actions", position, f"a second <action> starts at char {position}")
            inner = inner[: second.start()]
        if not inner.strip():
            self.fail("empty_say", body, f'<action type="say"> at char {opening.start()} is empty')
            return None, end
        return Action.say(inner), end

    @staticmethod
    def unclosed_action(opening: re.Match[str]) -> str:
        return f"<action> at char {opening.start()} is never closed by </action>"

    def tool(self, opening: re.Match[str]) -> tuple[Action | None, int]:
        t, body = self.text, opening.end()
        if t.find("</action>", body) == -1:
            self.fail("unclosed_tag", opening.start(), self.unclosed_action(opening))
        start = self.ws(body)
        try:
            obj, stop = _DECODER.raw_decode(t, start)
        except (ValueError, RecursionError) as err:
            where = getattr(err, "pos", start)
            why = getattr(err, "msg", str(err) or type(err).__name__)
            message = f'invalid JSON in <action type="tool"> at char {where}: {why}'
            self.fail("invalid_tool_json", where, message)
            close = t.find("</action>", body)
            end = len(t) if close == -1 else close + len("</action>")
            obj = _repair_json(t[body : len(t) if close == -1 else close])
            return (None if obj is None else self.tool_from_json(obj, start)), end
        after = self.ws(stop)
        if t.startswith("</action>", after):
            return self.tool_from_json(obj, start), after + len("</action>")
        close = t.find("</action>", after)
        if close != -1:
            self.fail("invalid_tool_json", after, f"extra data after the tool JSON at char {after}")
        return self.tool_from_json(obj, start), after if close == -1 else close + len("</action>")

    def tool_from_json(self, obj: Any, pos: int) -> Action | None:
        if not isinstance(obj, dict):
            self.fail("tool_json_not_object", pos, f"tool JSON at char {pos} is not an object")
            return None
        if "name" not in obj:
            self.fail("missing_tool_name", pos, f'tool JSON at char {pos} has no "name"')
            return None
        name = obj["name"]
        if not isinstance(name, str) or not name:
            self.fail("bad_tool_name", pos, f'"name" at char {pos} is not a non-empty string')
            return None
        extra = sorted(set(obj) - {"name", "arguments"})
        if extra:
            self.fail("unexpected_tool_keys", pos, f"tool JSON at char {pos} has keys {extra}")
        arguments = obj.get("arguments")
        if "arguments" not in obj:
            self.fail("missing_arguments", pos, f'tool JSON at char {pos} has no "arguments"')
            arguments = {}
        elif not isinstance(arguments, dict):
            self.fail("arguments_not_object", pos, f'"arguments" at char {pos} is not an object')
            arguments = _repair_json(arguments) if isinstance(arguments, str) else None
            if not isinstance(arguments, dict):
                return None
        try:
            return Action.tool(name, arguments)
        except ValidationError as err:
            why = err.errors()[0]["msg"]
            self.fail("invalid_tool_json", pos, f"unusable tool call at char {pos}: {why}")
            return None

    def tail(self, pos: int) -> None:
        t = self.text
        if pos >= len(t):
            return
        if _ACTION_OPEN.match(t, pos):
            self.fail("multiple_actions", pos, f"a second <action> starts at char {pos}")
        elif t.startswith(("<think>", "<plan>"), pos):
            self.fail("unexpected_tag", pos, f"unexpected block at char {pos} after </action>")
        else:
            self.fail("text_outside_tags", pos, f"unexpected text at char {pos} after </action>")


def _repair_json(body: str) -> Any:
    """Best-effort decoding of almost-JSON (code fences, stray text, trailing commas, single
    quotes); returns None when nothing decodes."""
    first, last = body.find("{"), body.rfind("}")
    if first == -1 or last < first:
        return None
    core = body[first : last + 1]
    candidates = [core, _TRAILING_COMMA.sub(r"\1", core)]
    if '"' not in core:
        candidates += [c.replace("'", '"') for c in candidates]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):
            continue
    return None


def validate_turn(steps: list[PreActStep], style: Style = "pre_act") -> list[str]:
    """Check one assistant turn (its steps between two user messages) against SPEC §4.1.

    Args:
        steps (`list[PreActStep]`): the turn's steps in order.
        style (`str`): in ``"pre_act"`` the first step needs a plan; ``"react"`` allows none.

    Returns:
        `list[str]`: problems as ``"step <i>: <reason>: <message>"``; empty when valid.

    Example:
        >>> tool = PreActStep(think="look up", action=Action.tool("get_order", {"id": 1}))
        >>> for problem in validate_turn([tool]):
        ...     print(problem)
        step 0: missing_plan: the first step of a turn needs a <plan>
        step 0: missing_say: the turn must end with one say action
    """
    _check_style(style)
    if not steps:
        return ["step 0: empty_turn: a turn needs at least one step"]
    problems = []
    if style == "pre_act" and steps[0].plan is None:
        problems.append("step 0: missing_plan: the first step of a turn needs a <plan>")
    for index, step in enumerate(steps):
        if not step.think:
            problems.append(f"step {index}: empty_think: <think> is empty")
        if style == "react" and step.plan is not None:
            problems.append(f"step {index}: plan_not_allowed: react steps have no <plan>")
        if index < len(steps) - 1 and step.action.type == "say":
            problems.append(f"step {index}: early_say: only the last step of a turn may say")
    if steps[-1].action.type != "say":
        problems.append(
            f"step {len(steps) - 1}: missing_say: the turn must end with one say action"
        )
    return problems
