"""Optional SAGE stage of the validator: UV (fabricated tool arguments) and PC (completion
claimed without the write call), decided by SAGE-Core over the trajectory's turn records.

Not part of the default chain (``validate_trajectory`` runs the four MADS checks); call it
alongside, e.g. ``verdict["checks"]["sage"] = sage_check(trajectory, scenario, domain=pack)``.
The trajectory is compiled by `evaluators.sage.mads_turns.compile_trajectory` (one record per
tool call and per say) against the tool specs of the loaded domain the caller hands down, then
evaluated by SAGE-Core (S1 rules + S2 offline grounding, MiniLM loaded once per process).

Reasons name the turn and step like the other checks:
``turn 0 step 1: sage_pc: agent confirms while O(s) is false (missing ['order_id'])``.
``decided_by`` is ``rules`` when S1 decided every failure (``embedding`` when S2 did);
for a pass, ``embedding`` when S2 took part. Undecided turns do not fail the stage.

Example:
    >>> from mads_bench.catalog import load_domain
    >>> from simulation.environment import simulate
    >>> mock = load_domain("mock")
    >>> scenario = mock.scenarios[1]
    >>> trajectory = simulate(scenario, domain=mock)  # doctest: +SKIP
    >>> sage_check(trajectory, scenario, domain=mock)["passed"]  # doctest: +SKIP
    True
"""

from __future__ import annotations

from typing import Any

from mads_bench.catalog import Domain
from mads_bench.data_model import Scenario, Trajectory
from simulation.validator.common import CheckResult

_BY_STAGE = {"S1": "rules", "S2": "embedding", "S3": "judge"}


def sage_check(
    trajectory: Trajectory,
    scenario: Scenario | None = None,
    *,
    domain: Domain,
    verifier: Any = None,
) -> dict[str, object]:
    """Run SAGE-Core on one trajectory.

    Args:
        trajectory (`Trajectory`): The conversation.
        scenario (`Scenario`, *optional*): For the write tool a completion claim needs.
        domain (`Domain`): The conversation's loaded domain pack (its tool specs).
        verifier (`GroundingVerifier`, *optional*): S2; the offline MiniLM default when None.

    Returns:
        `dict`: ``{"passed": bool, "reasons": [str], "decided_by": "rules"|"embedding"|...}``.
    """
    from evaluators.sage.mads_turns import compile_trajectory, evaluator_for

    result = CheckResult()
    records = compile_trajectory(trajectory, scenario, domain=domain)
    if not records:
        return result.to_dict()
    verdicts = evaluator_for(domain, verifier).evaluate(records)
    for record, verdict in zip(records, verdicts, strict=True):
        turn, step = record.turn_id.split(".")
        for item in verdict.evidence:
            stage = _BY_STAGE.get(item["stage"] or "")
            if item["fires"]:
                note = item["trace"][-1].split(": ", 1)[-1] if item["trace"] else ""
                reason = f"turn {turn} step {step}: sage_{item['class'].lower()}: {note}"
                result.fail(f"{reason} ({item['criterion']} of {record.intent})", by=stage)
            elif stage and stage != "rules":
                result.consulted(stage)
    return result.to_dict()
