"""S2: grounding verifiers with a confidence gate (sage.md, S2).

Two verifiers share one batched interface, ``verify(items) -> [(fires, margin, note)]``:

* ``OfflineGroundingVerifier`` (default; no NLI weights exist offline). Every criterion gets a
  score in [0, 1] from value normalisation (numbers, times, dates, case, "dontcare", booleans
  against the slot's words), fuzzy matching and all-MiniLM-L6-v2 cosine similarity; a
  per-class threshold ``theta`` and abstention half-width ``delta`` (``Gate``) turn it into
  fires / not / abstain. ``theta`` and ``delta`` were calibrated on SGD dev only (see
  ``calibration.py`` and ``DEFAULT_GATES``).
* ``NLIGroundingVerifier``: any HF NLI cross-encoder by name or path; margin
  m = p(entail) − p(contradict) with the label order read from ``config.id2label``; abstain
  when |m| < 0.20 (paper). It decides UV and text-only PC; IUV and WNF go to the default.

The encoder is loaded once (``mads_bench.models.load_sentence_encoder`` caches it) and every
string of a batch is encoded in one call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from evaluators.sage.grounding_scores import ScoreRequests, gate_key, score_criterion
from evaluators.sage.records import Criterion, TurnRecord
from evaluators.sage.workflow import WorkflowSpec
from mads_bench.embedding import SentenceEncoder

Item = tuple[Criterion, TurnRecord, WorkflowSpec]
Decision = tuple[bool | None, float, str]


@dataclass(frozen=True)
class Gate:
    """Decision rule on a score: fires when ``score < theta`` (``low_fires``) or above it.

    Abstains when ``|score - theta| < delta``; the margin is that distance scaled to [0, 1].
    A score exactly at ``theta`` does not fire and is decided: calibration puts ``theta`` on
    an observed score (often a lexical rule's fixed value, such as a flag said as it is
    stored) and counts that score as not firing (`calibration.fit_gate`).
    """

    theta: float
    delta: float
    low_fires: bool = True

    def decide(self, score: float) -> tuple[bool | None, float]:
        distance = score - self.theta
        margin = min(1.0, abs(distance) / max(self.theta, 1.0 - self.theta, 1e-6))
        if distance == 0:
            return False, margin
        if abs(distance) < self.delta:
            return None, margin
        return (distance < 0) == self.low_fires, margin


DEFAULT_ENCODER = "minilm-static"

# Calibrated on SGD dev only, per encoder: a 300-turn slice (seed 1) of the calibration
# partition (one dialogue in five by a stable hash, disjoint from every bench slice), acts and
# text-only criteria pooled, with that encoder's bundled act tagger. Reproduce with
# `mads-bench sage calibrate --encoder NAME --seed 1 --n 300`.
GATES: dict[str, dict[str, Gate]] = {
    "minilm-static": {
        "UV": Gate(theta=0.9, delta=0.02, low_fires=True),
        "IUV": Gate(theta=0.118, delta=0.02, low_fires=True),
        "WNF": Gate(theta=0.051, delta=0.05, low_fires=False),
        "PC": Gate(theta=0.407, delta=0.05, low_fires=False),
        "IUV-tag": Gate(theta=0.612, delta=0.05, low_fires=False),
        "WNF-tag": Gate(theta=0.546, delta=0.05, low_fires=False),
        "PC-tag": Gate(theta=0.306, delta=0.02, low_fires=False),
    },
    "minilm": {
        "UV": Gate(theta=0.867, delta=0.02, low_fires=True),
        "IUV": Gate(theta=0.229, delta=0.02, low_fires=True),
        "WNF": Gate(theta=-0.112, delta=0.02, low_fires=False),
        "PC": Gate(theta=0.407, delta=0.05, low_fires=False),
        "IUV-tag": Gate(theta=0.601, delta=0.1, low_fires=False),
        "WNF-tag": Gate(theta=0.505, delta=0.02, low_fires=False),
        "PC-tag": Gate(theta=0.409, delta=0.02, low_fires=False),
    },
}
DEFAULT_GATES = GATES[DEFAULT_ENCODER]


class GroundingVerifier(Protocol):
    """What the cascade needs from S2."""

    def verify(self, items: list[Item]) -> list[Decision]: ...


class OfflineGroundingVerifier:
    """Normalised-value + fuzzy + embedding grounding with calibrated gates.

    Args:
        encoder (`str` or model): Sentence encoder name for `load_sentence_encoder`, or an
            object with `encode(list[str], ...)`; loaded on first use, once.
        gates (`dict[str, Gate]`, *optional*): Per-class gates; when None, the ones
            calibrated for ``encoder`` (`GATES`), or the default encoder's for any other.
    """

    CACHE_SIZE = 50_000
    """Embeddings kept between batches (slot prompts, confirmation paraphrases and recurring
    phrases are encoded once per process); the cache is emptied when it fills up."""

    def __init__(
        self, encoder: Any = DEFAULT_ENCODER, gates: dict[str, Gate] | None = None
    ) -> None:
        # the one sentence-encoder wrapper; batch 32 measured half the time per turn of 128
        self.sentences = SentenceEncoder(encoder, batch_size=32, cache_size=self.CACHE_SIZE)
        self.encoder_name: str | None = encoder if isinstance(encoder, str) else None
        """The encoder's name or path as given (None for an encoder object)."""
        if gates is None:
            gates = GATES.get(self.encoder_name or "", DEFAULT_GATES)
        self.gates = dict(gates)

    def encode(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Unit-norm embeddings of the distinct texts; the ones not cached in one call (in
        sorted order, so a batch is the same whatever order the texts came in)."""
        unique = sorted(set(texts))
        return dict(zip(unique, self.sentences.encode(unique), strict=True)) if unique else {}

    def scores(self, items: list[Item]) -> list[tuple[float, str]]:
        """Raw scores (before the gate) with a note on the best evidence, batched."""
        requests = ScoreRequests()
        plans = [score_criterion(c, r, s, requests) for c, r, s in items]
        vectors = self.encode(requests.texts)
        return [plan(vectors) for plan in plans]

    def verify(self, items: list[Item]) -> list[Decision]:
        out = []
        for (criterion, _, _), (score, note) in zip(items, self.scores(items), strict=True):
            if score != score:  # NaN: the criterion cannot be scored here (e.g. optional slot)
                out.append((None, 0.0, note))
                continue
            fires, margin = self.gates[gate_key(criterion)].decide(score)
            out.append((fires, margin, f"{note}; score {score:.3f}"))
        return out


class NLIGroundingVerifier:
    """NLI cross-encoder for UV and text-only PC; the offline verifier for the rest.

    Args:
        model (`str`): HF cross-encoder name or local path (through `resolve_model`).
        tau (`float`): Abstention threshold on m = p(entail) − p(contradict).
        fallback (`OfflineGroundingVerifier`, *optional*): For IUV and WNF criteria.
    """

    def __init__(self, model: str, tau: float = 0.20, fallback: Any = None) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from mads_bench.models import resolve_model

        path = resolve_model(model)
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            path, local_files_only=True
        ).eval()
        labels = {i: str(v).lower() for i, v in self.model.config.id2label.items()}
        try:
            self.entail = next(i for i, v in labels.items() if v.startswith("entail"))
            self.contradict = next(i for i, v in labels.items() if v.startswith("contradict"))
        except StopIteration:
            raise ValueError(
                f"{model}: config.id2label {labels} names no entailment/contradiction label"
            ) from None
        self.tau = tau
        self.fallback = fallback or OfflineGroundingVerifier()

    def margins(self, pairs: list[tuple[str, str]]) -> list[float]:
        """m = p(entail) − p(contradict) for (premise, hypothesis) pairs, batched."""
        import torch

        if not pairs:
            return []
        out: list[float] = []
        for start in range(0, len(pairs), 32):
            chunk = pairs[start : start + 32]
            batch = self.tokenizer(
                [p for p, _ in chunk],
                [h for _, h in chunk],
                truncation=True,
                max_length=256,
                padding=True,
                return_tensors="pt",
            )
            with torch.no_grad():
                probs = self.model(**batch).logits.softmax(-1)
            out.extend((probs[:, self.entail] - probs[:, self.contradict]).tolist())
        return out

    def verify(self, items: list[Item]) -> list[Decision]:
        results: list[Decision | None] = [None] * len(items)
        nli, rest = [], []
        for i, (criterion, _, _) in enumerate(items):
            (nli if criterion.failure_class in ("UV", "PC") else rest).append(i)
        pairs = [_nli_pair(*items[i][:2]) for i in nli]
        for i, m in zip(nli, self.margins(pairs), strict=True):
            supported = items[i][0].failure_class == "UV"
            if abs(m) < self.tau:
                results[i] = (None, abs(m), f"NLI margin {m:+.3f} inside ±{self.tau}")
            else:
                fires = (m < 0) if supported else (m > 0)
                results[i] = (fires, min(1.0, abs(m)), f"NLI margin {m:+.3f}")
        for i, decision in zip(rest, self.fallback.verify([items[i] for i in rest]), strict=True):
            results[i] = decision
        return [r for r in results if r is not None]


def _nli_pair(criterion: Criterion, record: TurnRecord) -> tuple[str, str]:
    if criterion.failure_class == "UV":
        window = [h.text for h in record.history[-4:]] + [record.user]
        what = criterion.args.get("description") or criterion.args["slot"]
        return " ".join(window), f"The {what.rstrip('.').lower()} is {criterion.args['value']}."
    return record.agent, "The booking has been completed or is being confirmed."
