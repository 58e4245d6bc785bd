"""What a conversation must tell the user: the outcome facts of a scenario, for one seed.

A scenario's author may write them (``must_say``, τ²-bench's ``communicate_info``). Otherwise
they are derived from the gold workflow replayed with the conversation's seed
(:func:`simulation.validator.state.replay_workflow`, adversities included), so they are the
facts this conversation could have produced:

- a **write** (every gold write that succeeded): its confirmation, the fields of its result a
  report always says (:func:`simulation.agents.speech.report_fields` and ``must_tell``: the
  new record's id, its state, its figures and dates) that neither the user nor the arguments
  of a gold call said first (an echoed argument confirms nothing); a result with no such
  field ("1 bag added" to a request for one bag) is confirmed by a reply that reports it done;
- an **information request** (no gold write): the same fields of the last gold lookup's result
  (the balance, the estimate, the tracking status, the flight status); of a list, the first
  field of one of its first three records (any one tells it);
- a lookup that found **nothing** (an empty result, an injected one included): that nothing
  was found.

Of a result's fields, those whose label shares a word with the request (objective and success
criteria: "which gate" -> ``gate``, "delayed by 85 minutes" -> ``delay_minutes``) or whose value
it quotes ("quotes 174 USD" -> ``estimated_total``) are the ones asked for; when none is, all
of them.
A blocked goal (impossible, or refused by a business rule) has no facts: its decline is
checked instead (:mod:`simulation.validator.task_success`).

Example:
    >>> from mads_bench.catalog import load_domain
    >>> from simulation.validator.state import replay_workflow
    >>> travel = load_domain("travel")
    >>> scenario = next(s for s in travel.scenarios if s.id == "travel-flight-status-normal")
    >>> facts = outcome_facts(scenario, replay_workflow(scenario, 0, travel), known="")
    >>> [(f.label, f.forms) for f in facts]
    [('the status', ('delayed',)), ('the delay minutes', (85,)), ('the gate', ('B14',))]
    >>> [f.label for f in untold(facts, "Flight NW318 is delayed and leaves from gate B14.")]
    ['the delay minutes']
    >>> untold(facts, "NW318 is delayed by 85 minutes; it leaves from gate B14.")
    []
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mads_bench.data_model import Scenario
from mads_bench.text import normalise
from simulation.agents.speech import (
    entity_names,
    is_empty_result,
    must_tell,
    report_fields,
    spoken_action,
)
from simulation.agents.text import reports_completion, same_value, slot_label, value_in
from simulation.validator.state import GoldCall, GoldReplay

__all__ = ["NOTHING_FOUND", "OutcomeFact", "outcome_facts", "untold"]

NOTHING_FOUND = re.compile(
    r"\b(?:nothing|empty|no (?:matches|match|results?|records?|availability)|none (?:found|"
    r"available)|(?:could not|couldn't|did not|didn't|can't|cannot) find|not find any|"
    r"no \w+ (?:found|available|matched))\b",
    re.IGNORECASE,
)
_STOP = {
    "about", "after", "account", "again", "also", "from", "have", "into", "just", "like",
    "make", "need", "please", "right", "that", "their", "there", "this", "what", "when",
    "where", "which", "with", "would", "your", "number",
}  # fmt: skip


@dataclass(frozen=True)
class OutcomeFact:
    """One fact the user must be told: said when any of ``forms`` appears in a reply (a value,
    or an id and the name a result gives it); with no ``forms``, when a reply says that
    nothing was found (``cue="nothing_found"``) or that it is done (``cue="done"``).
    ``label`` names it as the user would ask for it ("the gate")."""

    label: str
    forms: tuple[Any, ...] = ()
    cue: str = "nothing_found"

    def told(self, normalised: str, raw: str) -> bool:
        """Whether a reply tells it (``normalised`` by ``normalise(numbers="canonical")``)."""
        if self.forms:
            return any(value_in(form, normalised) for form in self.forms)
        if self.cue == "done":
            return reports_completion(raw)
        return bool(NOTHING_FOUND.search(raw))


def outcome_facts(scenario: Scenario, replay: GoldReplay, known: str) -> list[OutcomeFact]:
    """The facts a conversation of ``scenario`` must tell (see the module docstring).

    Args:
        scenario (`Scenario`): the scenario (its ``must_say`` wins when written).
        replay (`GoldReplay`): its gold workflow replayed with the conversation's seed.
        known (`str`): what the user said, normalised (a report need not repeat it).

    Returns:
        `list[OutcomeFact]`: empty for a blocked goal.
    """
    if scenario.must_say:
        return [OutcomeFact(str(fact), (fact,)) for fact in scenario.must_say]
    if scenario.impossible or replay.blocked:
        return []
    names = entity_names([c.result.content for c in replay.calls if c.result.ok])
    asked = " ".join([scenario.objective, *scenario.success_criteria])
    request = (_words(asked), normalise(asked, numbers="canonical"))
    done = [c for c in replay.calls if c.result.ok]
    writes = [c for c in done if c.kind == "write"]
    if writes:
        return [
            fact
            for call in writes
            for fact in _call_facts(call, done, known, names, request) or [_confirmation(call)]
        ]
    if not done:
        return []
    if is_empty_result(done[-1].result.content):
        return [OutcomeFact("the search result")]
    return _call_facts(done[-1], done, known, names, request)


def untold(facts: Sequence[OutcomeFact], text: str) -> list[OutcomeFact]:
    """The facts that ``text`` (the replies, joined) does not tell."""
    normalised = normalise(text, numbers="canonical")
    return [fact for fact in facts if not fact.told(normalised, text)]


def _call_facts(
    call: GoldCall,
    calls: list[GoldCall],
    known: str,
    names: dict[str, str],
    request: tuple[set[str], str],
) -> list[OutcomeFact]:
    """What a call's result tells that neither the user nor a gold call's arguments said: its
    own fields, else (a search answer that only echoes the query) one of its records."""
    content = call.result.content
    given = [v for c in calls for v in c.call.arguments.values()]
    if isinstance(content, dict) and any(_scalar(v) for v in content.values()):
        fields = [
            (key, value)
            for key, value in report_fields(content, known, names)
            if must_tell(key, value)
            and not value_in(value, known)
            and not any(same_value(value, argument) for argument in given)
        ]
        words, text = request
        asked = [(k, v) for k, v in fields if _words(slot_label(k)) & words or value_in(v, text)]
        if fields:
            return [
                OutcomeFact(f"the {slot_label(k)}", _forms(v, names)) for k, v in asked or fields
            ]
    records = _records(content)
    forms = tuple(
        form
        for record in records[:3]
        for key, value in report_fields(record)[:1]
        for form in _forms(value, names)
    )
    return [OutcomeFact("the results", forms)] if forms else []


def _confirmation(call: GoldCall) -> OutcomeFact:
    """The fact of a write whose result only echoes the request: that it was done."""
    return OutcomeFact(f"the result of the request to {spoken_action(call.call.name)}", cue="done")


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _records(content: Any) -> list[dict[str, Any]]:
    """The records of a list result, or of an object's first non-empty list of records."""
    if isinstance(content, dict):
        lists = [v for v in content.values() if isinstance(v, list) and _records(v)]
        content = lists[0] if lists else []
    return [item for item in content if isinstance(item, dict)] if isinstance(content, list) else []


def _forms(value: Any, names: dict[str, str]) -> tuple[Any, ...]:
    return (value, names[value]) if isinstance(value, str) and value in names else (value,)


def _words(text: str) -> set[str]:
    """Content words of ``text``, stemmed to five letters ("arrival" ~ "arrive")."""
    words = re.findall(r"[a-z]+", text.casefold())
    return {w[:5] for w in words if len(w) >= 4 and w not in _STOP}
