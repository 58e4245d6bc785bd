"""Tests of the generated dataset card: valid Hub metadata and the real counts."""

from __future__ import annotations

from collections import Counter

import yaml
from huggingface_hub import DatasetCard

from mads_bench.datasets.card import size_category


def _front_matter(card: str) -> dict:
    _, meta, _ = card.split("---\n", 2)
    return yaml.safe_load(meta)


def test_yaml_metadata_is_valid_and_lists_the_hub_layout(built) -> None:
    meta = _front_matter(built.card)
    # huggingface_hub parses the same metadata; scripted agents speak with phrases mined
    # from SGD (CC BY-SA 4.0), so the dataset shares alike and says why
    assert DatasetCard(built.card).data.license == "cc-by-sa-4.0"
    assert "## Licence" in built.card and "Schema-Guided Dialogue" in built.card
    assert meta["task_categories"] == ["text-generation"] and meta["language"] == ["en"]
    # the bucket follows the largest config (sft and grpo have one row per step)
    assert meta["size_categories"] == [size_category(sum(built.report.rows["sft"].values()))]
    # one configs entry per config, data files in push_to_hub's <config>/<split>-* layout
    assert [c["config_name"] for c in meta["configs"]] == ["trajectories", "sft", "grpo"]
    assert meta["configs"][1]["data_files"] == [
        {"split": "train", "path": "sft/train-*"},
        {"split": "test", "path": "sft/test-*"},
    ]


def test_size_categories() -> None:
    # Hub buckets: boundaries belong to the upper bucket
    assert [size_category(n) for n in (0, 999, 1000, 54_321, 2_000_000)] == [
        "n<1K",
        "n<1K",
        "1K<n<10K",
        "10K<n<100K",
        "1M<n<10M",
    ]


def test_card_states_the_real_counts(built, trajectories) -> None:
    card = built.card
    rows = built.report.rows
    for name in ("trajectories", "sft", "grpo"):
        # the configs table row: | `name` | unit | train | test |
        assert f"| {rows[name]['train']} | {rows[name]['test']} |" in card
    total = len(trajectories)
    unhappy = sum(t.complexity != "normal" for t in trajectories)
    # the summary sentence with the unhappy share, e.g. "66 of 90 conversations (73.3%)"
    assert f"{unhappy} of {total} conversations ({100 * unhappy / total:.1f}%)" in card
    # per-domain table: home_services has 0 train and all its conversations in test
    n_home = sum(t.domain == "home_services" for t in trajectories)
    assert f"| home_services | 0 | 0 | {n_home} | {n_home} |" in card
    # behaviors table: total injections of each kind
    kinds = Counter(i.kind for t in trajectories for i in t.injections)
    for kind, count in kinds.items():
        assert f"| {kind} |" in card and f"| {count} |" in card
    # generation facts: the scripted backends, the run seed and the input selection
    assert '`{"assistant":"scripted","tool":"backend","user":"scripted"}` | ' + str(total) in card
    assert f"Run seeds (conversations): 0 ({total})" in card
    assert f"{total} trajectories read from 1 file(s)" in card
