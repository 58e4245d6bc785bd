"""SAGE-Core on a 300-turn SGD dev slice (seed 0, half injected): quality, latency, throughput.

Per injector (``copy`` and ``varied``, the same sampled turns) and per S2 encoder
(``minilm-static``, the default, and ``minilm``, each with its own gates and act tagger),
measured with dialogue acts and from text + state only (SPEC §7.3), the latter with the act
tagger and without it (the lexical/embedding path alone), side by side. Latency is the
wall time of evaluating one turn on its own (batch of 1, encoder already loaded), p50 over
the slice; throughput is turns/s when the slice goes through in batches of 64. Each of
the two starts from a fresh evaluator, so the S2 embedding cache (which keeps slot prompts
and recurring phrases between batches) holds nothing from the other.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

SGD_DEV = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "sgd" / "dev"
N_TURNS = 300


def run() -> list[dict]:
    from evaluators.sage import (
        GATES,
        OfflineGroundingVerifier,
        SageConfig,
        SageEvaluator,
        WorkflowSpec,
    )
    from evaluators.sage.inject import build_slice
    from evaluators.sage.inject_varied import inject_varied
    from evaluators.sage.sgd import load_dialogues
    from evaluators.sage.verdict_scoring import report

    if not (SGD_DEV / "schema.json").is_file():
        print(f"bench_sage: skipped, no SGD dev data at {SGD_DEV}")
        return []
    spec = WorkflowSpec.from_sgd_schema(SGD_DEV / "schema.json")
    dialogues = load_dialogues(SGD_DEV)
    rows = []
    for injector_name, injector in (("copy", None), ("varied", inject_varied)):
        records, labels, _ = build_slice(dialogues, spec, n=N_TURNS, seed=0, injector=injector)
        text_only = [r.without_acts() for r in records]
        modes = (
            ("acts", records, "bundled"),
            ("text-only, act tagger", text_only, "bundled"),
            ("text-only, no tagger", text_only, None),
        )
        for encoder in GATES:
            for mode, turns, tagger in modes:
                rows += _measure(
                    f"{injector_name}, {encoder}, {mode}",
                    lambda encoder=encoder, tagger=tagger: SageEvaluator(
                        spec, SageConfig(verifier=OfflineGroundingVerifier(encoder), tagger=tagger)
                    ),
                    turns,
                    labels,
                    report,
                )
    return rows


def _measure(name, make_evaluator, turns, labels, report) -> list[dict]:
    single = []
    evaluator = make_evaluator()  # a fresh embedding cache for each measurement
    evaluator.warm_up()
    for record in turns:
        start = time.perf_counter()
        evaluator.evaluate([record], batch_size=1)
        single.append(time.perf_counter() - start)
    evaluator = make_evaluator()
    evaluator.warm_up()
    start = time.perf_counter()
    verdicts = evaluator.evaluate(turns, batch_size=64)
    batched = time.perf_counter() - start
    rep = report(labels, verdicts)
    low, high = rep["f1_ci95"]
    recall = ", ".join(f"{c} {m['detection_recall']:.2f}" for c, m in rep["per_class"].items())
    return [
        {
            "measure": f"SAGE-Core F1 ({name})",
            "value": rep["f1"],
            "unit": "F1",
            "note": f"95% CI [{low:.3f}, {high:.3f}]; P {rep['precision']:.3f} R "
            f"{rep['recall']:.3f}; recall {recall}; undecided {rep['undecided_rate']:.1%}; "
            f"n={rep['n']} ({rep['n_failure']} injected)",
        },
        {
            "measure": f"SAGE-Core p50 latency ({name})",
            "value": statistics.median(single),
            "unit": "s/turn",
            "note": f"one turn per call; p95 {statistics.quantiles(single, n=20)[-1]:.3f} s",
        },
        {
            "measure": f"SAGE-Core throughput ({name})",
            "value": len(turns) / batched,
            "unit": "turns/s",
            "note": f"batches of 64 turns, S2 encoder loaded once, cache empty at the start "
            f"({1000 * batched / len(turns):.1f} ms/turn)",
        },
    ]
