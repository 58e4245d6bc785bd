"""Goal sequences and co-occurrence statistics on a hand-written SGD excerpt (exact counts)."""

from __future__ import annotations

import pytest

from simulation.atod_generation.graph import CooccurrenceGraph, render_statistics
from simulation.atod_generation.sequences import GoalKey, goal_sequence, load_sgd_corpus

RF = GoalKey("Restaurants_1", "FindRestaurants")
RR = GoalKey("Restaurants_1", "ReserveRestaurant")
WG = GoalKey("Weather_1", "GetWeather")
HS = GoalKey("Hotels_1", "SearchHotel")
HR = GoalKey("Hotels_1", "ReserveHotel")
BF = GoalKey("Buses_1", "FindBus")


def test_sequences_from_fixture(tiny_sgd):
    corpus = load_sgd_corpus(tiny_sgd)
    # five dialogues read; t_3 is single-domain, so four sequences remain
    assert corpus.n_dialogues == 5
    assert [s.dialogue_id for s in corpus.sequences] == ["t_1", "t_2", "t_4", "t_5"]
    # consecutive repeats merge; a resumed intent (SearchHotel in t_2) appears again; NONE skipped
    assert corpus.sequences[0].goals == (RF, RR, WG)
    assert corpus.sequences[1].goals == (HS, HR, RF, HS)
    assert corpus.sequences[1].distinct == (HS, HR, RF)
    assert corpus.sequences[2].goals == (BF, WG)
    # slot-value pools use every dialogue (t_3's Oakland too) and drop "dontcare", sorted
    assert corpus.slot_values[("Restaurants_1", "city")] == ["Oakland", "San Jose"]
    assert corpus.slot_values[("Restaurants_1", "cuisine")] == ["Italian"]
    # the schema excerpt: ReserveRestaurant is transactional with three required slots
    assert corpus.schemas[RR].transactional
    assert corpus.schemas[RR].required_slots == ("restaurant_name", "city", "time")


def test_graph_statistics_exact(tiny_sgd):
    graph = CooccurrenceGraph.build(load_sgd_corpus(tiny_sgd).sequences)
    stats = graph.statistics()
    # lengths 3, 4, 2, 2 -> mean 2.75, range 2-4
    assert (stats.sequences, stats.average_length) == (4, 2.75)
    assert (stats.min_length, stats.max_length) == (2, 4)
    # 6 goals over 4 domains and 6 intent names
    assert (stats.nodes, stats.domains, stats.intents) == (6, 4, 6)
    # edges: RF-RR, RF-WG, RR-WG (t_1), HS-HR, HS-RF, HR-RF (t_2), BF-WG (t_4); t_5 repeats RF-WG
    assert stats.edges == 7
    # density 2*7/(6*5) = 0.4667; average degree 14/6 = 2.3333
    assert (stats.density, stats.average_degree) == (0.4667, 2.3333)
    # degrees: RF 4, WG 3, RR 2, HS 2, HR 2, BF 1
    assert {g: graph.degree(g) for g in graph.nodes} == {RF: 4, WG: 3, RR: 2, HS: 2, HR: 2, BF: 1}
    assert (stats.max_degree, stats.min_degree, stats.components) == (4, 1, 1)
    # RF and WG co-occur in t_1 and t_5; RF occurs in three sequences
    assert graph.weight(RF, WG) == 2 and graph.weight(WG, RF) == 2
    assert graph.weight(BF, RF) == 0
    assert graph.frequency[RF] == 3


def test_render_statistics_shows_paper_column(tiny_sgd):
    stats = CooccurrenceGraph.build(load_sgd_corpus(tiny_sgd).sequences).statistics()
    table = render_statistics(stats, source="fixture")
    # our value next to Table 13's
    assert "| edges | 7 | 396 |" in table
    assert "| nodes | 6 | 52 |" in table


def test_goal_sequence_ignores_system_frames():
    system = {"speaker": "SYSTEM", "frames": [{"service": "Buses_1", "state": {}}]}
    # system frames carry no active intent: the sequence is empty
    assert goal_sequence({"turns": [system]}) == ()


def test_missing_folder_is_a_clear_error(tmp_path):
    # an empty folder names what is missing
    with pytest.raises(FileNotFoundError, match="schema.json"):
        load_sgd_corpus(tmp_path)


def test_statistics_from_shared_copy(sgd_corpus):
    stats = CooccurrenceGraph.build(sgd_corpus.sequences).statistics()
    # the partial copy (96 of 127 files) keeps all of Table 13's 52 nodes and 16 domains,
    # and Table 12's 2-8 length range; it has fewer sequences and edges than the paper
    assert (stats.nodes, stats.domains, stats.min_length, stats.max_length) == (52, 16, 2, 8)
    assert (stats.sequences, stats.edges, stats.components) == (6899, 216, 1)
