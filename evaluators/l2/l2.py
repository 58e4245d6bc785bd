"""`evaluate` wrapper of the L-2 trajectory-level success rate (MADS §3.5.2); scoring in `core.py`.

Load offline with ``evaluate.load("evaluators/l2")`` (a path to this folder).
"""

import evaluate

from evaluators.l2.core import L2Step, score_l2
from evaluators.metric_info import metric_info
from evaluators.step_scoring import GoldAction

_CITATION = """\
@article{mads2026,
  title  = {MADS: Multi-Agent Dialogue Simulation for robust task-oriented agents},
  note   = {Section 3.5.2, trajectory-level evaluation (L-2)},
  year   = {2026}
}
"""

_DESCRIPTION = """\
L-2 groups predicted assistant steps by conversation, in order, and scores each conversation
with a stop-on-first-error rule: a step is correct when its action type (tool vs say) matches
gold and, for tool calls, the tool name matches case-insensitively within a small edit
distance. Conversation score = correct / attempted; the result is the mean over
conversations, with breakdowns by domain and by complexity.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[str]`): Model outputs, one assistant step each, in conversation order.
    references (`list[dict]`): Gold steps with keys `conversation_id`, `action_type` ("tool"
        or "say") and `tool_name` ("" on say steps: `evaluate` rejects None).
    domains (`list[str]`, *optional*): Domain of each step, for the breakdown.
    complexities (`list[str]`, *optional*): Scenario complexity of each step.
    max_edit_distance (`int`, *optional*): Edits tolerated between tool names after case
        folding (default 1).
Returns:
    `dict`: `success_rate` (mean conversation score), `fully_correct_rate`,
    `n_conversations`, `n_steps`, `by_domain`, `by_complexity`, and `conversation_scores`
    (`{conversation_id: score}`).
Examples:
    >>> import evaluate
    >>> l2 = evaluate.load("evaluators/l2")  # doctest: +SKIP
    >>> tool = '<think>t</think><action type="tool">{"name": "Get_Orders", "arguments": {}}'
    >>> tool += "</action>"
    >>> say = '<think>t</think><action type="say">Done.</action>'
    >>> refs = [
    ...     {"conversation_id": "c1", "action_type": "tool", "tool_name": "get_order"},
    ...     {"conversation_id": "c1", "action_type": "say", "tool_name": ""},
    ...     {"conversation_id": "c2", "action_type": "say", "tool_name": ""},
    ...     {"conversation_id": "c2", "action_type": "say", "tool_name": ""}]
    >>> out = L2().compute(predictions=[tool, say, say, tool], references=refs)
    >>> out["conversation_scores"], out["success_rate"]
    ({'c1': 1.0, 'c2': 0.5}, 0.75)
"""

_FIELDS = ("conversation_id", "action_type", "tool_name")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class L2(evaluate.Metric):
    """MADS L-2 trajectory-level success rate."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, reference_fields=_FIELDS)

    def _compute(
        self, predictions, references, domains=None, complexities=None, max_edit_distance=1
    ):
        n = len(predictions)
        for values, name in [(domains, "domains"), (complexities, "complexities")]:
            if values is not None and len(values) != n:
                raise ValueError(f"{name} has {len(values)} entries for {n} predictions")
        domains = [None] * n if domains is None else domains
        complexities = [None] * n if complexities is None else complexities
        steps = []
        for i, (prediction, ref) in enumerate(zip(predictions, references, strict=True)):
            where = f"references[{i}]"
            if not ref["conversation_id"]:
                raise ValueError(f"{where}: conversation_id is missing")
            say = "" if ref["action_type"] == "say" else None
            gold = GoldAction.from_columns(
                ref["action_type"], ref["tool_name"], None, say, where=where
            )
            if gold is None:
                raise ValueError(f"{where}: action_type is missing")
            steps.append(
                L2Step(ref["conversation_id"], prediction, gold, domains[i], complexities[i])
            )
        report = score_l2(steps, max_edit_distance=max_edit_distance)
        return {
            **report.overall,
            "by_domain": report.by_domain,
            "by_complexity": report.by_complexity,
            "conversation_scores": {c.conversation_id: c.score for c in report.conversations},
        }
