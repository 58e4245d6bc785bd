"""Utterances for a dialogue plan: seeded templates, optionally rewritten by an LLM backend.

`render_plan` writes each planned turn from `templates` (one sentence per act) and records
the values the turn must carry (the slot values an `intro`, `provide` or result states).
`realize_with_backend` asks a backend to rewrite each turn naturally (atod.md Table 16's
generation step, per turn, conditioned on the previous turns) and keeps a rewrite only when
it still contains every required value and no closing phrase it should not have; otherwise
the template stays. The plan, and therefore every status label, never depends on the LLM.

Example:
    >>> import random  # doctest: +SKIP
    >>> turns = render_plan(trajectory, plan, random.Random(0))  # doctest: +SKIP
    >>> turns[0].utterance  # doctest: +SKIP
    'Hi, I need to buy bus tickets (from location Boston, to location New York).'
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field

from simulation.atod_generation import templates as tpl
from simulation.atod_generation.annotate import Trajectory
from simulation.atod_generation.dialogue import PlannedTurn

REWRITE_PROMPT = (
    "You write one line of a task-oriented dialogue between a USER and a SYSTEM assistant.\n"
    "Conversation so far:\n{history}\n\n"
    "Rewrite the next {speaker} line so it sounds natural. Keep its meaning, keep these values "
    "exactly: {values}. Do not add new requests or outcomes. Reply with the line only.\n"
    "Line: {line}"
)


@dataclass
class RenderedTurn:
    """A turn's text and the values it must contain."""

    utterance: str
    required: list[str] = field(default_factory=list)
    source: str = "template"


def _code(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_uppercase + string.digits, k=6))


def _sentence(act, trajectory: Trajectory, rng: random.Random, first: bool) -> tuple[str, list]:
    if act.goal is None:
        table = {
            "decline": tpl.USER_DECLINE,
            "close": tpl.USER_CLOSE,
            "proactive": tpl.SYSTEM_PROACTIVE,
            "filler": tpl.SYSTEM_FILLER,
            "bye": tpl.SYSTEM_BYE,
        }
        return rng.choice(table[act.kind]), []
    goal = trajectory.goal(act.goal)
    short = tpl.short_name(goal.key)
    phrase = tpl.goal_phrase(goal.key)[0]
    if act.kind == "intro":
        shown = {k: v for k, v in goal.slot_values.items() if k != goal.withheld}
        if not shown:
            return rng.choice(tpl.USER_INTRO_BARE).format(phrase=phrase), []
        details = tpl.render_slots(shown, rng)
        form = tpl.USER_INTRO[0] if first else rng.choice(tpl.USER_INTRO[1:])
        text = form.format(
            phrase=phrase, details=details, details_cap=details[:1].upper() + details[1:]
        )
        return text, [tpl.render_value(v) for v in shown.values()]
    if act.kind == "provide":
        value = tpl.render_value(goal.slot_values[goal.withheld])
        form = rng.choice(tpl.USER_PROVIDE)
        return form.format(slot=tpl.humanize(goal.withheld), value=value, short=short), [value]
    if act.kind == "ask":
        return rng.choice(tpl.SYSTEM_ASK).format(short=short, slot=tpl.humanize(goal.withheld)), []
    if act.kind == "wait_dep":
        prereq = tpl.short_name(trajectory.goal(act.other).key)
        return rng.choice(tpl.SYSTEM_WAIT_DEP).format(short=short, prereq=prereq), []
    if act.kind in ("complete", "recap"):
        details = tpl.render_slots(goal.slot_values, rng) or "your request"
        values = [tpl.render_value(v) for v in goal.slot_values.values()]
        if act.kind == "recap":
            return f"For the {short}, we have {details}.", values
        if goal.transactional:
            form = rng.choice(tpl.SYSTEM_COMPLETE_TX)
            return form.format(short=short, details=details, code=_code(rng)), values
        form = rng.choice(tpl.SYSTEM_COMPLETE_INFO)
        return form.format(
            short=short, details=details, result=rng.choice(tpl.INFO_RESULTS)
        ), values
    if act.kind == "fail":
        return rng.choice(tpl.SYSTEM_FAIL).format(
            short=short, reason=rng.choice(tpl.FAIL_REASONS)
        ), []
    table = {
        "abandon": tpl.USER_ABANDON,
        "check": tpl.USER_CHECK,
        "followup": tpl.USER_FOLLOWUP,
        "ack": tpl.SYSTEM_ACK,
        "still": tpl.SYSTEM_STILL,
    }
    return rng.choice(table[act.kind]).format(short=short), []


def render_plan(
    trajectory: Trajectory, plan: list[PlannedTurn], rng: random.Random
) -> list[RenderedTurn]:
    """Template utterances for every planned turn.

    Args:
        trajectory (`Trajectory`): The annotated trajectory.
        plan (`list[PlannedTurn]`): The planned turns.
        rng (`random.Random`): The dialogue's random generator.

    Returns:
        `list[RenderedTurn]`: One per planned turn, in order.
    """
    rendered = []
    for index, turn in enumerate(plan):
        sentences, required = [], []
        for position, act in enumerate(turn.acts):
            text, values = _sentence(act, trajectory, rng, first=index == 0 and position == 0)
            sentences.append(text)
            required.extend(values)
        rendered.append(RenderedTurn(" ".join(sentences), required))
    return rendered


def realize_with_backend(
    plan: list[PlannedTurn], rendered: list[RenderedTurn], backend, context: int = 6
) -> int:
    """Rewrite the template turns with an LLM backend (in place), keeping faithful rewrites.

    Args:
        plan (`list[PlannedTurn]`): The planned turns (speakers).
        rendered (`list[RenderedTurn]`): Template turns; accepted rewrites replace them.
        backend (`ChatBackend`): Any `simulation.backends` backend (`complete(prompts)`).
        context (`int`): Previous turns shown in each prompt.

    Returns:
        `int`: Number of turns whose rewrite was rejected (the template was kept).
    """
    prompts = []
    for index, (turn, text) in enumerate(zip(plan, rendered, strict=True)):
        start = max(0, index - context)
        history = "\n".join(
            f"{plan[i].speaker}: {rendered[i].utterance}" for i in range(start, index)
        )
        prompts.append(
            REWRITE_PROMPT.format(
                history=history or "(start)",
                speaker=turn.speaker,
                values=", ".join(text.required) or "none",
                line=text.utterance,
            )
        )
    rejected = 0
    for text, reply in zip(rendered, backend.complete(prompts), strict=True):
        line = reply.strip().split("\n")[0].strip().strip('"')
        for prefix in ("USER:", "SYSTEM:"):
            line = line.removeprefix(prefix).strip()
        if line and len(line) < 800 and all(v.lower() in line.lower() for v in text.required):
            text.utterance, text.source = line, "llm"
        else:
            rejected += 1
    return rejected
