"""Hand-written wording of the scripted generator: goal phrases and per-act utterance templates.

Everything a scripted dialogue says comes from here, so the labels are exact by construction:
an act (`intro`, `ack`, `complete`, ...) has one status effect and several interchangeable
surface forms, chosen by the dialogue's seeded random generator. Goal phrases name the
domain in plain words (flight, hotel, bus, ...) as a user would.

Example:
    >>> import random
    >>> from simulation.atod_generation.sequences import GoalKey
    >>> goal_phrase(GoalKey("Buses_1", "BuyBusTicket"))
    ('buy bus tickets', 'buy bus tickets for a trip')
    >>> render_slots({"leaving_date": "March 3rd"}, random.Random(0))
    'leaving date: March 3rd'
"""

from __future__ import annotations

import random
import re

from simulation.atod_generation.sequences import GoalKey

# (domain, intent) -> (what the user says, canonical core description, short reference)
PHRASES: dict[tuple[str, str], tuple[str, str, str]] = {
    ("Alarm", "GetAlarms"): ("check my alarms", "check the alarms that are set", "alarms"),
    ("Alarm", "AddAlarm"): ("set a new alarm", "set an alarm", "new alarm"),
    ("Banks", "CheckBalance"): (
        "check my bank account balance",
        "check a bank account balance",
        "balance check",
    ),
    ("Banks", "TransferMoney"): (
        "transfer money from my bank account",
        "transfer money",
        "transfer",
    ),
    ("Buses", "FindBus"): ("find a bus", "find a bus itinerary between cities", "bus search"),
    ("Buses", "BuyBusTicket"): ("buy bus tickets", "buy bus tickets for a trip", "bus tickets"),
    ("Calendar", "GetEvents"): (
        "check the events on my calendar",
        "check calendar events",
        "calendar check",
    ),
    ("Calendar", "GetAvailableTime"): (
        "check my calendar availability",
        "check free time on the calendar",
        "availability check",
    ),
    ("Calendar", "AddEvent"): (
        "add an event to my calendar",
        "add a calendar event",
        "calendar entry",
    ),
    ("Events", "FindEvents"): (
        "find an event like a concert or a game",
        "find events in a city",
        "event search",
    ),
    ("Events", "BuyEventTickets"): (
        "buy tickets for an event",
        "buy event tickets",
        "event tickets",
    ),
    ("Events", "GetEventDates"): (
        "look up the dates of an event",
        "find the dates of an event",
        "event dates",
    ),
    ("Flights", "SearchOnewayFlight"): (
        "search for a one-way flight",
        "search one-way flights",
        "flight search",
    ),
    ("Flights", "SearchRoundtripFlights"): (
        "search for round-trip flights",
        "search round-trip flights",
        "round-trip flight search",
    ),
    ("Flights", "ReserveOnewayFlight"): (
        "book a one-way flight",
        "book a one-way flight",
        "flight booking",
    ),
    ("Flights", "ReserveRoundtripFlights"): (
        "book round-trip flights",
        "book round-trip flights",
        "round-trip flight booking",
    ),
    ("Homes", "FindApartment"): (
        "find an apartment to rent",
        "find an apartment",
        "apartment search",
    ),
    ("Homes", "ScheduleVisit"): (
        "schedule a visit to an apartment",
        "schedule a property visit",
        "apartment visit",
    ),
    ("Hotels", "ReserveHotel"): ("book a hotel room", "book a hotel room", "hotel booking"),
    ("Hotels", "SearchHotel"): ("find a hotel", "find a hotel in a city", "hotel search"),
    ("Hotels", "BookHouse"): (
        "book a house to stay in",
        "book a house for a stay",
        "house booking",
    ),
    ("Hotels", "SearchHouse"): (
        "find a house to stay in",
        "find a house for a stay",
        "house search",
    ),
    ("Media", "FindMovies"): (
        "find a movie to watch online",
        "find a movie to stream",
        "movie pick",
    ),
    ("Media", "PlayMovie"): ("stream a movie", "play a movie online", "movie stream"),
    ("Media", "RentMovie"): ("rent a movie to stream", "rent a movie", "movie rental"),
    ("Movies", "FindMovies"): (
        "find a movie playing at the cinema",
        "find movies in theaters",
        "cinema search",
    ),
    ("Movies", "BuyMovieTickets"): (
        "buy movie tickets",
        "buy tickets for a movie",
        "movie tickets",
    ),
    ("Movies", "GetTimesForMovie"): (
        "get the showtimes for a movie",
        "get movie showtimes",
        "showtimes",
    ),
    ("Music", "LookupSong"): ("find some songs to listen to", "look up songs", "song search"),
    ("Music", "LookupMusic"): ("look up some music", "look up music", "music search"),
    ("Music", "PlaySong"): ("play a song", "play a song", "song"),
    ("Music", "PlayMedia"): ("play some music", "play a song", "music"),
    ("RentalCars", "GetCarsAvailable"): (
        "find a rental car",
        "find available rental cars",
        "car search",
    ),
    ("RentalCars", "ReserveCar"): ("reserve a rental car", "reserve a rental car", "car rental"),
    ("Restaurants", "FindRestaurants"): (
        "find a restaurant",
        "find a restaurant",
        "restaurant search",
    ),
    ("Restaurants", "ReserveRestaurant"): (
        "book a table at a restaurant",
        "reserve a table at a restaurant",
        "table reservation",
    ),
    ("RideSharing", "GetRide"): ("book a ride in a cab", "book a shared or private ride", "ride"),
    ("Travel", "FindAttractions"): (
        "find attractions to visit",
        "find tourist attractions",
        "attraction search",
    ),
    ("Weather", "GetWeather"): (
        "check the weather forecast",
        "get the weather forecast",
        "forecast",
    ),
}
PROVIDERS = {"1": "salon", "2": "dentist", "3": "doctor", "4": "therapist"}

USER_INTRO = [
    "Hi, I need to {phrase} ({details}).",
    "I'd like to {phrase}: {details}.",
    "Could you help me {phrase}? {details_cap}.",
    "I also need to {phrase}, {details}.",
    "While you're at it, can you {phrase}? It's {details}.",
    "Another thing: I want to {phrase}, with {details}.",
]
USER_INTRO_BARE = ["I'd like to {phrase}.", "Could you also {phrase}?", "I need to {phrase}."]
USER_PROVIDE = [
    "The {slot} is {value}.",
    "For the {short}, the {slot} should be {value}.",
    "Sure, {value} for the {slot}.",
]
USER_ABANDON = [
    "Actually, never mind the {short}; I don't need it anymore.",
    "Please cancel the {short} request, my plans changed.",
    "Let's forget about the {short}, I no longer need it.",
]
USER_CHECK = [
    "Any news on the {short}?",
    "How is the {short} coming along?",
    "Is there an update on the {short}?",
]
USER_FOLLOWUP = [
    "Can you remind me what we settled for the {short}?",
    "Just to double-check the {short}: is everything in order?",
]
USER_DECLINE = ["No need, thanks.", "Not right now, thank you.", "That's fine, no thanks."]
USER_CLOSE = ["That's everything, thanks for your help!", "Great, that covers it. Goodbye!"]
SYSTEM_ACK = [
    "Sure, I'm working on the {short} now.",
    "Let me look into the {short} for you.",
    "I'll take care of the {short}; one moment while I check.",
]
SYSTEM_ASK = [
    "For the {short}, what {slot} would you like?",
    "I can start on the {short}. Which {slot} should I use?",
]
SYSTEM_WAIT_DEP = [
    "The {short} has to wait until I've finished the {prereq}; I'll do it right after.",
    "Once the {prereq} is taken care of, I'll proceed with the {short}.",
]
SYSTEM_STILL = [
    "The {short} is still in progress; I'll let you know as soon as I hear back.",
    "I'm still waiting on the provider for the {short}.",
]
SYSTEM_COMPLETE_TX = [
    "Good news: the {short} is confirmed ({details}); the confirmation code is {code}.",
    "Done! I've completed the {short} for {details}. Reference {code}.",
]
SYSTEM_COMPLETE_INFO = [
    "Here is what I found for the {short} ({details}): {result}.",
    "The {short} is done: for {details}, {result}.",
]
SYSTEM_FAIL = [
    "Unfortunately the {short} could not be completed: {reason}.",
    "I'm sorry, I couldn't complete the {short} because {reason}.",
]
FAIL_REASONS = [
    "nothing is available for those dates",
    "the provider declined the request",
    "it is fully booked",
]
INFO_RESULTS = [
    "I found three good options and sent you the details",
    "the top result matches what you asked for",
    "there are two options that fit your criteria",
]
SYSTEM_PROACTIVE = [
    "By the way, would you like me to check the weather for your plans?",
    "Would you like a reminder the day before each of these plans?",
    "If it helps, I can also add these plans to your calendar.",
]
SYSTEM_FILLER = ["Noted. Anything else I can help with?", "Of course. What else do you need?"]
SYSTEM_BYE = ["You're welcome, have a great day!", "Happy to help. Goodbye!"]


def goal_phrase(key: GoalKey) -> tuple[str, str]:
    """What a user says for a goal, and its short canonical description.

    Args:
        key (`GoalKey`): The goal.

    Returns:
        `tuple[str, str]`: `(phrase, core_content)`; intents not in the table get a phrase
        from their CamelCase name.
    """
    return _entry(key)[:2]


def short_name(key: GoalKey) -> str:
    """A short noun phrase for later references (`bus tickets`, `hotel booking`)."""
    return _entry(key)[2]


def _entry(key: GoalKey) -> tuple[str, str, str]:
    if key.domain == "Services":
        provider = PROVIDERS.get(key.service.rsplit("_", 1)[-1], "salon")
        if key.intent == "BookAppointment":
            return (
                f"book a {provider} appointment",
                f"book an appointment with a {provider}",
                f"{provider} appointment",
            )
        return f"find a {provider}", f"find a {provider} in a city", f"{provider} search"
    if (key.domain, key.intent) in PHRASES:
        return PHRASES[(key.domain, key.intent)]
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", key.intent).lower()
    return words, words, words


def humanize(slot: str) -> str:
    """`check_in_date` -> `check in date`."""
    return slot.replace("_", " ")


def render_value(value: str) -> str:
    """SGD booleans as words; everything else unchanged."""
    return {"True": "yes", "False": "no"}.get(value, value)


def render_slots(values: dict[str, str], rng: random.Random) -> str:
    """Slot values as a phrase in one of a few seeded styles."""
    items = [(humanize(k), render_value(v)) for k, v in values.items()]
    style = rng.randrange(3)
    if style == 0:
        return ", ".join(f"{k} {v}" for k, v in items)
    if style == 1:
        return "; ".join(f"{k}: {v}" for k, v in items)
    return " and ".join(f"{k} {v}" for k, v in items)
