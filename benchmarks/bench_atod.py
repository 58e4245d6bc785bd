"""ATOD tracker on the shared dev set and sample: accuracy and per-turn latency, side by side.

Tracks the published development dialogues (`../shared/data/atod_dev/`, 41) and the sample
(`../shared/data/atod_sample/`, 3) from speaker and utterance only, with two encoder pairs:
the offline default (goal memory over `minilm-static`, request intents read by MiniLM) and
all-MiniLM (last round's tracker). Each is scored in `strict` and `release` mode and timed per
turn (the turn's share of the encoder calls included; model loading excluded). These figures
are on the data the thresholds were chosen on; `mads-bench atod cv` gives the held-out ones.
Returns no rows when the data are absent.
"""

from __future__ import annotations

import statistics
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
SETS = {
    "atod_dev": DATA / "atod_dev" / "medium_dev.json",
    "sample": DATA / "atod_sample" / "medium_sample.json",
}
PAIRS = (("minilm-static", "minilm"), ("minilm", "minilm"))


def run() -> list[dict]:
    from evaluators.atod.matching import minilm_embedder
    from evaluators.atod.predictions import prediction_dialogue
    from evaluators.atod.report import score_dialogues
    from evaluators.atod.tracker import MemoryTracker
    from mads_bench.atod_data import load_dialogues, strip_gold

    rows = []
    scorer = minilm_embedder()
    for memory, intent in PAIRS:
        tracker = MemoryTracker.for_encoders(memory, intent)
        pair = f"{memory} + {intent}"
        for name, path in SETS.items():
            if not path.is_file():
                continue
            gold = load_dialogues(path)
            tracker.track(strip_gold(gold[0]))  # warm the encoders
            preds, latencies = [], []
            for dialogue in gold:
                state = tracker.track(strip_gold(dialogue))
                latencies.extend(state.seconds_per_turn)
                preds.append(prediction_dialogue(dialogue, state))
            rows.append(
                {
                    "measure": f"tracker latency ({name}, {pair})",
                    "value": 1000 * statistics.mean(latencies),
                    "unit": "ms/turn",
                    "note": f"mean over {len(latencies)} turns (p50 "
                    f"{1000 * statistics.median(latencies):.2f}); paper (Claude): <25 s/turn",
                }
            )
            for mode in ("strict", "release"):
                report = score_dialogues(preds, gold, mode=mode, embedder=scorer)
                rows.append(
                    {
                        "measure": f"goal detection F1 / status acc ({name}, {pair}, {mode})",
                        "value": 100 * report["goal_detection_f1"],
                        "unit": "%",
                        "note": f"status acc {100 * report['conditional_status_accuracy']:.2f}; "
                        f"{len(gold)} dialogues; paper 91.92 / 92.31 medium (release)",
                    }
                )
    return rows
