"""The SAGE evaluator: compiler → S1 → S2 → (S3) → aggregator, batched over many turns.

Named configurations (sage.md): ``SageConfig.core()`` = compiler + S1 + S2 (zero LLM calls,
the recommended operating point) and ``SageConfig.llm(judge)`` = SAGE-Core + S3. The
``use_s1`` / ``use_s2`` / ``use_s3`` switches give the per-tier leave-one-out ablations; a
criterion whose stages are all disabled or abstain stays undecided (orphaned).

Aggregation, exactly as the paper: failure if any criterion fires; acceptable only if every
criterion is decided and false; otherwise undecided. The turn margin is the minimum decision
margin over its decided criteria (S1 = 1.0), used for selective evaluation.

Example:
    >>> from evaluators.sage import SageEvaluator, SageConfig, WorkflowSpec
    >>> evaluator = SageEvaluator(WorkflowSpec.from_sgd_schema("schema.json"))  # doctest: +SKIP
    >>> verdicts = evaluator.evaluate(records)  # doctest: +SKIP
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from evaluators.sage.compiler import EXTRACTION_FLOOR, compile_turn
from evaluators.sage.grounding import GroundingVerifier, OfflineGroundingVerifier
from evaluators.sage.judge import JUDGE_MARGIN, FocusedJudge
from evaluators.sage.records import CriterionResult, TurnRecord, Verdict
from evaluators.sage.repair import repair_signal
from evaluators.sage.symbolic import s1_decide
from evaluators.sage.tagger import ActTagger, load_tagger
from evaluators.sage.workflow import WorkflowSpec
from simulation.backends.judge import JudgeBackend


@dataclass
class SageConfig:
    """Which tiers run and with what.

    Args:
        name (`str`): `core`, `llm` or an ablation tag.
        use_s1 / use_s2 / use_s3 (`bool`): Tier switches.
        verifier (`GroundingVerifier`, *optional*): S2; the offline default when None.
        judge (`JudgeBackend`, *optional*): S3 backend; required when `use_s3`.
        extraction_floor (`float`): Text-only user values below this confidence are dropped.
        tagger (`ActTagger`, path, ``"bundled"`` or None): The act tagger for turns without
            acts: ``"bundled"`` (default) = the shipped weights for S2's encoder (none for an
            encoder without them); None = the lexical/embedding path alone.
    """

    name: str = "core"
    use_s1: bool = True
    use_s2: bool = True
    use_s3: bool = False
    verifier: GroundingVerifier | None = None
    judge: JudgeBackend | None = None
    extraction_floor: float = EXTRACTION_FLOOR
    tagger: ActTagger | str | None = "bundled"

    @classmethod
    def core(cls, verifier: GroundingVerifier | None = None) -> SageConfig:
        """SAGE-Core: compiler + S1 + S2."""
        return cls("core", verifier=verifier)

    @classmethod
    def llm(cls, judge: JudgeBackend, verifier: GroundingVerifier | None = None) -> SageConfig:
        """SAGE-LLM: SAGE-Core + the focused LLM judge."""
        return cls("llm", use_s3=True, verifier=verifier, judge=judge)

    def ablate(self, tier: str) -> SageConfig:
        """A copy with one tier (`S1`, `S2`, `S3`) switched off."""
        flags = {"S1": "use_s1", "S2": "use_s2", "S3": "use_s3"}
        if tier not in flags:
            raise ValueError(f"unknown tier {tier!r}; expected one of {list(flags)}")
        return SageConfig(**{**self.__dict__, "name": f"no_{tier}", flags[tier]: False})


class SageEvaluator:
    """Evaluate turn records against a workflow spec.

    Args:
        spec (`WorkflowSpec`): The workflow specification.
        config (`SageConfig`, *optional*): SAGE-Core when None.
    """

    def __init__(self, spec: WorkflowSpec, config: SageConfig | None = None) -> None:
        self.spec = spec
        self.config = config or SageConfig.core()
        if self.config.use_s3 and self.config.judge is None:
            raise ValueError("SAGE-LLM (use_s3) needs a judge backend")
        self.verifier = self.config.verifier or OfflineGroundingVerifier()
        self.judge = FocusedJudge(self.config.judge) if self.config.judge else None
        # The tagger reads the same embeddings as S2 (one cache); an NLI verifier keeps the
        # offline one as its fallback.
        offline = getattr(self.verifier, "fallback", self.verifier)
        if not isinstance(offline, OfflineGroundingVerifier):
            offline = OfflineGroundingVerifier()
        self._encode = getattr(self.verifier, "encode", offline.encode)
        self.tagger = load_tagger(self.config.tagger, offline.encoder_name)

    def warm_up(self) -> None:
        """Load the S2 encoder now (so latency figures exclude the one-off model load)."""
        encode = getattr(self.verifier, "encode", None)
        if encode is not None:
            encode(["warm up"])

    def evaluate(self, records: list[TurnRecord], batch_size: int = 64) -> list[Verdict]:
        """Verdicts for the records, in order; S2 and S3 run once per batch of turns."""
        verdicts: list[Verdict] = []
        for start in range(0, len(records), batch_size):
            verdicts.extend(self._evaluate_batch(records[start : start + batch_size]))
        return verdicts

    def tag(self, records: list[TurnRecord]) -> list[Any]:
        """The act tagger's reading of every turn lacking acts (None for the others)."""
        out: list[Any] = [None] * len(records)
        todo = [i for i, r in enumerate(records) if r.user_acts is None or r.agent_acts is None]
        if self.tagger is not None and todo:
            tagged = self.tagger.tag([records[i] for i in todo], self.spec, self._encode)
            for i, tag in zip(todo, tagged, strict=True):
                out[i] = tag
        return out

    def _evaluate_batch(self, records: list[TurnRecord]) -> list[Verdict]:
        started = time.perf_counter()
        cfg = self.config
        tags = self.tag(records)
        plans = [
            compile_turn(self.spec, r, cfg.extraction_floor, tag)
            for r, tag in zip(records, tags, strict=True)
        ]
        results: list[list[dict[str, Any]]] = []
        pending: list[tuple[int, int]] = []
        for t, (record, criteria) in enumerate(zip(records, plans, strict=True)):
            row = []
            for k, criterion in enumerate(criteria):
                state = {
                    "criterion": criterion,
                    "fires": None,
                    "stage": None,
                    "margin": 0.0,
                    "trace": [],
                }
                if cfg.use_s1:
                    fires, note = s1_decide(criterion, record)
                    state["trace"].append(f"S1: {note}")
                    if fires is not None:
                        state.update(fires=fires, stage="S1", margin=1.0)
                if state["fires"] is None:
                    pending.append((t, k))
                row.append(state)
            results.append(row)
        if cfg.use_s2 and pending:
            items = [(plans[t][k], records[t], self.spec) for t, k in pending]
            for (t, k), (fires, margin, note) in zip(
                pending, self.verifier.verify(items), strict=True
            ):
                state = results[t][k]
                state["trace"].append(f"S2: {note}")
                if fires is not None:
                    state.update(fires=fires, stage="S2", margin=margin)
            pending = [(t, k) for t, k in pending if results[t][k]["fires"] is None]
        if cfg.use_s3 and self.judge and pending:
            answers = self.judge.verify([(plans[t][k], records[t]) for t, k in pending])
            for (t, k), answer in zip(pending, answers, strict=True):
                state = results[t][k]
                state["trace"].append(f"S3: {'abstain' if answer is None else answer}")
                if answer is not None:
                    state.update(fires=answer, stage="S3", margin=JUDGE_MARGIN)
        share = (time.perf_counter() - started) / max(1, len(records))
        return [
            aggregate(record, [CriterionResult(**s) for s in row], share)
            for record, row in zip(records, results, strict=True)
        ]


def aggregate(record: TurnRecord, results: list[CriterionResult], latency: float = 0.0) -> Verdict:
    """Reduce criterion results to the turn verdict (failure / acceptable / undecided)."""
    fired = [r for r in results if r.fires]
    decided = [r for r in results if r.fires is not None]
    if fired:
        verdict = "failure"
    elif len(decided) == len(results):
        verdict = "acceptable"
    else:
        verdict = "undecided"
    margin = min((r.margin for r in decided), default=1.0) if verdict != "undecided" else 0.0
    stages: dict[str, int] = {}
    for r in decided:
        stages[r.stage] = stages.get(r.stage, 0) + 1
    stages["abstained"] = len(results) - len(decided)
    evidence = [
        {
            "criterion": r.criterion.criterion_id,
            "class": r.criterion.failure_class,
            "fires": r.fires,
            "stage": r.stage,
            "margin": round(r.margin, 4),
            "span": r.criterion.evidence,
            "trace": r.trace,
        }
        for r in results
    ]
    return Verdict(
        dialogue_id=record.dialogue_id,
        turn_id=record.turn_id,
        verdict=verdict,
        failure_classes=sorted({r.criterion.failure_class for r in fired}),
        margin=round(margin, 6),
        evidence=evidence,
        repair=[repair_signal(r, record) for r in fired],
        stages=stages,
        latency_s=latency,
    )
