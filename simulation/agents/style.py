"""Persona writing styles for the scripted user, read deterministically from persona fields.

A :class:`StyleProfile` is extracted once from a persona's ``writing_style`` and
``sample_messages`` with keyword rules: the greeting and sign-off it quotes ("Opens with
'Good day.'", "signs off 'cheers pal'"), its case (all lowercase, ALL CAPS), emojis it
uses, whether it writes key: value lines, dash lists or terse fragments. :meth:`apply`
turns the scripted user's neutral sentences into that voice, so style cues are visible
in every message and identical for the same persona.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from mads_bench.data_model import Persona
from simulation.agents.settings import SETTINGS
from simulation.agents.text import is_affirmative, is_refusal
from simulation.agents.wording import user_wording, word_lists

_QUOTED = re.compile(r"'([^']{1,60}?)'(?=[\s,.;:)!?]|$)")
# Cue words a quoted phrase follows ("opens with 'X'") or precedes ("'X' at the end").
_GREET_BEFORE = re.compile(r"\b(opens with|starts with|greets with|greets first \(|greets)", re.I)
_GREET_AFTER = re.compile(r"^\s?(as a greeting|to start|at the start)", re.I)
_SIGN_BEFORE = re.compile(
    r"\b(closes with|closes|signs off with|signs off|signs|ends with|ends)\b", re.I
)
_SIGN_AFTER = re.compile(r"^\s?(at the end|to finish|to thank|to say thanks)", re.I)
_EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf]")


@dataclass(frozen=True)
class StyleProfile:
    """Concrete, deterministic cues of one persona's writing style."""

    greeting: str | None = None
    sign_off: str | None = None
    case: str = "normal"  # normal | lower | upper
    emojis: tuple[str, ...] = ()
    layout: str = "prose"  # prose | dash | key_value | numbered
    terse: bool = False
    no_punctuation: bool = False
    slips: tuple[str, ...] = ()  # typos | no_apostrophes | hedges | abbreviations
    abbreviations: tuple[str, ...] = ()  # the persona's own ('pls', 'thx', 'u', ...)
    cues: list[str] = field(default_factory=list)

    @classmethod
    def from_persona(cls, persona: Persona) -> StyleProfile:
        """Read the cues from ``writing_style`` (quoted phrases) and ``sample_messages``.

        Example:
            >>> from mads_bench.catalog import load_personas
            >>> style = StyleProfile.from_persona(load_personas()["tomasz_nowak"])
            >>> style.greeting, style.sign_off
            ('Good day.', 'Thank you.')
        """
        text = persona.writing_style
        lowered = text.casefold()
        quotes = list(_QUOTED.finditer(text))
        greeting = _cued_quote(text, quotes, _GREET_BEFORE, _GREET_AFTER)
        sign_off = _cued_quote(text, quotes, _SIGN_BEFORE, _SIGN_AFTER)
        no_greeting = "no greeting" in lowered
        if greeting is None and not no_greeting:
            first = persona.sample_messages[0]
            words = first.split()
            opener = words[0].strip(",.!").casefold().rstrip("i") if words else ""
            if opener in word_lists().greeting_words:
                clause = re.match(r"[^,.!?]*[,.!?]?", first).group()
                greeting = clause if len(clause.split()) <= 3 else words[0]
        case = "normal"
        if "writes everything in capital" in lowered:
            case = "upper"
        elif re.search(
            r"all lowercase|mostly lowercase|no capitals|lowercase sentences|"
            r"lowercase except|and lowercase|few capitals",
            lowered,
        ):
            case = "lower"
        emojis = tuple(dict.fromkeys(_EMOJI.findall(text + "".join(persona.sample_messages))))
        if "never uses emoji" in lowered or "no emojis" in lowered or "never emoji" in lowered:
            emojis = ()
        layout = "prose"
        if "dash" in lowered and "line" in lowered:
            layout = "dash"
        elif "key: value" in lowered:
            layout = "key_value"
        elif "numbers his requests" in lowered or "numbered conditions" in lowered:
            layout = "numbered"
        terse = bool(re.search(r"\bterse|minimalist|clipped|fragments|one line per", lowered))
        quoted = {q.group(1).casefold() for q in quotes}
        abbreviations = tuple(sorted(quoted & set(_WORDS.abbreviations)))
        slips = tuple(
            kind
            for kind, on in (
                ("typos", "typo" in lowered),
                ("no_apostrophes", "apostrophe" in lowered),
                ("hedges", "hedging" in lowered or "'um'" in lowered),
                ("abbreviations", bool(abbreviations)),
            )
            if on
        )
        return cls(
            greeting=None if no_greeting else greeting,
            sign_off=sign_off,
            case=case,
            emojis=emojis[:3],
            layout=layout,
            terse=terse,
            no_punctuation="no punctuation" in lowered,
            slips=slips,
            abbreviations=abbreviations,
            cues=[c for c, on in (("terse", terse), ("layout:" + layout, layout != "prose")) if on],
        )

    def apply(
        self,
        sentences: list[str],
        facts: list[str],
        *,
        opening: bool = False,
        closing: bool = False,
        turn: int = 0,
        filler: tuple[str, ...] = (),
        rng: random.Random | None = None,
        protected: tuple[str, ...] = (),
    ) -> str:
        """Write ``sentences`` plus ``facts`` (``label: value`` strings) in this voice.

        Args:
            sentences: neutral sentences (the request, an answer, a reaction).
            facts: slot facts to give, as ``"label: value"``.
            opening: add the greeting.
            closing: add the sign-off.
            turn: 0-based user turn, picks the emoji deterministically.
            filler: sentences a terse writer leaves out.
            rng: draws the persona's slips (typos, dropped apostrophes, hedges, its own
                abbreviations); none without it.
            protected: strings a slip never touches (slot labels and values).

        Returns:
            `str`: the message text.
        """
        if self.terse:  # fragments: drop the filler, no full stops
            sentences = [s.rstrip(".") for s in sentences if s not in filler] or [""]
        if self.layout == "dash":
            body = "\n".join(f"- {s}" for s in [*sentences, *facts] if s)
        elif self.layout == "key_value":
            body = "\n".join([*sentences, *facts])
        elif self.layout == "numbered" and facts:
            numbered = [f"{i}) {fact}" for i, fact in enumerate(facts, 1)]
            body = " ".join(sentences) + "\n" + "\n".join(numbered)
        else:
            details = "; ".join(facts)
            body = " ".join([*sentences, *([f"Details: {details}."] if details else [])])
        body = body.strip()
        greeting = self.greeting if opening else None
        first = body.split(" ", 1)[0].split("'", 1)[0]
        if greeting and greeting.endswith(",") and first[:2].istitle() and len(first) > 1:
            body = body[0].lower() + body[1:]  # "Hello, could you ..." ("I" stays)
        parts = [greeting or "", body]
        if closing and self.sign_off:
            parts.append(self.sign_off)
        text = (" " if self.layout == "prose" else "\n").join(p for p in parts if p)
        if rng is not None and self.slips:
            text = self._slip(text, rng, protected)
        if self.emojis:
            text = f"{text} {self.emojis[turn % len(self.emojis)]}"
        if self.no_punctuation:
            text = re.sub(r"[.,;!]", "", text)
        if self.case == "lower":
            text = text.lower()
        elif self.case == "upper":
            text = text.upper()
        return text

    def _slip(self, text: str, rng: random.Random, protected: tuple[str, ...]) -> str:
        """The persona's slips, drawn per word, outside ``protected`` strings; a message that
        agreed or refused still does (the assistant reads those cues)."""
        keep = [re.escape(p) for p in sorted({p for p in protected if p}, key=len, reverse=True)]
        pieces = re.split(f"({'|'.join(keep)})", text, flags=re.IGNORECASE) if keep else [text]
        out = []
        for index, piece in enumerate(pieces):
            out.append(piece if index % 2 else _WORD_RE.sub(lambda m: self._word(m, rng), piece))
        slipped = "".join(out)
        if "hedges" in self.slips and rng.random() < SETTINGS.hedge_share:
            slipped = f"{rng.choice(_WORDS.hedges)} {slipped[:1].lower()}{slipped[1:]}"
        same_cues = all(cue(slipped) == cue(text) for cue in (is_affirmative, is_refusal))
        return slipped if same_cues else text

    def _word(self, match: re.Match[str], rng: random.Random) -> str:
        word = match.group(0)
        lowered = word.casefold()
        if (
            "abbreviations" in self.slips
            and lowered in self.abbreviations_for
            and rng.random() < SETTINGS.abbreviation_share
        ):
            return self.abbreviations_for[lowered]
        if (
            "no_apostrophes" in self.slips
            and "'" in word
            and rng.random() < SETTINGS.no_apostrophe_share
        ):
            return word.replace("'", "")
        if "typos" in self.slips and lowered in _WORDS.typos and rng.random() < SETTINGS.typo_share:
            return _WORDS.typos[lowered]
        return word

    @property
    def abbreviations_for(self) -> dict[str, str]:
        """Full word -> the persona's abbreviation of it."""
        return {_WORDS.abbreviations[a]: a for a in self.abbreviations}


_WORD_RE = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_WORDS = user_wording()  # its typos misspell function words only, never a label or value


def _cued_quote(
    text: str, quotes: list[re.Match[str]], before: re.Pattern[str], after: re.Pattern[str]
) -> str | None:
    """The quoted phrase right after a ``before`` cue (within 30 chars) or right before an
    ``after`` cue, whichever comes first in the text."""
    for quote in quotes:
        if after.match(text, quote.end() + 1) or after.match(text[quote.end() + 1 :]):
            return quote.group(1)
        cue = None
        for match in before.finditer(text, max(0, quote.start() - 40), quote.start()):
            cue = match
        if cue is not None and quote.start() - cue.end() <= 30:
            return quote.group(1)
    return None
