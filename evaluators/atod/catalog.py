"""The intent catalogue (SGD services) and the domain / action cue words used by ATOD.

ATOD goals are SGD domain-intent pairs. `sgd_intents.json` (next to this file) lists the 41
domain/intent pairs of the SGD train+dev schemas with their descriptions and slots (derived
from SGD, CC BY-SA 4.0); `load_intent_catalog(schema_paths)` rebuilds the same list from any
SGD-style `schema.json` files. The ATOD release's own `schema.json` is a JSON Schema of the
file format and holds no intents, so the catalogue comes from SGD.

The cue words are generic English words per SGD domain and per action; they are shared by
the offline tracker (domain recognition) and the lenient `release` goal matcher.

Example:
    >>> catalog = load_intent_catalog()
    >>> ("Hotels", "BookHouse") in {(e.domain, e.intent) for e in catalog}
    True
    >>> sorted(domain_cues("I need a flight and a hotel"))
    ['Flights', 'Hotels']
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

CATALOG_FILE = Path(__file__).with_name("sgd_intents.json")

DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "Alarm": ("alarm", "alarms", "wake"),
    "Banks": ("bank", "account", "balance", "checking", "savings", "transfer", "transaction"),
    "Buses": ("bus", "buses", "coach"),
    "Calendar": ("calendar", "availability", "available", "schedule", "meeting"),
    "Events": ("event", "events", "concert", "concerts", "game", "show", "festival", "tour"),
    "Flights": ("flight", "flights", "fly", "airline", "airlines", "airport", "plane"),
    "Homes": ("apartment", "apartments", "property", "bedroom", "bedrooms", "rent"),
    "Hotels": ("hotel", "hotels", "room", "suite", "stay", "accommodation", "resort", "house"),
    "Media": ("movie", "movies", "film", "watch", "stream"),
    "Movies": ("movie", "movies", "film", "cinema", "showtime", "showtimes", "theater"),
    "Music": ("song", "songs", "music", "album", "artist", "track", "playlist", "play", "listen"),
    "RentalCars": ("car", "cars", "rental", "suv", "sedan", "pickup"),
    "Restaurants": ("restaurant", "restaurants", "table", "dinner", "lunch", "cuisine", "dine"),
    "RideSharing": ("ride", "taxi", "cab", "uber", "lyft", "driver"),
    "Services": (
        "salon",
        "haircut",
        "stylist",
        "dentist",
        "doctor",
        "therapist",
        "appointment",
        "plumber",
        "plumbers",
        "electrician",
        "repair",
    ),
    "Travel": ("attraction", "attractions", "museum", "museums", "sightseeing", "landmark"),
    "Weather": ("weather", "forecast", "rain", "temperature", "sunny"),
}

ACTION_WORDS: dict[str, tuple[str, ...]] = {
    "book": ("book", "booking", "reserve", "reservation", "schedule"),
    "buy": ("buy", "purchase", "tickets", "ticket"),
    "find": ("find", "search", "look", "looking", "browse", "discover", "recommend"),
    "check": ("check", "see", "get", "know", "tell"),
    "play": ("play", "listen"),
    "transfer": ("transfer", "send", "pay"),
    "add": ("add", "set", "create"),
    "rent": ("rent", "rental"),
}

_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class IntentEntry:
    """One domain/intent of the catalogue.

    Args:
        domain: SGD domain (service name without the `_N` suffix).
        intent: SGD intent name.
        descriptions: The schema descriptions of the intent (one per service version).
        transactional: Whether the intent changes the world (booking) or only reads.
        slots: Required and optional slot names.
    """

    domain: str
    intent: str
    descriptions: tuple[str, ...]
    transactional: bool
    slots: tuple[str, ...] = field(default=())

    @property
    def exemplars(self) -> list[str]:
        """Texts that stand for this intent when embedded (descriptions + split name)."""
        words = re.sub(r"(?<!^)(?=[A-Z])", " ", self.intent).lower().replace("oneway", "one-way")
        return [*self.descriptions, f"{words} ({self.domain.lower()})"]


def load_intent_catalog(schema_paths: list[Path] | None = None) -> list[IntentEntry]:
    """Load the intent catalogue.

    Args:
        schema_paths (`list[Path]`, *optional*): SGD-style `schema.json` files; when None,
            the packaged `sgd_intents.json` (SGD train+dev) is used.

    Returns:
        `list[IntentEntry]`: One entry per distinct (domain, intent).
    """
    if schema_paths is None:
        rows = json.loads(CATALOG_FILE.read_text())["intents"]
        return [
            IntentEntry(
                r["domain"],
                r["intent"],
                tuple(r["descriptions"]),
                r["transactional"],
                tuple(r["slots"]),
            )
            for r in rows
        ]
    merged: dict[tuple[str, str], dict] = {}
    for path in schema_paths:
        for service in json.loads(Path(path).read_text()):
            domain = service["service_name"].split("_")[0]
            for intent in service["intents"]:
                row = merged.setdefault(
                    (domain, intent["name"]),
                    {"descriptions": [], "slots": [], "tx": intent.get("is_transactional", False)},
                )
                if intent.get("description") and intent["description"] not in row["descriptions"]:
                    row["descriptions"].append(intent["description"])
                for slot in [*intent.get("required_slots", []), *intent.get("optional_slots", [])]:
                    if slot not in row["slots"]:
                        row["slots"].append(slot)
    return [
        IntentEntry(d, i, tuple(r["descriptions"]), r["tx"], tuple(r["slots"]))
        for (d, i), r in merged.items()
    ]


def words(text: str) -> set[str]:
    """Lowercase alphabetic tokens of a text."""
    return set(_WORD.findall(text.lower()))


def domain_cues(text: str) -> set[str]:
    """The SGD domains whose cue words occur in `text`."""
    tokens = words(text)
    return {domain for domain, cues in DOMAIN_WORDS.items() if tokens & set(cues)}


def action_cues(text: str) -> set[str]:
    """The action families whose cue words occur in `text`."""
    tokens = words(text)
    return {action for action, cues in ACTION_WORDS.items() if tokens & set(cues)}
