"""The scripted assistant: a competent, grounded policy driven by the scenario's gold workflow.

It calls the gold tools in order, but only with values it has grounded in the conversation
(:mod:`simulation.agents.grounding`): it asks for slots the user has not given and checks a
slot the user stated differently (goal revision). Its ``<think>`` says only what a policy
could know from the conversation and the tool results (what is missing, what a result or an
error means, which rule applies): never the gold step index, nor where a value the
conversation did not give came from.

Write tools are confirmed with the user first. Recovery: ``timeout``/``backend_error`` are
retried once in the same turn, then the user is asked whether to try again (one more
round); empty results are reported with alternatives and searched again once if the user
agrees; refusals (``policy_violation``, ``invalid_state``, ...) are explained — resubmitted
once if the refusal asks for a confirmation; when the workflow goes on after a refused write
(a smaller room, a later table), that next step is offered instead and done once the user
agrees; otherwise declined with alternatives (:mod:`simulation.agents.recovery`). An
impossible scenario runs its workflow and declines with its ``fallback_behavior``. The turn
ends with a summary of what the tools returned (and any refusal still standing). Every
step is rendered with :func:`mads_bench.pre_act.render_step` (so it strict-parses) and its
think/plan name the tool, the slots and the error code.
"""

from __future__ import annotations

import random
from typing import Any

from mads_bench.catalog import Domain
from mads_bench.data_model import Message, Scenario, ToolResult
from mads_bench.pre_act import Action, PreActStep, canonical_json, parse_step, render_step
from mads_bench.text import normalise
from simulation.agents import speech
from simulation.agents.grounding import SlotGrounding
from simulation.agents.phrasing import fixed, say
from simulation.agents.recovery import ATTEMPTS_PER_ROUND, Decision, RecoveryMixin, said
from simulation.agents.settings import SETTINGS
from simulation.agents.text import (
    asks_confirmation,
    is_affirmative,
    is_refusal,
    mentioned_slots,
    slot_label,
    value_in,
)


class ScriptedAssistant(RecoveryMixin):
    """Deterministic assistant policy (see the module docstring).

    Args:
        scenario: the scenario (gold workflow, slots, fallback).
        seed: conversation seed (seeds the wording of each step; the policy ignores it).
        style: ``"pre_act"`` (default) or ``"react"`` (no plan).
        domain: the scenario's loaded domain pack (its tools).
    """

    spec = "scripted"

    def __init__(
        self, scenario: Scenario, seed: int = 0, style: str = "pre_act", *, domain: Domain
    ) -> None:
        self.scenario, self.seed, self.style, self.domain = scenario, seed, style, domain
        self.tools = {t.name: t for t in domain.tools_for(scenario)}
        self.gold = scenario.gold_workflow
        self.grounding = SlotGrounding(scenario)
        self.pointer = self.attempts = self.rounds = self.steps_in_turn = self.seen = 0
        self.confirmed: set[str] = set()
        self.asked: set[str] = set()
        self.awaiting: tuple[Any, ...] | None = None
        self.issue: tuple[Any, ...] | None = None
        self.retry_empty = self.resubmit = False
        self.last_error = ("", "")
        self.results: list[ToolResult] = []
        self.note: str | None = None  # apology for a refused write, said with the next say
        self.refused: dict[str, str] = {}  # refused writes not done since -> rule message
        self.said: list[str] = []  # its own say texts so far, normalised
        self.known = ""  # what both sides said so far, normalised (a report need not repeat it)
        self.names: dict[str, str] = {}  # id -> name from the results so far (speech.entity_names)

    # ------------------------------------------------------------------ reading the view
    def respond(self, view: list[Message]) -> Message:
        """The next Pre-Act step for the assistant's view of the conversation."""
        for message in view[self.seen :]:
            if message.role == "user":
                self._on_user(message.content)
            elif message.role == "tool" and message.tool_result is not None:
                self._on_result(message.tool_result)
            elif message.role == "assistant":
                action = parse_step(message.content, strict=False).action
                if action is not None:
                    self.said.append(normalise(action.text or "", numbers="canonical"))
        self.seen = len(view)
        users = [normalise(m.content, numbers="canonical") for m in view if m.role == "user"]
        self.known = " ".join(users + self.said)
        tool_text = " ".join(m.content for m in view if m.role == "tool")
        tools = normalise(tool_text, numbers="canonical")
        think, action, plan_steps = self._next(users, tools)
        plan = None
        if self.steps_in_turn == 0 and self.style == "pre_act":
            plan = "\n".join(f"{i}. {s}" for i, s in enumerate(plan_steps, 1))
        self.steps_in_turn = 0 if action.type == "say" else self.steps_in_turn + 1
        step = PreActStep(think=think, plan=plan, action=action)
        return Message(role="assistant", content=render_step(step, self.style), turn_index=0)

    def _on_user(self, text: str) -> None:
        awaiting, self.awaiting = self.awaiting, None
        # Retrying is agreed to by anything but a refusal (the user may just add details).
        lenient = awaiting is not None and awaiting[0] in ("retry", "empty")
        agrees = is_affirmative(text) or (lenient and not is_refusal(text))
        if awaiting is None or not agrees:
            return
        if awaiting[0] == "confirm":
            self.confirmed.add(awaiting[1])
        elif awaiting[0] == "stale":
            self.grounding.accepted[awaiting[1]] = awaiting[2]
        elif awaiting[0] == "retry":
            self.attempts, self.rounds, self.issue = 0, self.rounds + 1, None
        elif awaiting[0] == "empty":
            self.retry_empty, self.issue = True, None
        elif awaiting[0] == "resubmit":
            self.resubmit, self.issue = True, None

    def _on_result(self, result: ToolResult) -> None:
        content = result.content if isinstance(result.content, dict) else {}
        tool = self.tools.get(result.name)
        empty = speech.is_empty_result(result.content, tool.kind if tool else "read")
        if result.ok and empty and not self.scenario.impossible:
            self.issue = ("empty", result.name, self.retry_empty)
        elif result.ok:
            self.results.append(result)
            for identifier, name in speech.entity_names([result.content]).items():
                self.names.setdefault(identifier, name)
            self.refused.pop(result.name, None)
            self.pointer += 1
            self.attempts, self.retry_empty, self.resubmit = 0, False, False
        elif content.get("retryable") or content.get("code") in ("timeout", "backend_error"):
            self.attempts += 1
            self.last_error = (content.get("code", "error"), content.get("message", ""))
        else:
            self.issue = ("refused", result.name, content.get("code"), content.get("message", ""))

    # ------------------------------------------------------------------ deciding
    def _next(self, users: list[str], tools: str) -> Decision:
        remaining = [g.name for g in self.gold[self.pointer :]]
        if self.issue is not None:
            return self._handle_issue(remaining, users, tools)
        if self.pointer >= len(self.gold):
            return self._finish()
        call = self.gold[self.pointer]
        calls = [f"Call {n}." for n in remaining]
        args, missing, stale, derived = self.grounding.resolve(call.arguments, users, tools)
        if missing:
            labels = " and ".join(f"the {slot_label(m)}" for m in missing)
            names = " and ".join(slot_label(m) for m in missing)
            think = say("think_missing", self._rng(), tool=call.name, labels=labels)
            ask = f"To go on instead, could you tell me {labels}?" if self.note else None
            ask = ask or say("ask", self._rng(), labels=labels, names=names)
            plan = (f"Ask the user for {labels}.", *calls, "Report the outcome.")
            return said(think, self._spoken(ask), *plan)
        if stale:
            slot, stated = stale[0]
            self.awaiting = ("stale", slot, stated)
            values = {"slot": slot_label(slot), "value": speech.render_value(stated)}
            think = say("think_stale", self._rng(), tool=call.name, **values)
            text = say("stale", self._rng(), **values)
            return said(think, self._spoken(text), f"Confirm the {slot_label(slot)}.", *calls)
        key = canonical_json({"name": call.name, "arguments": args})
        write = self.tools[call.name].kind == "write"
        if write and key not in self.confirmed and not self.resubmit:
            again = "Noted. To confirm once more: " if key in self.asked else ""
            self.awaiting = ("confirm", key)
            self.asked.add(key)
            rng = self._rng()
            note = speech.describe_args(args, rng, note=True)
            think = say("think_confirm", rng, tool=call.name, args=note)
            lead = f"{again}{say('ready', rng)}"
            # on a first confirmation, now and then an SGD "Please confirm the following:"
            if not again and rng.random() < SETTINGS.sgd_confirm_lead_share:
                lead = say("confirm_lead", rng)
            # now and then the whole confirmation is one question; never for an
            # alternative offered after a refusal ("Instead, I can ...")
            act = (
                "confirm_ask"
                if not (again or self.note) and rng.random() < SETTINGS.one_question_confirm_share
                else "confirm"
            )
            text = say(
                act, rng, lead="Instead, I can" if self.note else lead.strip(),
                action=speech.spoken_action(call.name, rng),
                args=speech.describe_args(args, rng, names=self.names).rstrip("."),
                question=say("confirm_question", rng),
            )  # fmt: skip
            plan = (f"Confirm {call.name} with the user.", *calls, "Report the outcome.")
            return said(think, self._spoken(text), *plan)
        if self.attempts:
            code, message = self.last_error
            if self.attempts >= ATTEMPTS_PER_ROUND:
                return self._offer_retry(call.name, code, message, remaining)
            think = say(
                "think_retry", self._rng(), tool=call.name, code=code, message=message,
                attempt=str(self.attempts + 1), attempts=str(ATTEMPTS_PER_ROUND),
            )  # fmt: skip
        else:
            grounded = [k for k in args if k not in derived]
            # a value the user never said came from a tool result: the think says so
            said_by_user = " ".join(users)
            told = [
                k for k in grounded
                if isinstance(args[k], bool) or value_in(args[k], said_by_user)
            ]  # fmt: skip
            shown = told or grounded
            rng = self._rng()
            grounded_by = ""
            if shown:
                pairs = speech.describe_args({k: args[k] for k in shown[:3]}, rng, note=True)
                source = "grounded" if told else "grounded_tool"
                grounded_by = say(source, rng, names=" and ".join(shown), pairs=pairs)
                if grounded_by[:1].isalpha():
                    grounded_by = grounded_by[:1].lower() + grounded_by[1:]
            think = say("think_call", rng, tool=call.name, grounded=grounded_by)
        return think, Action.tool(call.name, args), [*calls, "Report the outcome to the user."]

    # ------------------------------------------------------------------ saying
    def _rng(self) -> random.Random:
        """The wording RNG of this step: seeded by the conversation and the step count."""
        return random.Random(f"{self.seed}:{self.scenario.id}:{self.seen}")

    def _result_words(self, result: ToolResult, rng: random.Random) -> str:
        """One result in a report: "your reservation RB-0024; ..." when the result's own id
        names what the tool acts on, else "the reservation: ..." around its fields."""
        what = speech.spoken_object(result.name, rng)
        facts = speech.describe_result(
            result.content, rng, known=self.known, names=self.names, what=what
        )
        if facts.startswith(what):
            return facts
        return say("result", rng, capital=False, what=what, facts=facts)

    def _spoken(self, text: str) -> str:
        """``text``, after the pending apology for a refused write (said once)."""
        note, self.note = self.note, None
        return f"{note} {text}" if note else text

    def _finish(self, reason: str = "") -> Decision:
        self.note = None  # the summary repeats any refusal still standing
        if self.scenario.impossible:
            rng = self._rng()
            lead = say("decline_lead", rng)
            text = speech.spoken_fallback(self.scenario.fallback_behavior or "", lead, rng)
            names = ", ".join(dict.fromkeys(r.name for r in self.results)) or "the tools"
            think = fixed("think_impossible", reason=reason, names=names)
            return said(think, text, "Explain why it cannot be done.", "Offer the alternatives.")
        done = [r for r in self.results if self.tools[r.name].kind == "write"] or self.results[-1:]
        rng = self._rng()
        facts = "; ".join(self._result_words(r, rng) for r in done) or "nothing needed changing"
        names = ", ".join(dict.fromkeys(r.name for r in self.results)) or "no tools"
        think = say("think_done", self._rng(), names=names)
        if self.refused:
            rules = "; ".join(
                fixed("refused_rule", action=speech.spoken_action(t), rule=m.rstrip(". "))
                for t, m in self.refused.items()
            )
            refused = ", ".join(self.refused)
            think = fixed("think_done_with_change", names=names, refused=refused)
            text = say("done_with_change", self._rng(), rules=rules, facts=facts)
            return said(think, text, "Explain the refusal.", "Summarise.")
        if self.scenario.must_say:  # the gold policy answers what the user asked, as told
            facts = f"{facts}; to answer your question: {', '.join(self.scenario.must_say)}"
        verb = "did" if any(self.tools[r.name].kind == "write" for r in done) else "found"
        return think, Action.say(self._report(verb, facts)), ["Summarise the results."]

    def _report(self, verb: str, facts: str) -> str:
        """The outcome report: a completion cue, the facts, now and then "anything else?"."""
        rng = self._rng()
        if verb == "did" and rng.random() < SETTINGS.sgd_success_share:  # an SGD "you're all set"
            text = f"{say('success', rng)} {say('did_body', rng, facts=facts)}"
        else:
            text = say(verb, rng, facts=facts)
        tail = say("req_more", rng)
        slots = list(self.scenario.slots)
        if (
            rng.random() < SETTINGS.anything_else_share
            and not asks_confirmation(tail)
            and not mentioned_slots(tail, slots)
        ):
            text = f"{text} {tail}"
        return text
