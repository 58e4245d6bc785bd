"""A text-only act tagger learned from SGD train: what S2 reads when a turn has no acts.

SGD's dialogue acts label, for free, which slots each user utterance INFORMs, which slots each
system utterance REQUESTs, and whether a system utterance CONFIRMs a request or reports it done
(NOTIFY_SUCCESS). ``ActTagger`` predicts those four things from text alone:

* features: the sentence embeddings S2 already computes (unit norm; the verifier's cache is
  shared) of u_t, of the agent turn before it and of a_t, against the
  embedding of each slot's "slot words: description"; plus a few lexical features (the slot's
  name words in the text, a categorical value of the slot said word for word, a typed value the
  extractor reads for the slot, a question mark). No state features: what the state did is what
  SAGE checks, so the tagger must not learn it.
* heads: one small MLP each (``inform`` and ``request`` per (text, slot) pair, ``agent`` with
  two outputs CONFIRM / NOTIFY_SUCCESS per agent turn), trained with binary cross-entropy.

The features are the encoder's, so the weights are too: ``tagger.<encoder>.safetensors`` next
to this file (`bundled_weights`) for each calibrated encoder (``minilm-static``, the default,
and ``minilm``), built by ``mads-bench sage train-tagger --encoder NAME`` from SGD train only
(dev is for calibration and the bench slices); the file's metadata records the encoder, the
data and the settings it was trained with.

Example:
    >>> tagger = ActTagger.load(bundled_weights("minilm-static"))  # doctest: +SKIP
    >>> tags = tagger.tag(records, spec, verifier.encode)  # doctest: +SKIP
    >>> tags[0].inform  # doctest: +SKIP
    {'city': 0.97, 'date': 0.02, ...}
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.sage.extract import extract_user_values
from evaluators.sage.normalize import normalize_text
from evaluators.sage.records import TurnRecord
from evaluators.sage.workflow import ServiceSpec, WorkflowSpec

Encode = Callable[[list[str]], dict[str, np.ndarray]]


def _is_name(encoder: str | None) -> bool:
    """Whether ``encoder`` is a model name (not None for an object, not a folder path)."""
    return bool(encoder) and re.fullmatch(r"[\w.-]+", encoder) is not None


def bundled_weights(encoder: str | None) -> Path | None:
    """The shipped tagger for the encoder named ``encoder``; None if there is none."""
    if not _is_name(encoder):
        return None  # an encoder object or a path: nothing was trained on it here
    path = Path(__file__).with_name(f"tagger.{encoder}.safetensors")
    return path if path.is_file() else None


def load_tagger(tagger: ActTagger | str | None, encoder: str | None) -> ActTagger | None:
    """The configured tagger (``"bundled"``, a path, an `ActTagger` or None), checked against
    the encoder whose embeddings it will read."""
    if tagger == "bundled":
        tagger = bundled_weights(encoder)
        if tagger is None:
            return None  # no tagger was trained on this encoder's embeddings
    if isinstance(tagger, (str, Path)):
        tagger = ActTagger.load(tagger)
    trained_on = tagger.metadata.get("encoder") if tagger is not None else None
    if trained_on and _is_name(encoder) and trained_on != encoder:
        raise ValueError(
            f"the act tagger was trained on {trained_on!r} embeddings, but S2 encodes with "
            f"{encoder!r}: pass that encoder's tagger or retrain one with "
            f"`mads-bench sage train-tagger --encoder {encoder}`"
        )
    return tagger


HEADS = ("inform", "request", "agent")
FEATURE_VERSION = "1"
NAME_FILLER = frozenset({"has", "is", "are", "allows", "offers", "number", "of", "the", "name"})


@dataclass(frozen=True)
class TurnTags:
    """What the tagger reads in one turn; probabilities in [0, 1]."""

    inform: dict[str, float] = field(default_factory=dict)
    """Slot → P(u_t INFORMs it)."""
    request: dict[str, float] = field(default_factory=dict)
    """Slot → P(a_t REQUESTs it)."""
    confirm: float = 0.0
    """P(a_t asks the user to confirm the request: CONFIRM)."""
    success: float = 0.0
    """P(a_t reports the request done: NOTIFY_SUCCESS)."""


def slot_prompt(service: ServiceSpec, slot: str) -> str:
    """The text a slot is embedded as: its name words and its schema description."""
    return f"{slot.replace('_', ' ')}: {service.slots[slot].description}"


def previous_agent(record: TurnRecord) -> str:
    """The agent utterance just before u_t ('' at the start of a dialogue)."""
    if record.history and record.history[-1].speaker in ("agent", "system", "SYSTEM"):
        return record.history[-1].text
    return ""


def name_share(slot: str, words: set[str], filler: frozenset[str] = NAME_FILLER) -> float:
    """Share of the slot's name words (fillers and short words left out) that start a word of
    ``words`` by their first four letters ("what time" → ``pickup_time``: 0.5)."""
    names = [w for w in slot.split("_") if w not in filler and len(w) > 2]
    return sum(any(x.startswith(w[:4]) for x in words) for w in names) / max(1, len(names))


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def _categorical_said(service: ServiceSpec, slot: str, norm: str) -> float:
    for value in service.slots[slot].possible_values:
        nv = normalize_text(value)
        if len(nv) >= 3 and nv not in {"true", "false", "dontcare"} and f" {nv} " in norm:
            return 1.0
    return 0.0


def _mlp(weights: dict[str, np.ndarray], head: str, x: np.ndarray) -> np.ndarray:
    hidden = np.maximum(x @ weights[f"{head}.w1"] + weights[f"{head}.b1"], 0.0)
    logits = hidden @ weights[f"{head}.w2"] + weights[f"{head}.b2"]
    return 1.0 / (1.0 + np.exp(-logits))


@dataclass
class TurnFeatures:
    """The feature rows of one batch of turns (``index`` maps rows back to turns and slots)."""

    inform: np.ndarray
    request: np.ndarray
    agent: np.ndarray
    index: list[tuple[int, str]]
    """(turn position in the batch, slot) for every inform/request row."""


def featurize(records: list[TurnRecord], spec: WorkflowSpec, encode: Encode) -> TurnFeatures:
    """Feature rows for every (turn, slot of its service) pair and every agent turn."""
    texts: list[str] = []
    for r in records:
        service = spec.service(r.service)
        texts += [r.user, r.agent, previous_agent(r)]
        texts += [slot_prompt(service, s) for s in service.slots]
    vectors = encode([t for t in texts if t])
    zero = np.zeros(next(iter(vectors.values())).shape, dtype=np.float32) if vectors else None

    def vec(text: str) -> np.ndarray:
        return vectors[text] if text else zero

    inform, request, agent, index = [], [], [], []
    for t, r in enumerate(records):
        service = spec.service(r.service)
        u, a, p = vec(r.user), vec(r.agent), vec(previous_agent(r))
        agent.append(np.concatenate([a, [float("?" in r.agent)]]))
        uw, aw, pw = _words(r.user), _words(r.agent), _words(previous_agent(r))
        norm_u = f" {normalize_text(r.user)} "
        extracted: dict[str, float] = {}
        names = 0.0
        for value in extract_user_values(r.user, service):
            if not value.slots:
                names = 1.0
            for slot in value.slots:
                extracted[slot] = max(extracted.get(slot, 0.0), value.confidence)
        for slot in service.slots:
            s = vec(slot_prompt(service, slot))
            spec_slot = service.slots[slot]
            inform.append(
                np.concatenate(
                    [
                        u * s,
                        p * s,
                        [
                            float(u @ s),
                            float(p @ s),
                            name_share(slot, uw),
                            name_share(slot, pw),
                            _categorical_said(service, slot, norm_u),
                            extracted.get(slot, 0.0),
                            names,
                            float(spec_slot.is_categorical),
                            float(spec_slot.is_flag),
                        ],
                    ]
                )
            )
            request.append(
                np.concatenate([a * s, [float(a @ s), name_share(slot, aw), float("?" in r.agent)]])
            )
            index.append((t, slot))
    width = 2 * (len(zero) if zero is not None else 0)
    return TurnFeatures(
        inform=np.asarray(inform, dtype=np.float32).reshape(-1, width + 9),
        request=np.asarray(request, dtype=np.float32).reshape(-1, width // 2 + 3),
        agent=np.asarray(agent, dtype=np.float32).reshape(-1, width // 2 + 1),
        index=index,
    )


def act_labels(records: list[TurnRecord], features: TurnFeatures) -> dict[str, np.ndarray]:
    """Targets from the records' dialogue acts, row for row with ``featurize``."""
    informed = [{a.slot for a in r.user_acts or [] if a.act == "INFORM"} for r in records]
    requested = [{a.slot for a in r.agent_acts or [] if a.act == "REQUEST"} for r in records]
    agent = [
        [
            float(any(a.act == "CONFIRM" for a in r.agent_acts or [])),
            float(any(a.act == "NOTIFY_SUCCESS" for a in r.agent_acts or [])),
        ]
        for r in records
    ]
    return {
        "inform": np.asarray([s in informed[t] for t, s in features.index], dtype=np.float32),
        "request": np.asarray([s in requested[t] for t, s in features.index], dtype=np.float32),
        "agent": np.asarray(agent, dtype=np.float32).reshape(-1, 2),
    }


class ActTagger:
    """Predict INFORM / REQUEST / CONFIRM / NOTIFY_SUCCESS from a turn's text.

    Args:
        weights (`dict[str, np.ndarray]`): The three heads' MLP weights (``<head>.w1`` …).
        metadata (`dict[str, str]`, *optional*): How the weights were trained.
    """

    def __init__(self, weights: dict[str, np.ndarray], metadata: dict[str, str] | None = None):
        missing = [f"{h}.{p}" for h in HEADS for p in ("w1", "b1", "w2", "b2")]
        missing = [k for k in missing if k not in weights]
        if missing:
            raise ValueError(f"tagger weights lack {missing}")
        self.weights = {k: np.asarray(v, dtype=np.float32) for k, v in weights.items()}
        self.metadata = dict(metadata or {})

    @classmethod
    def load(cls, path: str | Path) -> ActTagger:
        """Read weights written by `save` (``FileNotFoundError`` / ``ValueError`` name the file)."""
        from safetensors import SafetensorError
        from safetensors.numpy import load_file, safe_open

        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: no tagger weights (build them with `mads-bench sage train-tagger`)"
            )
        try:
            weights = load_file(str(path))
            with safe_open(str(path), framework="numpy") as handle:
                metadata = handle.metadata() or {}
        except (SafetensorError, OSError) as err:
            raise ValueError(f"{path}: not a safetensors file ({err})") from None
        if metadata.get("feature_version") != FEATURE_VERSION:
            raise ValueError(
                f"{path}: feature version {metadata.get('feature_version')!r}, this code "
                f"computes {FEATURE_VERSION!r}; retrain with `mads-bench sage train-tagger`"
            )
        return cls(weights, metadata)

    def save(self, path: str | Path) -> None:
        """Write the weights and metadata as safetensors (atomically)."""
        from safetensors.numpy import save_file

        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        save_file(
            self.weights, str(tmp), metadata={**self.metadata, "feature_version": FEATURE_VERSION}
        )
        tmp.replace(path)

    def predict(self, features: TurnFeatures) -> dict[str, np.ndarray]:
        """Probabilities per head, row for row with the features.

        Raises:
            `ValueError`: When the features are not as wide as the weights expect (another
                encoder than the one the tagger was trained with).
        """
        out = {}
        for head in HEADS:
            x = getattr(features, head)
            expected = self.weights[f"{head}.w1"].shape[0]
            if x.shape[1] != expected:
                raise ValueError(
                    f"act tagger head {head!r} expects {expected} features, got {x.shape[1]}: "
                    f"the embeddings come from another encoder than "
                    f"{self.metadata.get('encoder', 'the one it was trained with')}"
                )
            out[head] = (
                _mlp(self.weights, head, x) if len(x) else np.zeros((0, 1 + (head == "agent")))
            )
        return out

    def tag(self, records: list[TurnRecord], spec: WorkflowSpec, encode: Encode) -> list[TurnTags]:
        """Tags for a batch of turns (every text of the batch is encoded in one call)."""
        if not records:
            return []
        features = featurize(records, spec, encode)
        probs = self.predict(features)
        inform: list[dict[str, float]] = [{} for _ in records]
        request: list[dict[str, float]] = [{} for _ in records]
        for (t, slot), pi, pr in zip(
            features.index, probs["inform"][:, 0], probs["request"][:, 0], strict=True
        ):
            inform[t][slot] = round(float(pi), 4)
            request[t][slot] = round(float(pr), 4)
        return [
            TurnTags(inform[t], request[t], round(float(c), 4), round(float(s), 4))
            for t, (c, s) in enumerate(probs["agent"])
        ]


def train_tagger(
    records: list[TurnRecord],
    spec: WorkflowSpec,
    encode: Encode,
    *,
    encoder: str,
    hidden: int = 256,
    epochs: int = 20,
    seed: int = 0,
    metadata: dict[str, str] | None = None,
    progress: Callable[[Iterable[Any]], Iterable[Any]] = lambda x: x,
) -> ActTagger:
    """Fit the three heads on annotated records (binary cross-entropy, Adam, fixed seed).

    Args:
        records (`list[TurnRecord]`): Turns with dialogue acts (SGD train).
        spec (`WorkflowSpec`): Their schema.
        encode: Text → unit-norm embedding (e.g. `OfflineGroundingVerifier.encode`).
        encoder: The name of the encoder behind ``encode`` (recorded and checked at use).
        hidden / epochs / seed: MLP width, passes over the data, torch seed.
        progress: Wraps the epoch loop (a progress bar on the command line).
    """
    import torch

    features = featurize(records, spec, encode)
    targets = act_labels(records, features)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    weights: dict[str, np.ndarray] = {}
    nets = {}
    for head in HEADS:
        x = torch.from_numpy(getattr(features, head))
        y = torch.from_numpy(targets[head]).reshape(len(x), -1)
        net = torch.nn.Sequential(
            torch.nn.Linear(x.shape[1], hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, y.shape[1]),
        )
        nets[head] = (net, x, y, torch.optim.Adam(net.parameters(), lr=2e-3, weight_decay=1e-5))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    for _ in progress(range(epochs)):
        for net, x, y, optimizer in nets.values():
            order = torch.randperm(len(x), generator=generator)
            for start in range(0, len(x), 256):
                batch = order[start : start + 256]
                optimizer.zero_grad()
                loss_fn(net(x[batch]), y[batch]).backward()
                optimizer.step()
    for head, (net, *_rest) in nets.items():
        first, last = net[0], net[2]
        weights[f"{head}.w1"] = first.weight.detach().numpy().T.copy()
        weights[f"{head}.b1"] = first.bias.detach().numpy().copy()
        weights[f"{head}.w2"] = last.weight.detach().numpy().T.copy()
        weights[f"{head}.b2"] = last.bias.detach().numpy().copy()
    info = {
        "turns": str(len(records)),
        "pairs": str(len(features.index)),
        "hidden": str(hidden),
        "epochs": str(epochs),
        "seed": str(seed),
        "encoder": encoder,
        "positives": json.dumps({h: float(targets[h].sum()) for h in HEADS}),
    }
    return ActTagger(weights, {**info, **(metadata or {})})
