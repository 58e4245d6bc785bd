"""`evaluate` wrapper of the L-1 turn-level metrics (MADS §3.5.1); the scoring is in `core.py`.

Load offline with ``evaluate.load("evaluators/l1")`` (a path to this folder).
"""

import evaluate

from evaluators.l1.core import L1Step, score_l1
from evaluators.metric_info import metric_info
from evaluators.step_scoring import GoldAction
from mads_bench.embedding import SentenceEncoder

_CITATION = """\
@article{mads2026,
  title  = {MADS: Multi-Agent Dialogue Simulation for robust task-oriented agents},
  note   = {Section 3.5.1, turn-level evaluation (L-1)},
  year   = {2026}
}
"""

_DESCRIPTION = """\
L-1 scores each predicted assistant step (a Pre-Act or ReAct model output, read leniently)
against the gold step: action-type recall per class (tool, say) and macro, tool-name
precision/recall/F1, parameter exact match, required-parameter completeness, and on say steps
final-answer token F1 and sentence-embedding similarity (all-mpnet-base-v2 by default).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[str]`): Model outputs, one assistant step each.
    references (`list[dict]`): Gold steps with keys `action_type` ("tool" or "say"),
        `tool_name`, `tool_arguments` (JSON object string) and `say`; all strings (use ""
        where a field does not apply: `evaluate` rejects None).
    domains (`list[str]`, *optional*): Domain of each step, for the breakdown.
    complexities (`list[str]`, *optional*): Scenario complexity of each step.
    required_params (`list[list[str] | None]`, *optional*): The tool schema's required
        parameters per step; None (or a None entry) uses every gold argument.
    similarity_model (`str`, *optional*): Sentence encoder for the semantic similarity
        (default "mpnet"); None skips that metric.
Returns:
    `dict`: every metric of `evaluators.l1.core.L1_METRICS` (None when undefined) and
    `by_domain`, `by_complexity` (the same metrics per group).
Examples:
    >>> import evaluate
    >>> l1 = evaluate.load("evaluators/l1")  # doctest: +SKIP
    >>> tool = {"action_type": "tool", "tool_name": "get_order",
    ...         "tool_arguments": '{"order_id": "A-1"}', "say": ""}
    >>> say = {"action_type": "say", "tool_name": "", "tool_arguments": "",
    ...        "say": "Your order has shipped."}
    >>> predictions = [
    ...     '<think>t</think><action type="tool">{"name": "get_order", "arguments": {}}</action>',
    ...     '<think>t</think><action type="say">Your order has shipped.</action>']
    >>> out = L1().compute(predictions=predictions, references=[tool, say],
    ...                    similarity_model=None)
    >>> out["action_recall_macro"], out["tool_name_f1"], out["param_exact_match"]
    (1.0, 1.0, 0.0)
"""

_FIELDS = ("action_type", "tool_name", "tool_arguments", "say")


def _per_step(values, name, n):
    if values is None:
        return [None] * n
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} entries for {n} predictions")
    return list(values)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class L1(evaluate.Metric):
    """MADS L-1 turn-level metrics."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, reference_fields=_FIELDS)

    def _compute(
        self,
        predictions,
        references,
        domains=None,
        complexities=None,
        required_params=None,
        similarity_model="mpnet",
    ):
        n = len(predictions)
        domains, complexities, required_params = (
            _per_step(values, name, n)
            for values, name in [
                (domains, "domains"),
                (complexities, "complexities"),
                (required_params, "required_params"),
            ]
        )
        steps = []
        for i, (prediction, ref) in enumerate(zip(predictions, references, strict=True)):
            gold = GoldAction.from_columns(
                ref["action_type"],
                ref["tool_name"],
                ref["tool_arguments"],
                ref["say"],
                where=f"references[{i}]",
            )
            if gold is None:
                raise ValueError(f"references[{i}]: action_type is missing")
            steps.append(L1Step(prediction, gold, required_params[i], domains[i], complexities[i]))
        similarity = None if similarity_model is None else SentenceEncoder(similarity_model)
        report = score_l1(steps, similarity=similarity)
        return {
            **report.overall,
            "by_domain": report.by_domain,
            "by_complexity": report.by_complexity,
        }
