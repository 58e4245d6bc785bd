"""Generated dialogues: format, exact labels, Table 14 criteria, determinism, verifier, dataset."""

from __future__ import annotations

import copy
import json
import random

from mads_bench.atod_data import load_dialogues
from mads_bench.atod_lifecycle import dgcr, ntc
from simulation.atod_generation import GenerationConfig, generate, verify_record
from simulation.atod_generation.dataset import save_result
from simulation.atod_generation.dialogue import STATUS_EFFECT, plan_dialogue


def test_every_dialogue_loads_and_verifies(generated, tmp_path):
    # the scripted default needs no retries and rejects nothing
    assert len(generated.records) == 24 and generated.rejected == []
    path = tmp_path / "d.json"
    path.write_text(json.dumps(generated.records))
    dialogues = load_dialogues(path)
    # the ATOD loader reads all 24, ids unique, statuses lowercase
    assert len(dialogues) == 24
    assert all(verify_record(r).passed for r in generated.records)


def test_dgcr_ntc_match_labels_by_construction(generated, tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in generated.records))
    goals = [g for d in load_dialogues(path) for g in d.goal_list]
    raw = [g for r in generated.records for g in r["goal_list"]]
    completed = sum(g["status"] == "completed" for g in raw)
    failed = sum(g["status"] == "failed" for g in raw)
    # dGCR from the metric equals completed / (completed + failed) counted from the labels
    assert dgcr(goals) == completed / (completed + failed)
    # NTC equals the mean of (terminal turn - first mention) read off the status histories
    spans = [
        next(e["turn"] for e in g["status_history"] if e["status"] == g["status"])
        - g["first_mentioned_turn"]
        for g in raw
        if g["status"] in ("completed", "failed")
    ]
    assert ntc(goals) == sum(spans) / len(spans)


def test_labels_follow_the_plan(generated):
    for record in generated.records:
        for turn in record["turns"]:
            # every status change happens on a turn of the speaker who can make it
            for change in turn["goal_status_changes"]:
                user_made = change["new_status"] in ("open", "abandoned")
                assert (turn["speaker"] == "USER") == user_made
        # a dependent completes only after all its prerequisites completed
        done = {g["id"]: g["completion_turn"] for g in record["goal_list"]}
        for goal in record["goal_list"]:
            if goal["completion_turn"] is not None:
                assert all(
                    done[d] is not None and done[d] < done[goal["id"]] for d in goal["dependencies"]
                )


def test_table14_criteria(generated):
    for record in generated.records:
        n_goals, n_turns = len(record["goal_list"]), len(record["turns"])
        deps = sum(len(g["dependencies"]) for g in record["goal_list"])
        statuses = {g["status"] for g in record["goal_list"]}
        meta = record["metadata"]
        if record["complexity_class"] == "medium":
            # 2-8 goals (we draw 2-6), 8-35 turns, at most 2 dependencies, no proactivity/failure
            assert 2 <= n_goals <= 6 and 8 <= n_turns <= 35 and deps <= 2
            assert not meta["proactivity"] and "failed" not in statuses
        else:
            # 7+ goals, 30+ turns, 2+ dependencies, proactive turns and a failed goal
            assert n_goals >= 7 and n_turns >= 30 and deps >= 2
            assert meta["proactivity"] and "failed" in statuses
        # every dialogue has asynchronous pending goals and interleaving
        assert meta["async_execution"] and meta["interleaving"]


def test_mix_and_determinism(generated, sgd_dir, sgd_corpus):
    # 35 % of 24 = 8.4 -> 8 complex (largest remainder), 16 medium
    labels = [r["complexity_class"] for r in generated.records]
    assert (labels.count("medium"), labels.count("complex")) == (16, 8)
    again = generate(GenerationConfig(sgd_dir, num_dialogues=24, seed=3), corpus=sgd_corpus)
    # same seed -> byte-identical records
    assert json.dumps(again.records) == json.dumps(generated.records)


def test_verifier_catches_corrupted_labels(generated):
    record = copy.deepcopy(generated.records[0])
    record["goal_list"][0]["status_history"][-1]["status"] = "failed"
    record["goal_list"][0]["status"] = "failed"
    problems = verify_record(record).problems
    # the history no longer matches the turns' recorded changes
    assert any("status_history disagrees" in p for p in problems)
    record = copy.deepcopy(generated.records[0])
    record["turns"][0]["speaker"] = "SYSTEM"
    # speakers must alternate starting with the user
    assert any("alternate" in p for p in verify_record(record).problems)


def test_plan_effects_are_one_per_act(sgd_corpus):
    from simulation.atod_generation.annotate import annotate_walk
    from simulation.atod_generation.graph import CooccurrenceGraph
    from simulation.atod_generation.walks import sample_walks

    corpus, graph = sgd_corpus, CooccurrenceGraph.build(sgd_corpus.sequences)
    walk = sample_walks(graph, 1, seed=9)[0]
    trajectory = annotate_walk(walk, corpus, random.Random(0), 0)
    plan = plan_dialogue(trajectory, random.Random(0))
    intros = [a.goal for t in plan for a in t.acts if a.kind == "intro"]
    # every goal is introduced exactly once, in trajectory order
    assert intros == [g.id for g in trajectory.goals]
    # each goal gets at most one act per status (no double transitions)
    for goal in trajectory.goals:
        kinds = [
            a.kind for t in plan for a in t.acts if a.goal == goal.id and a.kind in STATUS_EFFECT
        ]
        assert len(kinds) == len(set(STATUS_EFFECT[k] for k in kinds))


def test_dataset_and_card(generated, tmp_path):
    from datasets import load_from_disk

    paths = save_result(generated, tmp_path / "out")
    rows = load_from_disk(str(paths["dataset"]))
    # one row per dialogue; the JSON columns round-trip to the records
    assert len(rows) == 24
    assert json.loads(rows[0]["goal_list"]) == generated.records[0]["goal_list"]
    assert rows[0]["num_turns"] == len(generated.records[0]["turns"])
    card = paths["card"].read_text()
    # the card has YAML front matter with the licence and the statistics table
    assert card.startswith("---\nlicense: cc-by-sa-4.0")
    assert "| edges | 216 | 396 |" in card
    assert len(load_dialogues(paths["dialogues"])) == 24
