"""The one split of the ATOD development dialogues into a fit part and a validation part.

Everything the tracker learns (cues, thresholds, the status model's weights) is fitted on the
`fit` part; the `validation` part is only tracked and scored, to report. The split is by whole
dialogue, drawn once from a seeded shuffle of the dialogues' `dialogue_index` values (which
are unique across `../shared/data/atod_dev/`'s two files) and recorded in `dev_split.json`
beside this module, so it never moves when files are added or read in another order.

Example:
    >>> split = make_split(list(range(10)), seed=0, validation_fraction=0.3)
    >>> len(split["fit"]), len(split["validation"])
    (7, 3)
    >>> sorted(split["fit"] + split["validation"]) == list(range(10))
    True
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from mads_bench.atod_data import Dialogue
from mads_bench.errors import UsageError

SPLIT_FILE = Path(__file__).with_name("dev_split.json")
Part = Literal["fit", "validation"]
PARTS: tuple[str, ...] = Part.__args__


def make_split(indices: Sequence[int], seed: int, validation_fraction: float) -> dict:
    """Deal the dialogue indices into `fit` and `validation` by a seeded shuffle.

    Args:
        indices (`Sequence[int]`): The dialogues' `dialogue_index` values (unique).
        seed (`int`): Seed of the shuffle.
        validation_fraction (`float`): Share of dialogues held out, in (0, 1).

    Returns:
        `dict`: `seed`, `validation_fraction`, `fit` and `validation` (sorted indices).
    """
    if len(set(indices)) != len(indices):
        raise UsageError("dialogue_index values repeat; the split needs unique ones")
    if not 0 < validation_fraction < 1:
        raise UsageError(f"validation fraction must be in (0, 1), got {validation_fraction}")
    order = sorted(indices)
    random.Random(seed).shuffle(order)
    held = round(len(order) * validation_fraction)
    return {
        "seed": seed,
        "validation_fraction": validation_fraction,
        "fit": sorted(order[held:]),
        "validation": sorted(order[:held]),
    }


def load_split(path: Path = SPLIT_FILE) -> dict[str, list[int]]:
    """The recorded split: part name -> dialogue indices."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {part: list(data[part]) for part in PARTS}


def select_part(dialogues: list[Dialogue], part: Part, path: Path = SPLIT_FILE) -> list[Dialogue]:
    """The dialogues of one part of the recorded split, in input order.

    Raises:
        `UsageError`: For an unknown part, a dialogue without `dialogue_index`, or input that
            holds none of the part's dialogues.
    """
    if part not in PARTS:
        raise UsageError(f"unknown part {part!r}; known: {', '.join(PARTS)}")
    wanted = set(load_split(path)[part])
    unindexed = [d.dialogue_id for d in dialogues if d.dialogue_index is None]
    if unindexed:
        raise UsageError(f"dialogue {unindexed[0]} has no dialogue_index; the split needs one")
    chosen = [d for d in dialogues if d.dialogue_index in wanted]
    if not chosen:
        raise UsageError(f"none of the {len(dialogues)} dialogues is in the {part} part")
    return chosen
