"""How varied simulated language is: the figures behind ``mads-bench stats``.

For a set of trajectories, per text kind (the user's messages, the assistant's ``say`` texts,
its ``<think>`` texts): distinct-1/2/3 (unique n-grams / all n-grams, over a seeded sample of
at most ``sample`` utterances, because distinct-n falls as a corpus grows: compare equal
sample sizes), the exact-duplicate rate (share of the sampled utterances that occur more
than once in the sample), mean length in tokens, plus the number of scenarios whose
repetitions are byte-identical conversations and, for validated files, the validator's
acceptance by complexity. `sgd_reference` computes the same figures on Schema-Guided Dialogue
turns (user and system), the human-written yardstick.

Tokens: lower-cased words (``\\w+``, punctuation dropped). On 1,500 SGD dev user turns this
gives distinct-2 0.369, distinct-3 0.647, exact-dup 0.096, 8.5 tokens: the definitions of the
realism issue's table (0.380 / 0.642 / 0.093 / 8.1 there, with another sample).

Example:
    >>> round(distinct_n(["a b a b", "a b c"], 2), 3)  # bigrams: ab ba ab | ab bc
    0.6
    >>> duplicate_rate(["hi", "hi", "bye"])
    0.6666666666666666
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mads_bench.data_model import Trajectory
from mads_bench.pre_act import parse_step

__all__ = [
    "TEXT_KINDS",
    "distinct_n",
    "duplicate_rate",
    "identical_repetitions",
    "realism_stats",
    "sgd_reference",
    "text_figures",
    "texts_by_kind",
]

TEXT_KINDS = ("user", "say", "think")
_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return _TOKEN.findall(text.lower())


def distinct_n(texts: Sequence[str], n: int) -> float:
    """Unique n-grams / all n-grams over the texts (n-grams do not cross texts)."""
    grams: list[tuple[str, ...]] = []
    for text in texts:
        words = tokens(text)
        grams.extend(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return len(set(grams)) / len(grams) if grams else 0.0


def duplicate_rate(texts: Sequence[str], corpus: Sequence[str] | None = None) -> float:
    """Share of ``texts`` that occur more than once in ``corpus`` (default: the texts)."""
    if not texts:
        return 0.0
    counts = Counter(corpus if corpus is not None else texts)
    return sum(counts[t] > 1 for t in texts) / len(texts)


def text_figures(texts: Sequence[str], *, sample: int = 1500, seed: int = 0) -> dict[str, Any]:
    """distinct-1/2/3, exact-dup rate and mean tokens of a seeded sample of the texts."""
    chosen = list(texts)
    if len(chosen) > sample:
        chosen = random.Random(seed).sample(chosen, sample)
    return {
        "utterances": len(texts),
        "sampled": len(chosen),
        "distinct_1": distinct_n(chosen, 1),
        "distinct_2": distinct_n(chosen, 2),
        "distinct_3": distinct_n(chosen, 3),
        "exact_dup": duplicate_rate(chosen),
        "mean_tokens": sum(len(tokens(t)) for t in chosen) / len(chosen) if chosen else 0.0,
    }


def texts_by_kind(trajectories: Iterable[Trajectory]) -> dict[str, list[str]]:
    """The user messages (without ``[DONE]``), ``say`` texts and ``<think>`` texts."""
    out: dict[str, list[str]] = {kind: [] for kind in TEXT_KINDS}
    for trajectory in trajectories:
        for message in trajectory.messages:
            if message.role == "user":
                text = message.content.replace("[DONE]", "").strip()
                if text:
                    out["user"].append(text)
            elif message.role == "assistant":
                step = parse_step(message.content, strict=False)
                if step.think:
                    out["think"].append(step.think.strip())
                if step.action is not None and step.action.type == "say" and step.action.text:
                    out["say"].append(step.action.text.strip())
    return out


def identical_repetitions(trajectories: Iterable[Trajectory]) -> tuple[int, int]:
    """(scenarios whose repetitions are all the same conversation, scenarios with 2+)."""
    by_scenario: dict[str, list[tuple]] = defaultdict(list)
    for trajectory in trajectories:
        by_scenario[trajectory.scenario_id].append(
            tuple((m.role, m.content) for m in trajectory.messages)
        )
    repeated = [runs for runs in by_scenario.values() if len(runs) > 1]
    return sum(len(set(runs)) == 1 for runs in repeated), len(repeated)


def realism_stats(
    trajectories: Sequence[Trajectory], *, sample: int = 1500, seed: int = 0
) -> dict[str, Any]:
    """All figures for a set of trajectories (see the module docstring)."""
    kinds = texts_by_kind(trajectories)
    identical, repeated = identical_repetitions(trajectories)
    acceptance: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for trajectory in trajectories:
        if trajectory.verdict is not None:
            row = acceptance[trajectory.complexity]
            row[0] += bool(trajectory.verdict.get("passed"))
            row[1] += 1
    return {
        "conversations": len(trajectories),
        "texts": {
            kind: text_figures(texts, sample=sample, seed=seed) for kind, texts in kinds.items()
        },  # fmt: skip
        "identical_repetitions": {"scenarios": identical, "of_repeated": repeated},
        "acceptance": {
            complexity: {"accepted": a, "validated": n, "rate": a / n}
            for complexity, (a, n) in sorted(acceptance.items())
        },
    }


def sgd_reference(folder: Path | str, *, sample: int = 1500, seed: int = 0) -> dict[str, Any]:
    """The same text figures for Schema-Guided Dialogue user and system turns of ``folder``."""
    from evaluators.sage.sgd import load_dialogues

    texts: dict[str, list[str]] = {"sgd_user": [], "sgd_system": []}
    for dialogue in load_dialogues(Path(folder)):
        for turn in dialogue["turns"]:
            key = "sgd_user" if turn["speaker"] == "USER" else "sgd_system"
            texts[key].append(turn["utterance"])
    return {kind: text_figures(t, sample=sample, seed=seed) for kind, t in texts.items()}
