"""How the scripted assistant recovers when a tool call does not simply succeed.

:class:`RecoveryMixin` holds the decisions of :class:`~simulation.agents.assistant.
ScriptedAssistant` for the three kinds of trouble a tool call can meet:

- a transient failure (``timeout``/``backend_error``) that outlived its in-turn retry: tell
  the user and offer to try again, once; then stop and explain;
- an empty search (read tools only): report it with alternatives and search again once if
  the user agrees; then stop;
- a refusal by a business rule (``policy_violation``, ``invalid_state``, ...): in an
  impossible scenario, decline with the ``fallback_behavior``; when the rule asks for a
  confirmation, explain it and resubmit once the user agrees; when the workflow goes on
  after the refused write (a smaller room, another time), explain the rule and offer that
  next step instead — the offer is the next say (a write is confirmed in the same breath),
  and the closing summary repeats the refusal; otherwise decline with alternatives.

Every decision is a ``(think, action, plan steps)`` triple, like the assistant's own.
"""

from __future__ import annotations

from typing import Any

from mads_bench.pre_act import Action
from simulation.agents.phrasing import fixed, say
from simulation.agents.speech import search_phrase, spoken_action
from simulation.agents.text import invites_resubmission, slot_label

ATTEMPTS_PER_ROUND = 2  # first call + one retry, then ask the user
Decision = tuple[str, Action, list[str]]


def said(think: str, text: str, *plan: str) -> Decision:
    """The decision to say ``text`` to the user, with its think and plan steps."""
    return think, Action.say(text), list(plan)


class RecoveryMixin:
    """Recovery decisions, mixed into the scripted assistant: they use its state (``issue``,
    ``pointer``, ...) and its ``_next`` (the policy) and ``_finish`` (the closing say)."""

    scenario: Any
    gold: list[Any]
    tools: dict[str, Any]
    issue: tuple[Any, ...] | None
    awaiting: tuple[Any, ...] | None
    pointer: int
    attempts: int
    rounds: int
    resubmit: bool
    note: str | None
    refused: dict[str, str]

    def _about(self, act: str, tool: str, **values: str) -> str:
        """``act`` said of what ``tool`` does, both worded with this step's RNG."""
        rng = self._rng()
        return say(act, rng, action=spoken_action(tool, rng), **values)

    def _offer_retry(self, tool: str, code: str, message: str, remaining: list[str]) -> Decision:
        """After a failed round: ask to try again once, then stop and explain."""
        failure = {"code": code, "message": message.rstrip(".")}
        if self.rounds >= 1:
            self.pointer = len(self.gold)
            think = fixed("think_gave_up", tool=tool, attempts=ATTEMPTS_PER_ROUND, code=code)
            return said(think, self._about("still_failing", tool, **failure), "Explain the outage.")
        self.awaiting = ("retry",)
        think = fixed("think_retry_offer", tool=tool, attempts=self.attempts, code=code)
        text = self._about("retry_offer", tool, **failure)
        agreed = [f"Call {n} once they agree." for n in remaining]
        return said(think, text, "Tell the user about the failure.", *agreed)

    def _handle_issue(self, remaining: list[str], users: list[str], tools: str) -> Decision:
        """The decision for the pending empty result or refusal (``self.issue``)."""
        kind, tool = self.issue[0], self.issue[1]
        if kind == "empty":
            return self._empty(tool, already_retried=self.issue[2])
        code, message = self.issue[2], self.issue[3]
        if self.scenario.impossible:
            self.issue = None
            self.pointer = len(self.gold)
            return self._finish(f"{tool} was refused ({code}: {message}). ")
        if invites_resubmission(message) and not self.resubmit:
            self.awaiting = ("resubmit",)
            text = self._about("resubmit", tool, message=message)
            think = say("think_resubmit", self._rng(), tool=tool, code=code)
            return said(
                think, text, "Explain the rule.", f"Resubmit {tool} once the user confirms."
            )
        if self.tools[tool].kind == "write" and self.pointer + 1 < len(self.gold):
            return self._offer_alternative(tool, code, message, users, tools)
        self.issue, self.pointer = None, len(self.gold)
        text = self._about("refused_decline", tool, message=message)
        think = say("think_refused", self._rng(), tool=tool, code=code, message=message)
        return said(think, text, "Explain the rule.", "Offer alternatives.")

    def _empty(self, tool: str, *, already_retried: bool) -> Decision:
        if not already_retried:
            self.awaiting = ("empty",)
            spec = self.tools[tool]
            optional = [p for p in spec.parameters.get("properties", {}) if p not in spec.required]
            change = f" or change the {slot_label(optional[0])}" if optional else ""
            text = say("empty_offer", self._rng(), tool=search_phrase(tool), change=change)
            think = say("think_empty", self._rng(), tool=tool)
            return said(think, text, "Report the empty result.", "Offer alternatives.")
        self.pointer = len(self.gold)
        text = say("empty_again", self._rng(), tool=search_phrase(tool))
        return said(fixed("think_empty_again", tool=tool), text, "Explain that nothing was found.")

    def _offer_alternative(
        self, tool: str, code: str, message: str, users: list[str], tools: str
    ) -> Decision:
        """Skip the refused write and go on with the workflow's next step, as the offer.

        The apology (``self.note``) is spoken with the next say: the confirmation of the
        next write ("Instead, I can ... Shall I go ahead?") or a question for a missing
        slot; a read step in between just runs first.
        """
        self.refused[tool] = message
        self.issue, self.pointer = None, self.pointer + 1
        self.note = fixed("sorry_could_not", action=spoken_action(tool), message=message)
        then, action, plan = self._next(users, tools)
        alternative = self.gold[self.pointer].name if self.pointer < len(self.gold) else "it"
        act = "think_offer_instead" if action.type == "say" else "think_go_on_instead"
        values = {"tool": tool, "code": code, "message": message, "alternative": alternative}
        return fixed(act, **values, then=then), action, plan
