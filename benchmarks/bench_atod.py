"""ATOD tracker on the shared dev split and sample: accuracy and per-turn latency, side by side.

Tracks the published development dialogues (`../shared/data/atod_dev/`, both files), part by
part of the recorded split (`evaluators/atod/dev_split.json`: 59 fit, 30 validation), and the
sample (`../shared/data/atod_sample/`, 3), from speaker and utterance only, with two encoder
pairs: the offline default (goal memory over `minilm-static`, request intents read by MiniLM)
and all-MiniLM. Each is scored in `strict` and `release` mode and timed per turn (the turn's
share of the encoder calls and the status model included; model loading excluded). The status
model was fitted on the fit part only: its rows are in-sample, the validation rows are not.
Returns no rows when the data are absent.
"""

from __future__ import annotations

import statistics
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
DEV = [DATA / "atod_dev" / "medium_dev.json", DATA / "atod_dev" / "medium_dev_2.json"]
SAMPLE = DATA / "atod_sample" / "medium_sample.json"
PAIRS = (("minilm-static", "minilm"), ("minilm", "minilm"))


def _sets() -> dict[str, list]:
    from evaluators.atod.dev_split import select_part
    from mads_bench.atod_data import load_dialogues

    sets = {}
    if all(path.is_file() for path in DEV):
        dev = [d for path in DEV for d in load_dialogues(path)]
        sets = {f"atod_dev {part}": select_part(dev, part) for part in ("fit", "validation")}
    if SAMPLE.is_file():
        sets["sample"] = load_dialogues(SAMPLE)
    return sets


def run() -> list[dict]:
    from evaluators.atod.matching import minilm_embedder
    from evaluators.atod.predictions import prediction_dialogue
    from evaluators.atod.report import score_dialogues
    from evaluators.atod.tracker import MemoryTracker
    from mads_bench.atod_data import strip_gold

    rows = []
    sets = _sets()
    scorer = minilm_embedder()
    for memory, intent in PAIRS:
        tracker = MemoryTracker.for_encoders(memory, intent)
        pair = f"{memory} + {intent}"
        for name, gold in sets.items():
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
                    f"{1000 * statistics.median(latencies):.2f}); zero LLM calls; paper "
                    "(Claude): <25 s/turn",
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
