"""SAGE turn verdicts as an `evaluate` module; the scoring core is `SageEvaluator` + `report`."""

import json

import evaluate

from evaluators.metric_info import metric_info
from evaluators.sage.cascade import SageConfig, SageEvaluator
from evaluators.sage.grounding import DEFAULT_ENCODER, OfflineGroundingVerifier
from evaluators.sage.records import TurnLabel, TurnRecord
from evaluators.sage.verdict_scoring import report
from evaluators.sage.workflow import WorkflowSpec, mads_domain
from mads_bench.catalog import load_domain

_DESCRIPTION = """\
SAGE (sage.md): compiles each turn record (history, user turn, agent reply, state before and
after, optional dialogue acts) and a workflow spec into atomic IUV / WNF / PC / UV criteria,
decides them with symbolic rules (S1) and an offline grounding verifier (S2, normalised
values + fuzzy matching + all-MiniLM-L6-v2, calibrated abstention), aggregates them into
failure / acceptable / undecided, and scores the verdicts against gold turn labels
(full coverage: undecided counts as acceptable).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[str]`): One turn record per item, as a JSON string (SPEC §4.4).
    references (`list[str]`): The gold label of each turn: `acceptable`, `failure`, or
        `failure:<CLASS>` with CLASS one of IUV, WNF, PC, UV (enables per-class figures).
    schema (`str`): Path of an SGD `schema.json`, or `mads:<domain>` for MADS tool specs.
    text_only (`bool`): Ignore dialogue acts (the honest, text + state condition).
    resamples (`int`): Bootstrap resamples for the F1 CI (default 10,000, seed 0).
    encoder: Sentence encoder of S2 (default `minilm-static`; `minilm` is also calibrated).
    tagger (`bool`): Read acts from text with the act tagger bundled for the encoder on turns
        without acts (default True; an encoder without a bundled tagger runs without one).
Returns:
    `dict`: `precision`, `recall`, `f1`, `f1_ci95`, `per_class`, `undecided_rate`,
    `stage_share`, `selective_f1`, `latency_p50_s`, `latency_p95_s`, `n`, `n_failure`.
Examples:
    >>> import evaluate  # doctest: +SKIP
    >>> sage = evaluate.load("evaluators/sage")  # doctest: +SKIP
    >>> out = sage.compute(predictions=turns, references=labels, schema="s.json")  # doctest: +SKIP
    >>> out["f1"]  # doctest: +SKIP
    0.99
"""

_CITATION = """\
@article{sage2026,
  title={SAGE: State-Grounded, Abstention-Aware Evaluation of Task-Oriented Dialogue Agents},
  author={Khoury, Rayan and Lin, Shih-Yao and Mishra, P.},
  journal={arXiv preprint arXiv:2609.00434},
  year={2026}
}
"""


def _label(record: TurnRecord, reference: str, index: int) -> TurnLabel:
    label, _, failure_class = reference.partition(":")
    if label not in ("acceptable", "failure"):
        raise ValueError(f"references[{index}]: {reference!r} is not acceptable/failure[:CLASS]")
    return TurnLabel(
        dialogue_id=record.dialogue_id,
        turn_id=record.turn_id,
        label=label,
        failure_class=failure_class or None,
    )


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Sage(evaluate.Metric):
    """SAGE-Core turn evaluation scored against gold labels."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(
            _DESCRIPTION,
            _CITATION,
            _KWARGS_DESCRIPTION,
            reference_urls=["https://arxiv.org/abs/2609.00434"],
        )

    def _compute(
        self,
        predictions: list[str],
        references: list[str],
        schema: str = "",
        text_only: bool = False,
        resamples: int = 10_000,
        encoder: object = DEFAULT_ENCODER,
        tagger: bool = True,
    ) -> dict:
        if not schema:
            raise ValueError("schema is required: an SGD schema.json path or mads:<domain>")
        records = [TurnRecord.model_validate(json.loads(p)) for p in predictions]
        if text_only:
            records = [r.without_acts() for r in records]
        labels = [
            _label(r, ref, i) for i, (r, ref) in enumerate(zip(records, references, strict=True))
        ]
        config = SageConfig(verifier=OfflineGroundingVerifier(encoder=encoder))
        if not tagger:
            config.tagger = None
        # the evaluate module is an entry point: it resolves `mads:<domain>` and hands the pack down
        name = mads_domain(schema)
        spec = WorkflowSpec.from_source(load_domain(name) if name is not None else schema)
        verdicts = SageEvaluator(spec, config).evaluate(records)
        return report(labels, verdicts, resamples=resamples)
