"""L-1 scoring core: each predicted assistant step against its gold step (SPEC §7.1).

Metrics (``None`` when their denominator is empty):

- ``action_recall_tool`` / ``action_recall_say``: among gold steps of that type, the share
  whose prediction has the same type; ``action_recall_macro``: mean of the defined ones.
- ``tool_name_precision`` / ``_recall`` / ``_f1``: micro over steps. A step where gold and
  prediction are tool calls with the same (exact) name is a true positive; a predicted tool
  call that is not one is a false positive; a gold tool call that is not one is a false
  negative. None when there is neither a gold nor a predicted tool call.
- ``param_exact_match``: among gold tool steps, the share whose prediction is a tool call
  with exactly the gold arguments (JSON value equality, `evaluators.step_scoring`), whatever its
  name (the name is scored by tool-name F1).
- ``required_param_completeness``: among gold tool steps with at least one required
  parameter, the mean share of required parameters the predicted call gives with the gold
  value (presence alone when gold omits one). Required parameters come from the step's
  ``required_params`` (the tool schema's ``required``) or, when None, every gold argument.
- ``answer_token_f1``: among gold ``say`` steps, mean SQuAD token F1 (0 when no say).
- ``semantic_similarity``: among gold ``say`` steps, mean clamped embedding cosine (0 when no
  say); None when no similarity model is given.
- ``unreadable_rate``: share of predictions with no readable action (missing included).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evaluators.report import Prediction, as_action, group_by, markdown_table, mean
from evaluators.step_scoring import GoldAction, arguments_equal, token_f1
from mads_bench.pre_act import Action

L1_METRICS = (
    "n_steps",
    "action_recall_tool",
    "action_recall_say",
    "action_recall_macro",
    "tool_name_precision",
    "tool_name_recall",
    "tool_name_f1",
    "param_exact_match",
    "required_param_completeness",
    "answer_token_f1",
    "semantic_similarity",
    "unreadable_rate",
)


class PairSimilarity(Protocol):
    """Anything with ``pairs(predicted, references) -> list[float]`` (`SentenceEncoder`)."""

    def pairs(self, predicted: list[str], references: list[str]) -> list[float]: ...


@dataclass(frozen=True)
class L1Step:
    """One assistant step to score: the prediction and its gold action, plus metadata."""

    prediction: Prediction
    gold: GoldAction
    required_params: Sequence[str] | None = None
    domain: str | None = None
    complexity: str | None = None


@dataclass
class StepScore:
    """One step's L-1 parts; `aggregate_l1` turns a list of them into the metrics."""

    step: L1Step
    action: Action | None
    gold_type: str
    predicted_type: str | None
    name_tp: int = 0
    name_fp: int = 0
    name_fn: int = 0
    params_exact: float | None = None
    completeness: float | None = None
    token_f1: float | None = None
    semantic: float | None = None


def _score_step(step: L1Step) -> StepScore:
    gold, action = step.gold, as_action(step.prediction)
    score = StepScore(step, action, gold.type, None if action is None else action.type)
    predicted_tool = action is not None and action.type == "tool"
    same_name = predicted_tool and gold.type == "tool" and action.name == gold.tool_name
    score.name_tp = int(same_name)
    score.name_fp = int(predicted_tool and not same_name)
    score.name_fn = int(gold.type == "tool" and not same_name)
    if gold.type == "tool":
        gold_args = gold.tool_arguments or {}
        args = action.arguments if predicted_tool else None
        score.params_exact = float(args is not None and arguments_equal(args, gold_args))
        required = list(gold_args) if step.required_params is None else list(step.required_params)
        if required:
            given = sum(
                1
                for name in required
                if args is not None
                and name in args
                and (name not in gold_args or arguments_equal(args[name], gold_args[name]))
            )
            score.completeness = given / len(required)
    else:
        said = action is not None and action.type == "say"
        score.token_f1 = token_f1(action.text, gold.say) if said else 0.0
    return score


def aggregate_l1(scores: Sequence[StepScore]) -> dict[str, Any]:
    """The L-1 metrics of a set of step scores (any subset or resample of a report's)."""
    recalls = {}
    for kind in ("tool", "say"):
        of_kind = [s for s in scores if s.gold_type == kind]
        hits = sum(s.predicted_type == kind for s in of_kind)
        recalls[kind] = hits / len(of_kind) if of_kind else None
    tp, fp, fn = (sum(getattr(s, f) for s in scores) for f in ("name_tp", "name_fp", "name_fn"))
    precision = recall = f1 = None
    if tp + fp + fn:
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "n_steps": len(scores),
        "action_recall_tool": recalls["tool"],
        "action_recall_say": recalls["say"],
        "action_recall_macro": mean(list(recalls.values())),
        "tool_name_precision": precision,
        "tool_name_recall": recall,
        "tool_name_f1": f1,
        "param_exact_match": mean([s.params_exact for s in scores]),
        "required_param_completeness": mean([s.completeness for s in scores]),
        "answer_token_f1": mean([s.token_f1 for s in scores]),
        "semantic_similarity": mean([s.semantic for s in scores]),
        "unreadable_rate": mean([float(s.predicted_type is None) for s in scores]),
    }


@dataclass
class L1Report:
    """L-1 metrics overall, by domain and by complexity (dicts keyed by `L1_METRICS`)."""

    overall: dict[str, Any]
    by_domain: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_complexity: dict[str, dict[str, Any]] = field(default_factory=dict)
    steps: list[StepScore] = field(default_factory=list, repr=False)
    """The scored steps, in input order (for resampling; not part of `to_dict`)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (metrics only)."""
        return {
            "overall": self.overall,
            "by_domain": self.by_domain,
            "by_complexity": self.by_complexity,
        }

    def to_markdown(self) -> str:
        """Markdown tables: overall, by domain, by complexity."""
        rows = {"overall": self.overall}
        rows.update({f"domain: {k}": v for k, v in self.by_domain.items()})
        rows.update({f"complexity: {k}": v for k, v in self.by_complexity.items()})
        metrics = {name: {k: v.get(name) for k, v in rows.items()} for name in L1_METRICS}
        return "## L-1 (turn level)\n\n" + markdown_table(metrics, list(rows), "metric")


def score_l1(steps: Sequence[L1Step], *, similarity: PairSimilarity | None = None) -> L1Report:
    """Score predicted assistant steps against gold (the module docstring defines each metric).

    Args:
        steps (`Sequence[L1Step]`): The steps; predictions are read leniently.
        similarity (`PairSimilarity`, *optional*): E.g. ``SentenceEncoder("mpnet")``; when
            None, ``semantic_similarity`` is None.

    Returns:
        `L1Report`: Overall metrics and breakdowns by domain and by complexity.

    Example:
        >>> tool = GoldAction.from_columns("tool", "get_order", '{"order_id": "A-1"}')
        >>> say = GoldAction.from_columns("say", say="Your order has shipped.")
        >>> report = score_l1([
        ...     L1Step('<think>t</think><action type="tool">{"name": "get_order", '
        ...            '"arguments": {"order_id": "A-1"}}</action>', tool),
        ...     L1Step('<think>t</think><action type="say">Order shipped.</action>', say),
        ...     L1Step('<think>t</think><action type="say">Which order?</action>', tool)])
        >>> report.overall["action_recall_tool"], report.overall["action_recall_macro"]
        (0.5, 0.75)
        >>> [round(report.overall[m], 4) for m in ("tool_name_f1", "answer_token_f1")]
        [0.6667, 0.6667]
    """
    scores = [_score_step(step) for step in steps]
    if similarity is not None:
        said = [s for s in scores if s.gold_type == "say" and s.predicted_type == "say"]
        for s in scores:
            if s.gold_type == "say":
                s.semantic = 0.0
        texts = [s.action.text for s in said]
        values = similarity.pairs(texts, [s.step.gold.say for s in said])
        for s, value in zip(said, values, strict=True):
            s.semantic = value
    return L1Report(
        steps=scores,
        overall=aggregate_l1(scores),
        by_domain={
            k: aggregate_l1(v) for k, v in group_by(scores, lambda s: s.step.domain).items()
        },
        by_complexity={
            k: aggregate_l1(v) for k, v in group_by(scores, lambda s: s.step.complexity).items()
        },
    )
