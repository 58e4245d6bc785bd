"""Tests of the three configs: row counts, columns and dtypes, gold columns, splits."""

from __future__ import annotations

import json

import datasets
import pytest
from datasets import Features, List, Value

from mads_bench.data_model import Trajectory
from mads_bench.datasets import DatasetBuildError, build_dataset
from mads_bench.datasets.build import step_rows
from mads_bench.pre_act import canonical_json, parse_step

STR, INT = Value("string"), Value("int64")
CHAT = List({"role": STR, "content": STR})
META = {"scenario_id": STR, "domain": STR, "complexity": STR, "turn_index": INT, "step_index": INT}


def test_hf_datasets_is_not_shadowed() -> None:
    # `import datasets` is the Hugging Face library, not a package of this repo
    assert "site-packages" in datasets.__file__


def test_row_counts_equal_conversation_and_step_counts(built, trajectories) -> None:
    split_of = built.report.split_of_scenario
    for split in ("train", "test"):
        mine = [t for t in trajectories if split_of[t.scenario_id] == split]
        steps = sum(m.role == "assistant" for t in mine for m in t.messages)
        # one trajectories row per conversation
        assert len(built.configs["trajectories"][split]) == len(mine)
        # one sft and one grpo row per assistant step (scripted steps have no parse problems)
        assert len(built.configs["sft"][split]) == steps
        assert len(built.configs["grpo"][split]) == steps
    assert built.report.excluded_steps == 0


def test_no_scenario_in_both_splits_and_home_services_only_in_test(built) -> None:
    for name in ("trajectories", "sft", "grpo"):
        train = set(built.configs[name]["train"]["scenario_id"])
        test = set(built.configs[name]["test"]["scenario_id"])
        # split by scenario
        assert not train & test
        # the held-out domain never reaches train, and all its scenarios are in test
        assert "home_services" not in built.configs[name]["train"]["domain"]
        assert "home_services" in built.configs[name]["test"]["domain"]


def test_columns_and_dtypes_exactly_as_contracted(built) -> None:
    sft = Features({"prompt": CHAT, "completion": CHAT, **META})
    gold = {f"gold_{k}": STR for k in ("action_type", "tool_name", "tool_arguments", "say")}
    grpo = Features({"prompt": CHAT, **gold, **META, "conversation_id": STR})
    for split in ("train", "test"):
        assert built.configs["sft"][split].features == sft
        assert built.configs["grpo"][split].features == grpo
        # column order too
        assert built.configs["sft"][split].column_names == list(sft)
        assert built.configs["grpo"][split].column_names == list(grpo)
    columns = built.configs["trajectories"]["train"].column_names
    # the conversation-level config carries ids, metadata, messages, injections and verdict
    for column in ("conversation_id", "scenario_id", "messages", "injections", "verdict", "seed"):
        assert column in columns


def test_gold_columns_agree_with_the_parsed_completion(built) -> None:
    for split in ("train", "test"):
        sft, grpo = built.configs["sft"][split], built.configs["grpo"][split]
        for s_row, g_row in zip(sft, grpo, strict=True):
            # same prompt and position in both configs
            assert s_row["prompt"] == g_row["prompt"]
            assert (s_row["turn_index"], s_row["step_index"]) == (
                g_row["turn_index"],
                g_row["step_index"],
            )
            action = parse_step(s_row["completion"][0]["content"]).action
            assert g_row["gold_action_type"] == action.type
            if action.type == "tool":
                assert g_row["gold_tool_name"] == action.name
                assert json.loads(g_row["gold_tool_arguments"]) == action.arguments
                assert g_row["gold_tool_arguments"] == canonical_json(action.arguments)
                assert g_row["gold_say"] == ""
            else:
                assert g_row["gold_say"] == action.text
                assert g_row["gold_tool_name"] == g_row["gold_tool_arguments"] == ""


def test_prompts_are_the_messages_before_the_step(trajectories) -> None:
    trajectory = next(t for t in trajectories if any(m.role == "tool" for m in t.messages))
    sft, grpo, excluded = step_rows(trajectory)
    steps = [i for i, m in enumerate(trajectory.messages) if m.role == "assistant"]
    for row, index in zip(sft, steps, strict=True):
        before = [{"role": m.role, "content": m.content} for m in trajectory.messages[:index]]
        # prompt = every earlier message, system first; completion = the step alone
        assert row["prompt"] == before and row["prompt"][0]["role"] == "system"
        assert row["completion"] == [
            {"role": "assistant", "content": trajectory.messages[index].content}
        ]
        # TRL adds the generation prompt after a user or tool message
        assert row["prompt"][-1]["role"] in ("user", "tool")
    # tool results are `tool` messages inside later prompts
    assert any(m["role"] == "tool" for row in sft for m in row["prompt"])
    assert excluded == 0 and len(grpo) == len(sft)


def test_flagged_and_unparsable_steps_are_excluded_with_a_count(trajectories) -> None:
    trajectory = trajectories[0]
    messages = [m.model_copy() for m in trajectory.messages]
    first, second = [i for i, m in enumerate(messages) if m.role == "assistant"][:2]
    messages[first].parse_problems = ["missing_plan: no <plan> in the first step [offset 0]"]
    messages[second].content = "<action>no think</action>"  # strict parse fails, not flagged
    broken = trajectory.model_copy(update={"messages": messages})
    total = sum(m.role == "assistant" for m in messages)
    sft, grpo, excluded = step_rows(broken)
    # both steps are left out of sft and grpo and counted
    assert excluded == 2 and len(sft) == len(grpo) == total - 2


def _with_verdict(trajectory: Trajectory, passed: bool | None, suffix: str) -> Trajectory:
    verdict = None if passed is None else {"passed": passed, "checks": {}, "judge": "rules"}
    return trajectory.model_copy(update={"verdict": verdict, "id": trajectory.id + suffix})


def test_selection_counts_every_trajectory(trajectories) -> None:
    base = trajectories[:4]
    mixed = [
        _with_verdict(base[0], True, "a"),
        _with_verdict(base[1], True, "b"),
        _with_verdict(base[2], False, "c"),
        _with_verdict(base[3], None, "d"),
        _with_verdict(base[0], True, "a"),  # duplicate id
    ]
    default = build_dataset(mixed).report.selection
    # default: passed used, failed rejected, unvalidated skipped, duplicate skipped
    assert (default.passed, default.rejected, default.unvalidated_skipped) == (2, 1, 1)
    assert (len(default.used), default.duplicates, default.read) == (2, 1, 5)
    widened = build_dataset(mixed, include_unvalidated=True).report.selection
    # --include-unvalidated adds the one without a verdict
    assert (len(widened.used), widened.unvalidated_used) == (3, 1)
    # nothing usable is an error that says why
    with pytest.raises(DatasetBuildError, match="--include-unvalidated"):
        build_dataset([_with_verdict(base[0], None, "x")])


def test_build_is_deterministic(trajectory_file, built) -> None:
    again = build_dataset([trajectory_file], include_unvalidated=True)
    for name, dataset in built.configs.items():
        for split in ("train", "test"):
            # identical rows in identical order
            assert again.configs[name][split].data.table.equals(dataset[split].data.table)
    assert again.card == built.card
    # another seed changes the split, not the totals
    other = build_dataset([trajectory_file], include_unvalidated=True, seed=1)
    assert other.report.split_of_scenario != built.report.split_of_scenario
    assert sum(other.report.rows["sft"].values()) == sum(built.report.rows["sft"].values())


def test_trajectories_config_round_trips_tool_calls(built, trajectories) -> None:
    row = built.configs["trajectories"]["train"][0]
    source = next(t for t in trajectories if t.id == row["conversation_id"])
    # messages keep order, roles and indices; tool calls/results are JSON strings or ""
    assert [m["role"] for m in row["messages"]] == [m.role for m in source.messages]
    for stored, message in zip(row["messages"], source.messages, strict=True):
        assert stored["step_index"] == message.step_index
        expected = message.tool_call.model_dump() if message.tool_call else None
        assert (json.loads(stored["tool_call"]) if stored["tool_call"] else None) == expected
    assert row["verdict"] == ""  # unvalidated build
    assert len(row["injections"]) == len(source.injections)
