"""ATOD tracker on the shared sample: accuracy of the zero-LLM default and per-turn latency.

Tracks the three published sample dialogues (`../shared/data/atod_sample/`) from speaker and
utterance only, scores them in `release` and `strict` mode, and times each turn (MiniLM
on CPU; the model load is excluded). Returns no rows when the sample is absent.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "atod_sample"


def run() -> list[dict]:
    from evaluators.atod.predictions import prediction_dialogue
    from evaluators.atod.report import score_dialogues
    from evaluators.atod.tracker import MemoryTracker
    from mads_bench.atod_data import load_dialogues, strip_gold

    path = SAMPLE / "medium_sample.json"
    if not path.is_file():
        return []
    gold = load_dialogues(path)
    start = time.perf_counter()
    tracker = MemoryTracker()
    setup = time.perf_counter() - start
    preds, latencies = [], []
    for dialogue in gold:
        state = tracker.track(strip_gold(dialogue))
        latencies.extend(state.seconds_per_turn)
        preds.append(prediction_dialogue(dialogue, state))
    rows = [
        {
            "measure": "tracker p50 latency",
            "value": 1000 * statistics.median(latencies),
            "unit": "ms/turn",
            "note": f"{len(latencies)} turns, offline default, CPU",
        },
        {
            "measure": "tracker mean latency",
            "value": 1000 * statistics.mean(latencies),
            "unit": "ms/turn",
            "note": "paper (Claude backbone): <25 s/turn",
        },
        {
            "measure": "tracker setup",
            "value": setup,
            "unit": "s",
            "note": "MiniLM load + intent catalogue embedding",
        },
    ]
    for mode in ("release", "strict"):
        report = score_dialogues(preds, gold, mode=mode)
        rows.append(
            {
                "measure": f"goal detection F1 ({mode})",
                "value": 100 * report["goal_detection_f1"],
                "unit": "%",
                "note": "3 medium sample dialogues; paper 91.92 medium",
            }
        )
        rows.append(
            {
                "measure": f"conditional status acc ({mode})",
                "value": 100 * report["conditional_status_accuracy"],
                "unit": "%",
                "note": "paper 92.31 medium",
            }
        )
    return rows
