"""The scripted simulations of the hand-written scenarios pass, except for known, real problems.

Seven scenarios are rejected on both seeds, each for a real defect of the scripted policy
or of the scenario, not of the validator:

- sofa-new-address: the new address is in the gold workflow but the user never gives it;
- thai-lunch: party_size 3 is never stated by the user;
- burst-pipe: the issue description adds details the user never gave;
- cancel-dentist: the assistant says the cancel "found nothing" right after it succeeded;
- accept-qbr: same misreading, and the invitation is then never accepted;
- room-swap-debrief, kinbo-waitlist: after an injected refusal the gold workflow books the
  alternative, the scripted assistant gives up instead.
"""

import pytest

from mads_bench.catalog import load_all_scenarios, load_domain
from simulation.runner import simulate
from simulation.validator import NO_EMBEDDINGS, validate_trajectories

KNOWN_REJECTIONS = {
    "online_shopping-sofa-new-address-unhappy": {"faithfulness"},
    "restaurant_booking-thai-lunch-unhappy": {"faithfulness"},
    "home_services-burst-pipe-unhappy": {"faithfulness"},
    "calendar-cancel-dentist-normal": {"faithfulness"},
    "calendar-accept-qbr-unhappy": {"faithfulness", "task_success"},
    "calendar-room-swap-debrief-unhappy": {"task_success"},
    "restaurant_booking-kinbo-waitlist-unhappy": {"task_success"},
}


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


@pytest.mark.slow
def test_all_hand_written_scenarios_two_seeds(scenarios, embedder):
    # 90 scenarios x 2 seeds: exactly the known rejections, on both seeds
    runs = [simulate(s, seed=seed) for seed in (0, 1) for s in load_all_scenarios()]
    out = list(validate_trajectories(runs, scenarios, embedder=embedder))
    rejected = {(t.scenario_id, t.seed): _failed(t) for t in out if not t.verdict["passed"]}
    assert len(out) == 180 and len(rejected) == 2 * len(KNOWN_REJECTIONS)
    assert {sid: checks for (sid, _), checks in rejected.items()} == KNOWN_REJECTIONS
