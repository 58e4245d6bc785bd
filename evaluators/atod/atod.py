"""ATOD goal-lifecycle metrics as an `evaluate` module; scoring is `report.score_dialogues`."""

import json

import evaluate

from evaluators.atod.report import score_dialogues
from evaluators.metric_info import metric_info
from mads_bench.atod_data import Prediction, parse_dialogues

_DESCRIPTION = """\
ATOD-Eval (atod.md §6): goal detection precision/recall/F1 and conditional status accuracy
of a goal tracker's predicted goal lifecycles against gold ATOD annotations, at the final
state and along normalised dialogue progress, dependency F1, dGCR and NTC, and correlations
of per-dialogue metrics with dGCR. Two modes: `release` (lenient, like the ATOD release) and
`strict` (one-to-one matching, exact statuses).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[str]`): One predicted dialogue per item, as a JSON string in the ATOD
        format (the `goal_list` is scored).
    references (`list[str]`): The gold dialogue for each prediction, same format.
    mode (`str`): `release` (default) or `strict`.
    threshold (`float`): Goal-matching cosine threshold (default 0.40).
Returns:
    `dict`: `goal_detection_f1`, `conditional_status_accuracy`, `dependency_f1`, `dgcr`,
    `ntc`, `gold_dgcr`, `gold_ntc`, `progress`, `correlations_with_dgcr`, `by_complexity`.
Examples:
    >>> import evaluate  # doctest: +SKIP
    >>> atod = evaluate.load("evaluators/atod/atod.py")  # doctest: +SKIP
    >>> gold = [json.dumps(d) for d in json.load(open("medium_sample.json"))]  # doctest: +SKIP
    >>> atod.compute(predictions=gold, references=gold)["goal_detection_f1"]  # doctest: +SKIP
    1.0
"""

_CITATION = """\
@article{atod2026,
  title={ATOD: An Evaluation Framework and Benchmark for Agentic Task-Oriented Dialogue Systems},
  author={Zhang and others},
  journal={arXiv preprint arXiv:2601.11854},
  year={2026}
}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Atod(evaluate.Metric):
    """ATOD goal-lifecycle metrics."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(
            _DESCRIPTION,
            _CITATION,
            _KWARGS_DESCRIPTION,
            reference_urls=["https://arxiv.org/abs/2601.11854"],
        )

    def _compute(
        self,
        predictions: list[str],
        references: list[str],
        mode: str = "release",
        threshold: float = 0.40,
    ) -> dict:
        pred = parse_dialogues(
            [json.loads(p) for p in predictions], "predictions", model=Prediction
        )
        gold = parse_dialogues([json.loads(r) for r in references], "references")
        report = score_dialogues(pred, gold, mode=mode, threshold=threshold)
        report.pop("per_dialogue")
        return report
