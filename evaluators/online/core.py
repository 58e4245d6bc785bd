"""Online task success: score finished conversations of a candidate assistant, and pass^k.

A conversation succeeds when all three parts hold (each is reported on its own too):

1. **state** — the backend state at the end matches the scenario's gold workflow replayed on a
   fresh copy of the seed state (the validator's task-success rules, one implementation:
   :mod:`simulation.validator.state`). The replay runs with the conversation's seed, so the
   execution adversities the assistant met (a refused write, a timeout) are met again, and
   transient failures are retried as a competent assistant would. Records are compared by
   primary key after value normalisation, so ids the backend generates and timestamps it
   writes line up whenever the same calls were made; a goal revision is part of the gold
   workflow (re-rendered with the revised values); on an impossible scenario no write may
   change the state.
2. **told** — the user was told the outcome: for a blocked goal (impossible scenario or a
   business-rule refusal) the validator's decline rules (an explanation and an alternative,
   no success claim); otherwise the last ``say`` comes after the last successful write and
   every outcome fact was said (:mod:`simulation.validator.outcome_facts`: the scenario's
   ``must_say``, else what the gold workflow replayed on this seed gives: a write's
   confirmation, the values an information request asked for, that nothing was found).
   Never true merely because no tool ran.
3. **ended** — the user ended the conversation (``[DONE]``), not the turn cap, a loop or an
   error.

The three parts are the validator's task-success check read as typed parts
(``CheckResult.part_passed``), never found by searching its reason strings.

pass^k (tau2-bench): per scenario ``C(successes, k) / C(trials, k)``, averaged over scenarios.

Example:
    >>> pass_hat_k(successes=2, trials=4, k=2)
    0.16666666666666666
    >>> outcomes = [OnlineOutcome("s1", 0, "mock", "normal", [], *parts) for parts in
    ...             [(True, True, True), (True, True, False), (False, True, True)]]
    >>> report = score_online(outcomes, resamples=200)
    >>> report["overall"]["success_rate"], report["overall"]["pass_hat_k"]
    (0.3333333333333333, {'1': 0.3333333333333333, '2': 0.0, '3': 0.0})
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from evaluators.bootstrap import bootstrap_interval, paired_bootstrap
from mads_bench.catalog import Domain
from mads_bench.data_model import Scenario, Trajectory
from mads_bench.embedding import SentenceEncoder
from mads_bench.pre_act import canonical_json
from simulation.validator.aggregate import resolve
from simulation.validator.common import Context
from simulation.validator.task_success import TaskSuccessChecker

__all__ = [
    "OnlineOutcome",
    "compare_reports",
    "conversation_outcome",
    "pass_hat_k",
    "render_markdown",
    "score_online",
]


@dataclass
class OnlineOutcome:
    """What one conversation of the candidate achieved."""

    scenario_id: str
    trial: int
    domain: str
    complexity: str
    behaviors: list[str]
    state: bool
    told: bool
    ended: bool
    partial_credit: float | None = None
    malformed_steps: int = 0
    steps: int = 0
    turns: int = 0
    tool_calls: int = 0
    sage_failures_per_turn: float | None = None
    reasons: list[str] = field(default_factory=list)

    @property
    def success(self) -> bool:
        """All three parts hold."""
        return self.state and self.told and self.ended


def conversation_outcome(
    trajectory: Trajectory,
    scenario: Scenario,
    *,
    domain: Domain,
    embedder: SentenceEncoder | None = None,
    sage: bool = False,
) -> OnlineOutcome:
    """Score one finished conversation (rules only: no judge is consulted).

    Args:
        trajectory (`Trajectory`): the conversation, with its ``final_state``.
        scenario (`Scenario`): the scenario it was simulated from.
        domain (`Domain`): the scenario's loaded pack.
        embedder (`SentenceEncoder`, *optional*): MiniLM for the decline explanation (default:
            load).
        sage (`bool`): also count SAGE-Core failures per assistant step
            (`evaluators.sage.mads_turns`: one turn record per tool call and per say).

    Returns:
        `OnlineOutcome`: the three parts, partial credit and the counts.
    """
    context = Context(trajectory, scenario, domain)
    check = resolve(TaskSuccessChecker(embedder).check(context), None)
    assistant = [m for m in trajectory.messages if m.role == "assistant"]
    return OnlineOutcome(
        scenario_id=scenario.id,
        trial=_trial(trajectory.id),
        domain=scenario.domain,
        complexity=scenario.complexity,
        behaviors=sorted({b.kind for b in scenario.behaviors}),
        state=check.part_passed("state"),
        told=check.part_passed("told"),
        ended=check.part_passed("ended"),
        partial_credit=_partial_credit(trajectory, scenario, context),
        malformed_steps=sum(bool(m.parse_problems) for m in assistant),
        steps=len(assistant),
        turns=len({m.turn_index for m in trajectory.messages if m.role == "user"}),
        tool_calls=sum(m.tool_call is not None for m in assistant),
        sage_failures_per_turn=_sage_failures(trajectory, scenario) if sage else None,
        reasons=list(check.reasons),
    )


def _sage_failures(trajectory: Trajectory, scenario: Scenario) -> float | None:
    from evaluators.sage.mads_turns import compile_trajectory, evaluator_for

    records = compile_trajectory(trajectory, scenario)
    if not records:
        return None
    verdicts = evaluator_for(trajectory.domain, None).evaluate(records)
    return sum(v.verdict == "failure" for v in verdicts) / len(records)


def _trial(trajectory_id: str) -> int:
    match = re.search(r"/r(\d+)/", trajectory_id)
    return int(match.group(1)) if match else 0


def _partial_credit(trajectory: Trajectory, scenario: Scenario, context: Context) -> float | None:
    """Gold writes called with exact arguments / gold writes (None without gold writes).

    A gold write a business rule refuses is still the right call, so a call counts whatever
    its result.
    """
    writes = [
        (g.name, canonical_json(g.arguments))
        for g in scenario.gold_workflow
        if (tool := context.tools.get(g.name)) is not None and tool.kind == "write"
    ]
    if not writes or scenario.impossible:
        return None
    called = {
        (m.tool_call.name, canonical_json(m.tool_call.arguments))
        for m in trajectory.messages
        if m.tool_call is not None
    }
    return sum(write in called for write in writes) / len(writes)


def pass_hat_k(successes: int, trials: int, k: int) -> float:
    """tau2-bench's pass^k of one scenario: the chance that k trials drawn without
    replacement all succeed, ``C(successes, k) / C(trials, k)``."""
    if not 1 <= k <= trials:
        raise ValueError(f"pass^k needs 1 <= k <= trials, got k={k}, trials={trials}")
    return math.comb(successes, k) / math.comb(trials, k)


def _summary(outcomes: Sequence[OnlineOutcome], resamples: int, seed: int) -> dict[str, Any]:
    by_scenario: dict[str, list[OnlineOutcome]] = defaultdict(list)
    for outcome in outcomes:
        by_scenario[outcome.scenario_id].append(outcome)
    trials = min(len(group) for group in by_scenario.values())
    rates = [sum(o.success for o in g) / len(g) for g in by_scenario.values()]
    credit = [o.partial_credit for o in outcomes if o.partial_credit is not None]
    sage = [o.sage_failures_per_turn for o in outcomes if o.sage_failures_per_turn is not None]
    steps = sum(o.steps for o in outcomes)
    out = {
        "scenarios": len(by_scenario),
        "conversations": len(outcomes),
        "success_rate": sum(o.success for o in outcomes) / len(outcomes),
        "success_rate_ci95": bootstrap_interval(
            [[rate] for rate in rates], _mean, resamples=resamples, seed=seed
        ),
        "pass_hat_k": {
            str(k): sum(
                pass_hat_k(sum(o.success for o in g), len(g), k) for g in by_scenario.values()
            )
            / len(by_scenario)
            for k in range(1, trials + 1)
        },
        "state": sum(o.state for o in outcomes) / len(outcomes),
        "told": sum(o.told for o in outcomes) / len(outcomes),
        "ended": sum(o.ended for o in outcomes) / len(outcomes),
        "partial_credit": sum(credit) / len(credit) if credit else None,
        "malformed_step_rate": sum(o.malformed_steps for o in outcomes) / steps if steps else 0.0,
        "sage_failures_per_turn": sum(sage) / len(sage) if sage else None,
        "turns_per_conversation": sum(o.turns for o in outcomes) / len(outcomes),
        "tool_calls_per_conversation": sum(o.tool_calls for o in outcomes) / len(outcomes),
    }
    return out


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def score_online(
    outcomes: Iterable[OnlineOutcome], *, resamples: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    """Success, its parts and pass^k overall and by domain, complexity and behavior kind.

    Args:
        outcomes (`Iterable[OnlineOutcome]`): one per conversation (trials of a scenario share
            its id).
        resamples (`int`): bootstrap resamples for the 95% CIs over scenarios.
        seed (`int`): bootstrap seed.

    Returns:
        `dict`: ``overall``, ``by_domain``, ``by_complexity``, ``by_behavior`` (each a summary)
        and ``conversations`` (the outcomes as dicts).
    """
    outcomes = list(outcomes)
    if not outcomes:
        raise ValueError("no conversation to score")
    groups: dict[str, Mapping[str, list[OnlineOutcome]]] = {
        "by_domain": _group(outcomes, lambda o: [o.domain]),
        "by_complexity": _group(outcomes, lambda o: [o.complexity]),
        "by_behavior": _group(outcomes, lambda o: o.behaviors or ["none"]),
    }
    report: dict[str, Any] = {"overall": _summary(outcomes, resamples, seed)}
    for name, group in groups.items():
        report[name] = {key: _summary(part, resamples, seed) for key, part in sorted(group.items())}
    report["conversations"] = [asdict(o) | {"success": o.success} for o in outcomes]
    return report


def _group(outcomes: list[OnlineOutcome], keys) -> dict[str, list[OnlineOutcome]]:
    grouped: dict[str, list[OnlineOutcome]] = defaultdict(list)
    for outcome in outcomes:
        for key in keys(outcome):
            grouped[key].append(outcome)
    return grouped


def compare_reports(
    a: Mapping[str, Any], b: Mapping[str, Any], *, resamples: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    """Paired difference A − B of the success rate over the scenarios both reports scored.

    Args:
        a (`Mapping`), b (`Mapping`): reports of :func:`score_online` (their ``conversations``).
        resamples (`int`): bootstrap resamples; seed (`int`): bootstrap seed.

    Returns:
        `dict`: ``scenarios`` (shared), ``delta`` and its ``ci95``, and the two rates.
    """

    def rates(report: Mapping[str, Any]) -> dict[str, float]:
        by: dict[str, list[bool]] = defaultdict(list)
        for row in report["conversations"]:
            by[row["scenario_id"]].append(bool(row["success"]))
        return {key: sum(v) / len(v) for key, v in by.items()}

    rate_a, rate_b = rates(a), rates(b)
    shared = sorted(set(rate_a) & set(rate_b))
    if not shared:
        raise ValueError("the two reports share no scenario")
    paired = paired_bootstrap(
        [([rate_b[s]], [rate_a[s]]) for s in shared],
        lambda rates: sum(rates) / len(rates),
        resamples=resamples,
        seed=seed,
    )
    return {
        "scenarios": len(shared),
        "success_rate_a": sum(rate_a[s] for s in shared) / len(shared),
        "success_rate_b": sum(rate_b[s] for s in shared) / len(shared),
        "delta": sum(rate_a[s] - rate_b[s] for s in shared) / len(shared),
        "ci95": [paired.ci_low, paired.ci_high],
    }


def render_markdown(report: Mapping[str, Any]) -> str:
    """The report as markdown tables: overall, then by domain, complexity and behavior."""
    ks = list(report["overall"]["pass_hat_k"])
    head = (
        "| group | scenarios | conversations | success (95% CI) | "
        + " | ".join(f"pass^{k}" for k in ks)
        + " | state | told | ended | partial credit | malformed steps | SAGE fails/turn | turns |"
        " tool calls |"
    )
    rule = "| --- " * (12 + len(ks)) + "|"

    def row(name: str, s: Mapping[str, Any]) -> str:
        low, high = s["success_rate_ci95"]
        passes = " | ".join(f"{s['pass_hat_k'].get(k, float('nan')):.3f}" for k in ks)
        credit = "n/a" if s["partial_credit"] is None else f"{s['partial_credit']:.3f}"
        sage = s["sage_failures_per_turn"]
        sage = "n/a" if sage is None else f"{sage:.3f}"
        return (
            f"| {name} | {s['scenarios']} | {s['conversations']} | {s['success_rate']:.3f} "
            f"({low:.3f}-{high:.3f}) | {passes} | {s['state']:.3f} | {s['told']:.3f} | "
            f"{s['ended']:.3f} | {credit} | {s['malformed_step_rate']:.3f} | {sage} | "
            f"{s['turns_per_conversation']:.1f} | {s['tool_calls_per_conversation']:.1f} |"
        )

    lines = [head, rule, row("overall", report["overall"])]
    if report.get("partial"):
        ran = report["overall"]["conversations"]
        lines[:0] = [
            f"**Partial run**: {report['not_simulated']} of the {report['planned']} planned "
            f"conversations did not run; the figures cover the {ran} that did (rerun with "
            "--resume to finish it).",
            "",
        ]
    for name in ("by_domain", "by_complexity", "by_behavior"):
        lines += [row(f"{name[3:]}: {key}", s) for key, s in report[name].items()]
    return "\n".join(lines) + "\n"
