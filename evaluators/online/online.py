"""`evaluate` wrapper of online task success and pass^k; scoring in `core.py`.

Load offline with ``evaluate.load("evaluators/online")`` (a path to this folder). It scores
finished conversations (trajectory JSON, e.g. lines of ``eval online``'s or ``simulate``'s
``trajectories.jsonl``) against the hand-written scenarios they were simulated from, so a
finished run can be scored without running it again.
"""

import evaluate

from evaluators.metric_info import metric_info
from evaluators.online.core import score_online
from mads_bench.catalog import domain_of, load_all_scenarios
from mads_bench.data_model import Scenario, Trajectory
from simulation.validator.rubric import grade_conversation

_CITATION = """\
@article{barres2025tau2,
  title  = {tau^2-Bench: Evaluating Conversational Agents in a Dual-Control Environment},
  author = {Barres, Victor and others},
  year   = {2025},
  note   = {pass^k and the database-state check}
}
"""

_DESCRIPTION = """\
Online task success puts the candidate in the assistant's seat of a simulated conversation
and checks what got done: the backend state at the end must match the scenario's gold
workflow replayed on its seed state, the user must have been told the outcome (or, for a
blocked goal, an explanation and an alternative), and the user must have ended the
conversation. pass^k is the chance that k trials of a scenario all succeed.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[str]`): Finished conversations, each a `Trajectory` as JSON.
    references (`list[str]`): The scenario id of each conversation (a hand-written one).
    scenarios (`list[str]`, *optional*): Scenario JSON objects for other ids (generated).
    resamples (`int`, *optional*): Bootstrap resamples for the 95% CIs (default 10,000).
Returns:
    `dict`: `overall` (success_rate and its CI, pass_hat_k, state, told, ended,
    partial_credit, malformed_step_rate, turns and tool calls per conversation),
    `by_domain`, `by_complexity`, `by_behavior`, and `conversations` (one outcome each).
Examples:
    >>> import evaluate
    >>> online = evaluate.load("evaluators/online")  # doctest: +SKIP
    >>> from mads_bench.catalog import load_domain
    >>> from simulation.environment import simulate
    >>> scenario = load_domain("mock").scenarios[0]
    >>> runs = [simulate(scenario, repetition=r).model_dump_json() for r in range(2)]
    >>> out = Online().compute(predictions=runs, references=[scenario.id] * 2, resamples=100)
    >>> out["overall"]["success_rate"], out["overall"]["pass_hat_k"]
    (1.0, {'1': 1.0, '2': 1.0})
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Online(evaluate.Metric):
    """Online task success (state, told, ended) and pass^k."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references, scenarios=None, resamples=10_000):
        known = {s.id: s for s in load_all_scenarios(include_mock=True)}
        for text in scenarios or []:
            scenario = Scenario.model_validate_json(text)
            known[scenario.id] = scenario
        outcomes = []
        for index, (text, scenario_id) in enumerate(zip(predictions, references, strict=True)):
            if scenario_id not in known:
                raise ValueError(f"references[{index}]: unknown scenario {scenario_id!r}")
            trajectory = Trajectory.model_validate_json(text)
            scenario = known[scenario_id]
            outcomes.append(grade_conversation(trajectory, scenario, domain=domain_of(scenario)))
        return score_online(outcomes, resamples=resamples)
