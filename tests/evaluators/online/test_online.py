"""Online evaluation: the scripted oracle succeeds, broken assistants fail, pass^k by hand."""

from __future__ import annotations

import json

import pytest

from evaluators.online import compare_reports, pass_hat_k, score_online
from evaluators.online.run import OnlineRunError, evaluate_online
from mads_bench.catalog import load_all_scenarios, load_domain
from mads_bench.cli import main
from mads_bench.embedding import SentenceEncoder
from mads_bench.generator import generate_for_domains
from mads_bench.pre_act import Action, PreActStep, render_step
from simulation.backends import FakeBackend
from simulation.parallel import SimulationSettings
from simulation.runner import RunLimits
from simulation.validator.rubric import ConversationOutcome
from tests.cli_helpers import error_line, run

MOCK = {s.id: s for s in load_domain("mock").scenarios}


@pytest.fixture(scope="module")
def embedder(minilm_path) -> SentenceEncoder:
    return SentenceEncoder()


def _run(scenarios, tmp_path, replies=None, trials=1, max_turns=6, embedder=None) -> dict:
    settings = SimulationSettings(assistant="fake:candidate", limits=RunLimits(max_turns=max_turns))
    backends = {"fake:candidate": FakeBackend("fake:candidate", replies=replies)}
    if replies is None:
        settings, backends = SimulationSettings(), {}
    return evaluate_online(
        scenarios, tmp_path, settings=settings, trials=trials, backends=backends,
        progress=False, resamples=200, embedder=embedder,
    )  # fmt: skip


def _step(action: Action) -> str:
    return render_step(PreActStep(think="working on it", plan="1. act", action=action))


def _tool_results(conversation) -> int:
    return sum(m["role"] == "tool" for m in conversation)


def _gold_follower(scenario, change=None):
    """Replies that make the scenario's gold calls in order (one argument changed by
    ``change(name, arguments)``), then say done."""

    def reply(conversation) -> str:
        done = _tool_results(conversation)
        if done < len(scenario.gold_workflow):
            gold = scenario.gold_workflow[done]
            arguments = dict(gold.arguments)
            if change is not None:
                arguments = change(gold.name, arguments)
            return _step(Action.tool(gold.name, arguments))
        return _step(Action.say("All done: your request is complete. [DONE]"))

    return reply


def test_the_scripted_oracle_succeeds_on_every_hand_written_scenario(tmp_path, embedder):
    report = _run(load_all_scenarios(), tmp_path, trials=2, embedder=embedder)
    overall = report["overall"]
    assert overall["scenarios"] == 90 and overall["conversations"] == 180
    failed = [c["scenario_id"] for c in report["conversations"] if not c["success"]]
    assert failed == [] and overall["pass_hat_k"] == {"1": 1.0, "2": 1.0}
    assert overall["partial_credit"] == 1.0 and overall["malformed_step_rate"] == 0.0


def test_the_scripted_oracle_succeeds_on_generated_scenarios(tmp_path, embedder):
    packs = [load_domain(name) for name in ("banking", "calendar", "online_shopping", "travel")]
    scenarios = generate_for_domains(packs, 24, seed=3)
    report = _run(scenarios, tmp_path, embedder=embedder)
    failed = [(c["scenario_id"], c["reasons"]) for c in report["conversations"] if not c["success"]]
    assert failed == []


def test_an_assistant_that_only_says_done_fails_every_write(tmp_path, embedder):
    say_done = lambda conversation: _step(Action.say("All done! [DONE]"))  # noqa: E731
    scenarios = [MOCK["mock-cancel-normal"], MOCK["mock-buy-mug-unhappy"]]
    report = _run(scenarios, tmp_path, replies=say_done, embedder=embedder)
    # nothing was written: the state check fails on both, and no gold write was done
    assert report["overall"]["success_rate"] == 0.0 and report["overall"]["state"] == 0.0
    assert report["overall"]["partial_credit"] == 0.0


def test_gold_writes_with_one_argument_changed_fail_the_state_check(tmp_path, embedder):
    scenario = MOCK["mock-buy-mug-unhappy"]

    def more_mugs(name, arguments):
        return arguments | {"quantity": 3} if name == "place_order" else arguments

    report = _run([scenario], tmp_path, replies=_gold_follower(scenario, more_mugs),
                  embedder=embedder)  # fmt: skip
    (conversation,) = report["conversations"]
    assert not conversation["state"] and not conversation["success"]
    assert conversation["partial_credit"] == 0.0
    # the same follower with the gold arguments passes the state check
    exact = _run([scenario], tmp_path / "exact", replies=_gold_follower(scenario),
                 embedder=embedder)  # fmt: skip
    assert exact["conversations"][0]["state"] and exact["conversations"][0]["partial_credit"] == 1.0


def test_a_write_on_an_impossible_scenario_fails(tmp_path, embedder):
    scenario = MOCK["mock-kettle-impossible"]

    def buys_anyway(conversation) -> str:
        if _tool_results(conversation) == 0:
            return _step(Action.tool("place_order", {"item_id": "I1", "quantity": 1}))
        return _step(Action.say("Done, I ordered a mug instead. [DONE]"))

    report = _run([scenario], tmp_path, replies=buys_anyway, embedder=embedder)
    (conversation,) = report["conversations"]
    assert not conversation["state"] and not conversation["success"]


def test_an_assistant_that_loops_never_ends_properly(tmp_path, embedder):
    again = lambda conversation: _step(Action.say("Could you tell me more?"))  # noqa: E731
    report = _run([MOCK["mock-cancel-normal"]], tmp_path, replies=again, embedder=embedder)
    (conversation,) = report["conversations"]
    assert not conversation["ended"] and not conversation["success"]


def test_garbage_replies_are_counted_as_malformed_steps(tmp_path, embedder):
    garbage = lambda conversation: "\ud800 not a pre-act step"  # noqa: E731
    report = _run([MOCK["mock-cancel-normal"]], tmp_path, replies=garbage, embedder=embedder)
    assert report["overall"]["malformed_step_rate"] == 1.0
    assert report["overall"]["success_rate"] == 0.0


def test_pass_hat_k_by_hand():
    # scenario a: 3 of 4 trials succeed, b: 1 of 4, c: 4 of 4
    table = {"a": [1, 1, 1, 0], "b": [0, 1, 0, 0], "c": [1, 1, 1, 1]}
    outcomes = [
        ConversationOutcome(sid, trial, "mock", "normal", [], bool(ok), True, True)
        for sid, row in table.items()
        for trial, ok in enumerate(row)
    ]
    passes = score_online(outcomes, resamples=100)["overall"]["pass_hat_k"]
    # k=1: (3/4 + 1/4 + 1)/3; k=2: (C(3,2)/C(4,2) + 0 + 1)/3 = (1/2 + 1)/3; k=4: (0 + 0 + 1)/3
    assert passes["1"] == pytest.approx(2 / 3)
    assert passes["2"] == pytest.approx(0.5)
    assert passes["3"] == pytest.approx((1 / 4 + 1) / 3)
    assert passes["4"] == pytest.approx(1 / 3)
    assert pass_hat_k(0, 4, 1) == 0.0
    with pytest.raises(ValueError):
        pass_hat_k(1, 2, 3)


def test_compare_gives_the_paired_difference():
    def report(rows):
        return {"conversations": [{"scenario_id": s, "success": ok} for s, ok in rows]}

    a = report([("x", True), ("y", True), ("z", False)])
    b = report([("x", False), ("y", True), ("w", True)])
    result = compare_reports(a, b, resamples=200)
    # shared: x (+1) and y (0)
    assert result["scenarios"] == 2 and result["delta"] == 0.5
    assert result["ci95"][0] <= 0.5 <= result["ci95"][1]


def test_the_cli_scores_and_resumes(tmp_path, capsys, minilm_path):
    out = tmp_path / "online"
    argv = ["eval", "online", "--assistant", "scripted", "--domain", "mock", "-k", "2"]
    argv += ["--out", str(out), "--no-progress", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overall"]["success_rate"] == 1.0 and report["overall"]["conversations"] == 6
    before = (out / "trajectories.jsonl").read_bytes()
    # a rerun with --resume simulates nothing again and scores the same
    assert main([*argv, "--resume"]) == 0
    assert json.loads(capsys.readouterr().out)["overall"] == report["overall"]
    assert (out / "trajectories.jsonl").read_bytes() == before
    assert main(["eval", "online", "--compare", str(out / "report.json"),
                 str(out / "report.json")]) == 0  # fmt: skip
    assert "A - B = +0.000" in capsys.readouterr().out


def test_the_cli_refuses_bad_input(tmp_path, capsys):
    assert main(["eval", "online", "--assistant", "scripted", "--out", str(tmp_path / "o"),
                 "--scenarios", str(tmp_path / "none.yaml")]) == 2  # fmt: skip
    assert "none.yaml" in capsys.readouterr().err
    assert main(["eval", "online", "--assistant", "openai:no-url", "--out", str(tmp_path)]) == 2
    assert "--assistant openai:no-url" in capsys.readouterr().err
    assert main(["eval", "online", "--domain", "mock"]) == 2
    assert "needs --assistant" in capsys.readouterr().err


def test_sage_failures_per_turn_are_counted_when_asked(tmp_path, embedder):
    scenario = MOCK["mock-buy-mug-unhappy"]
    clean = _run([scenario], tmp_path, embedder=embedder)
    assert clean["overall"]["sage_failures_per_turn"] is None  # not asked
    report = evaluate_online([scenario], tmp_path / "sage", progress=False, resamples=100,
                             embedder=embedder, sage=True)  # fmt: skip
    # the scripted assistant grounds every argument: no SAGE failure
    assert report["overall"]["sage_failures_per_turn"] == 0.0


@pytest.mark.parametrize(
    ("last_say", "told"),
    [
        ("It comes to 174 dollars: 139 base plus a 35 trip fee, for about 1 hour.", True),
        ("It comes to 174 dollars: 139 base plus a 35 trip fee.", False),  # no duration
        ("Estimated for 2026.", False),
        ("Sorry, the system is down until 10 pm.", False),
    ],
)
def test_a_result_number_is_told_as_a_whole_number(tmp_path, embedder, last_say, told):
    # the estimate's figures the request asks for (total, base, trip fee, duration) are told
    # when the say has them as whole numbers ("174" for 174.0); its 0.0 discount is not
    # found inside "2026" or "10"
    scenario = {s.id: s for s in load_all_scenarios()}["home_services-estimate-drain-normal"]
    follow = _gold_follower(scenario)

    def reply(conversation) -> str:
        if _tool_results(conversation) < len(scenario.gold_workflow):
            return follow(conversation)
        return _step(Action.say(f"{last_say} [DONE]"))

    report = _run([scenario], tmp_path, replies=reply, embedder=embedder)
    conversation = report["conversations"][0]
    assert conversation["told"] is told, conversation["reasons"]


def test_an_outage_is_not_scored_as_the_assistants_failure(tmp_path, embedder):
    def reply(conversation) -> str:
        if any("kettle" in str(m["content"]).lower() for m in conversation[1:]):
            raise ConnectionError("the server stopped answering")
        return _step(Action.say("All done: your request is complete. [DONE]"))

    scenarios = list(MOCK.values())
    report = _run(scenarios, tmp_path / "some", replies=reply, embedder=embedder)
    # the conversation that never ran is counted, not scored as a 0
    assert report["partial"] and (report["planned"], report["not_simulated"]) == (3, 1)
    assert report["overall"]["conversations"] == 2
    assert "kettle" not in {row["scenario_id"].split("-")[1] for row in report["conversations"]}
    assert (tmp_path / "some" / "report.md").read_text().startswith("**Partial run**: 1 of the 3")

    def down(conversation) -> str:
        raise ConnectionError("the server stopped answering")

    with pytest.raises(OnlineRunError, match="none of the 3 planned conversations ran"):
        _run(scenarios, tmp_path / "none", replies=down, embedder=embedder)
    assert not (tmp_path / "none" / "report.json").exists()


def test_the_cli_exits_non_zero_on_a_run_that_stopped(tmp_path, capsys, minilm_path):
    import socket

    with socket.socket() as probe:  # a port with nothing listening: every request fails
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = f"openai:m@http://127.0.0.1:{port}/v1?max_retries=0&timeout=2"
    argv = ["eval", "online", "--assistant", spec, "--domain", "mock", "--out", tmp_path / "o"]
    status, out, err = run([*argv, "--max-failures", "2", "--no-progress"], capsys)
    # before: "stopped after 3 failed conversations", then a report at success 0.000, rc 0
    assert status == 2 and "none of the 3 planned conversations ran" in err.splitlines()[-1]
    assert "success" not in out and not (tmp_path / "o" / "report.json").exists()


def test_compare_names_the_file_that_is_not_a_finished_report(tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"conversations": [{"scenario_id": "a", "success": True}]}))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"conversations": [{"scenario_id": "b", "success": True}]}))
    text = tmp_path / "notes.txt"
    text.write_text("not json")
    metrics = tmp_path / "metrics.json"
    metrics.write_text('{"f1": 0.5}')
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"conversations": [{"scenario_id": "a", "success": False}],
                                   "partial": True, "planned": 4, "not_simulated": 3}))  # fmt: skip
    for path, expected in (
        (text, f"--compare {text}: not a JSON file"),
        (metrics, f"--compare {metrics}: not an eval online report"),
        (partial, f"--compare {partial}: a partial run (3 of 4 conversations did not run)"),
        (other, "share no scenario"),
    ):
        status, _, err = run(["eval", "online", "--compare", good, path], capsys)
        assert status == 2 and expected in error_line(err), err


def test_the_cli_refuses_an_empty_scenario_file(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    argv = ["eval", "online", "--assistant", "scripted", "--out", tmp_path / "o"]
    status, _, err = run([*argv, "--scenarios", empty], capsys)
    assert status == 2 and str(empty) in error_line(err)
    assert not (tmp_path / "o").exists()
