"""Plain-text helpers every layer shares: one value normaliser and one sentence splitter.

The scripted agents, the validator and the SAGE evaluator each compare values written in free
text, and each needs a slightly different normal form; :func:`normalise` is the one
implementation, and its keyword arguments are the differences:

* the agents keep punctuation and spell numbers one way (``numbers="canonical"``);
* the validator keeps only ASCII words and digits (``punctuation="words"``);
* SAGE keeps the marks values are written with, turns number words into digits and drops a
  leading article (``punctuation="values"``, ``numbers="words"``, ``drop_leading=...``).

:func:`split_sentences` splits at whitespace after ``.``, ``!`` or ``?`` and, unless told
otherwise, at line breaks.

Example:
    >>> normalise("Move 1,200.00 to Premium_Economy", numbers="canonical")
    'move 1200 to premium economy'
    >>> split_sentences("Hi. I need a bus to Boston!\\nAlso, what's the weather there?")
    ['Hi.', 'I need a bus to Boston!', "Also, what's the weather there?"]
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Literal

NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w])")
_ORDINAL_SUFFIX = re.compile(r"(\d)(st|nd|rd|th)\b")
_WORD = re.compile(r"[a-z0-9]+")
_NOT_VALUE_MARK = re.compile(r"[^\w:'$.@-]+")
_STRAY_DOT_OR_POSSESSIVE = re.compile(r"(?<!\d)[.](?!\d)|'s\b")


def canonical_number(value: float, *, signed: bool = True, places: int | None = None) -> str:
    """One spelling of a number: an integer without ``.0``, else its shortest ``repr``.

    Args:
        value (`float`): The number.
        signed (`bool`, *optional*): Keep the sign; ``False`` writes the magnitude (the
            validator reads a debit and its amount as one value).
        places (`int`, *optional*): Round a non-integer to this many decimal places
            (``0.9999999`` stays a decimal, ``'1.0'``); ``None`` keeps every digit.

    Returns:
        `str`: The canonical spelling.

    Example:
        >>> canonical_number(1200.0), canonical_number(-59.99), canonical_number(0.1234567)
        ('1200', '-59.99', '0.1234567')
        >>> canonical_number(-59.99, signed=False), canonical_number(0.1234567, places=6)
        ('59.99', '0.123457')
    """
    value = float(value) if signed else abs(float(value))
    if value.is_integer():
        return str(int(value))
    return repr(value if places is None else round(value, places))


def _canonical_number_match(match: re.Match[str]) -> str:
    return canonical_number(float(match.group().replace(",", "")))


def normalise(
    text: str,
    *,
    casefold: bool = True,
    underscores: bool = True,
    punctuation: Literal["keep", "words", "values"] = "keep",
    numbers: Literal["keep", "canonical", "words"] = "keep",
    drop_leading: Collection[str] = (),
) -> str:
    """``text`` lower-cased, in single spaces, with the rest of the normal form chosen by name.

    Args:
        text (`str`): Any text.
        casefold (`bool`, *optional*): ``str.casefold`` (``"ß"`` -> ``"ss"``); ``False`` uses
            ``str.lower``.
        underscores (`bool`, *optional*): Read ``_`` as a space (``premium_economy``).
        punctuation (`str`, *optional*): ``"keep"`` leaves it; ``"words"`` keeps only ASCII
            letters and digits, as words; ``"values"`` keeps the marks values are written with
            (``:'$.@-`` and decimal points) and drops the rest, sentence full stops and a
            possessive ``'s``.
        numbers (`str`, *optional*): ``"keep"`` leaves them; ``"canonical"`` writes each number
            one way (``1,200.00`` -> ``1200``); ``"words"`` writes number words and ordinals as
            digits (``two`` -> ``2``, ``3rd`` -> ``3``).
        drop_leading (`Collection[str]`, *optional*): Words dropped from the start while more
            than one word is left (``"the 4th"`` and ``"4th"`` compare equal).

    Returns:
        `str`: The normal form.

    Example:
        >>> normalise("Pay 1,200.00 to Premium_Economy", numbers="canonical")
        'pay 1200 to premium economy'
        >>> normalise("Order #O-12: café_au_lait", punctuation="words")
        'order o 12 caf au lait'
        >>> normalise("The Two Tickets, 3rd row!", casefold=False, underscores=False,
        ...           punctuation="values", numbers="words", drop_leading={"the"})
        '2 tickets 3 row'
    """
    text = text.casefold() if casefold else text.lower()
    if punctuation == "values":
        text = text.replace("’", "'")
    if numbers == "words":
        text = _ORDINAL_SUFFIX.sub(r"\1", text)
    if underscores:
        text = text.replace("_", " ")
    if punctuation == "words":
        text = " ".join(_WORD.findall(text))
    elif punctuation == "values":
        text = _STRAY_DOT_OR_POSSESSIVE.sub(" ", _NOT_VALUE_MARK.sub(" ", text))
    if numbers == "canonical":
        text = _NUMBER.sub(_canonical_number_match, text)
    tokens = text.split()
    if numbers == "words":
        tokens = [NUMBER_WORDS.get(token, token) for token in tokens]
    while len(tokens) > 1 and tokens[0] in drop_leading:
        tokens = tokens[1:]
    return " ".join(tokens)


def split_sentences(
    text: str, *, ends: str = ".!?", newlines: bool = True, strip: str | None = None
) -> list[str]:
    """The sentences of ``text``: split at whitespace after an end mark, and at line breaks.

    Args:
        text (`str`): Any text.
        ends (`str`, *optional*): Characters that end a sentence when whitespace follows.
        newlines (`bool`, *optional*): Whether a line break always ends a sentence.
        strip (`str`, *optional*): Characters stripped from each sentence's ends (``None``:
            whitespace; ``""``: none).

    Returns:
        `list[str]`: The sentences in order; blank ones are left out.

    Example:
        >>> split_sentences("Yes.  Go ahead!\\nThanks")
        ['Yes.', 'Go ahead!', 'Thanks']
        >>> split_sentences("Yes.\\nGo ahead", newlines=False)
        ['Yes.', 'Go ahead']
        >>> split_sentences("- Is it late?\\n- No", strip=" -")
        ['Is it late?', 'No']
    """
    boundary = rf"(?<=[{re.escape(ends)}])\s+" + (r"|\n+" if newlines else "")
    pieces = (piece.strip(strip) for piece in re.split(boundary, text))
    return [piece for piece in pieces if piece.strip()]


def clean_text(text: str) -> str:
    """``text`` made encodable: lone surrogates become U+FFFD, surrogate pairs are joined.

    A Python string can hold lone surrogates (``"\\ud800"``: a bad byte-level decode, a
    JSON ``\\ud800`` escape), which are not Unicode text: tokenizers, sentence-transformers
    and UTF-8 writers reject them with a ``TypeError`` or ``UnicodeEncodeError``. NUL and
    other control characters are valid text and stay.

    Args:
        text (`str`): Any string.

    Returns:
        `str`: ``text`` itself when it encodes as UTF-8, else the repaired copy.

    Example:
        >>> clean_text("a\\ud800b") == "a\\ufffdb", clean_text("\\ud83d\\ude00") == "\\U0001f600"
        (True, True)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # only surrogates fail: UTF-16 pairs them, replaces the rest
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text
