"""A hand-written two-goal ATOD dialogue shared by the judge-metric and baseline tests."""

from __future__ import annotations

from mads_bench.atod_data import Dialogue, parse_dialogues

TURNS = [
    ("USER", "I need a hotel in Paris."),
    ("SYSTEM", "Booking your hotel now."),
    ("USER", "Also check the weather."),
    ("SYSTEM", "It is sunny. Your hotel is confirmed."),
]


def toy_dialogue(dialogue_id: str = "toy-1", hotel_final: str = "completed") -> Dialogue:
    """Gold dialogue: hotel open@1, pending@2, `hotel_final`@4; weather open@3, completed@4."""
    hotel = [(0, "not_mentioned"), (1, "open"), (2, "pending"), (4, hotel_final)]
    weather = [(0, "not_mentioned"), (3, "open"), (4, "completed")]

    def goal(gid, domain, intent, content, core, history):
        return {
            "id": gid,
            "domain": domain,
            "intent": intent,
            "content": content,
            "core_content": core,
            "status": history[-1][1],
            "dependencies": [],
            "status_history": [{"turn": t, "status": s} for t, s in history],
            "first_mentioned_turn": history[1][0],
            "completion_turn": 4 if history[-1][1] == "completed" else None,
        }

    data = {
        "dialogue_id": dialogue_id,
        "complexity_class": "medium",
        "goal_list": [
            goal(
                "goal_1", "Hotels", "ReserveHotel", "book a hotel in Paris", "book a hotel", hotel
            ),
            goal("goal_2", "Weather", "GetWeather", "check the weather", "weather", weather),
        ],
        "turns": [
            {"turn_id": i + 1, "speaker": s, "utterance": u} for i, (s, u) in enumerate(TURNS)
        ],
    }
    return parse_dialogues([data])[0]
