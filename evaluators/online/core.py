"""Online task success: score finished conversations of a candidate assistant, and pass^k.

Each conversation is graded once by the rubric
(:func:`simulation.validator.rubric.grade_conversation`, where its three parts — state, told,
ended — are defined); it succeeds when all three hold. This module aggregates the graded
outcomes: success and each part, partial credit, malformed steps, SAGE failures, and 95% CIs
over scenarios, overall and by domain, complexity and behavior.

pass^k (tau2-bench): per scenario ``C(successes, k) / C(trials, k)``, averaged over scenarios.

Example:
    >>> pass_hat_k(successes=2, trials=4, k=2)
    0.16666666666666666
    >>> outcomes = [ConversationOutcome("s1", 0, "mock", "normal", [], *parts) for parts in
    ...             [(True, True, True), (True, True, False), (False, True, True)]]
    >>> report = score_online(outcomes, resamples=200)
    >>> report["overall"]["success_rate"], report["overall"]["pass_hat_k"]
    (0.3333333333333333, {'1': 0.3333333333333333, '2': 0.0, '3': 0.0})
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from evaluators.bootstrap import bootstrap_interval, paired_bootstrap
from simulation.validator.rubric import ConversationOutcome

__all__ = [
    "compare_reports",
    "pass_hat_k",
    "render_markdown",
    "score_online",
]


def pass_hat_k(successes: int, trials: int, k: int) -> float:
    """tau2-bench's pass^k of one scenario: the chance that k trials drawn without
    replacement all succeed, ``C(successes, k) / C(trials, k)``."""
    if not 1 <= k <= trials:
        raise ValueError(f"pass^k needs 1 <= k <= trials, got k={k}, trials={trials}")
    return math.comb(successes, k) / math.comb(trials, k)


def _summary(outcomes: Sequence[ConversationOutcome], resamples: int, seed: int) -> dict[str, Any]:
    by_scenario: dict[str, list[ConversationOutcome]] = defaultdict(list)
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
    outcomes: Iterable[ConversationOutcome], *, resamples: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    """Success, its parts and pass^k overall and by domain, complexity and behavior kind.

    Args:
        outcomes (`Iterable[ConversationOutcome]`): one per conversation (trials of a scenario share
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
    groups: dict[str, Mapping[str, list[ConversationOutcome]]] = {
        "by_domain": _group(outcomes, lambda o: [o.domain]),
        "by_complexity": _group(outcomes, lambda o: [o.complexity]),
        "by_behavior": _group(outcomes, lambda o: o.behaviors or ["none"]),
    }
    report: dict[str, Any] = {"overall": _summary(outcomes, resamples, seed)}
    for name, group in groups.items():
        report[name] = {key: _summary(part, resamples, seed) for key, part in sorted(group.items())}
    report["conversations"] = [asdict(o) | {"success": o.success} for o in outcomes]
    return report


def _group(outcomes: list[ConversationOutcome], keys) -> dict[str, list[ConversationOutcome]]:
    grouped: dict[str, list[ConversationOutcome]] = defaultdict(list)
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
