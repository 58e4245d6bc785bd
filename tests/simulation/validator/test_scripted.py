"""The validator on scripted simulations: mock scenarios, planted fabrication.

That every hand-written scenario passes on two seeds is checked (slow) in
`tests/simulation/test_scripted_quality.py`.
"""

from mads_bench.catalog import load_domain
from simulation.environment import simulate
from simulation.validator import NO_EMBEDDINGS, validate_trajectories


def _failed(trajectory):
    return {name for name, check in trajectory.verdict["checks"].items() if not check["passed"]}


def test_banking_scripted_all_accepted(scenarios, embedder):
    # every banking scenario (15: normal, unhappy, impossible) passes all four checks
    runs = [simulate(s, seed=0) for s in load_domain("banking").scenarios]
    out = list(validate_trajectories(runs, scenarios, embedder=embedder))
    assert {t.scenario_id: _failed(t) for t in out if _failed(t)} == {}
    assert len(out) == 15


def test_mock_fabricated_argument_is_caught(scenarios):
    # mock-cancel's gold calls get_item(I1) although the user only named order O1
    runs = [simulate(s, seed=0) for s in load_domain("mock").scenarios]
    out = {
        t.scenario_id: t.verdict
        for t in validate_trajectories(runs, scenarios, embedder=NO_EMBEDDINGS)
    }
    assert out["mock-buy-mug-unhappy"]["passed"] and out["mock-kettle-impossible"]["passed"]
    assert out["mock-cancel-normal"]["checks"]["faithfulness"]["reasons"] == [
        "turn 0 step 0: ungrounded_argument: get_item.item_id='I1' does not occur in the user "
        "messages or earlier tool results"
    ]
