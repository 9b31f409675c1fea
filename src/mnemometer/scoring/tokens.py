"""Tokens for grading replies: whole words, with exact values made canonical.

* e-mail addresses stay one token (``john@example.com``);
* times read as 24-hour ``HH:MM``: "2pm", "2 pm", "2 p.m.", "2:00 PM" and "14:00" are all
  ``14:00``; a bare "2:00" or "2 o'clock" may be either ``02:00`` or ``14:00`` and matches
  both; "noon" is ``12:00``;
* weekdays and months read in full: "Mon", "Mon." and "Mondays" are ``monday``, "Sept"
  is ``september`` ("Wed", "Sat" and "Sun" only capitalised; "May" only before a number);
* numbers lose thousands separators and ordinal suffixes ("1,000" is ``1000``, "15th" is
  ``15``); anything with a digit ("555-0123", "B-23") is a number;
* a possessive "'s" is dropped ("John's" reads ``john``).

:func:`list_items` also cuts a reply into list items at punctuation and at "or",
"and", "but", ...: "Amazon, Apple or Meta" is three items. Offsets refer to the folded text
(NFKC, curly quotes straightened) that :func:`fold` returns, so a token can be checked
for negation there.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from mnemometer.scoring.assertions import STOP_WORDS

__all__ = [
    "DESCRIPTIVE",
    "EXACT_KINDS",
    "FILLER",
    "NEGATION_WORDS",
    "POLARITY",
    "Token",
    "fold",
    "list_items",
    "tokenize",
    "tokens",
]

EXACT_KINDS = frozenset({"email", "time", "day", "month", "number"})
"""Kinds of value that must match exactly: similarity cannot tell them apart."""

POLARITY = frozenset(
    "yes yeah yep yup no nope nah true false correct incorrect affirmative negative".split()
)
"""Words that answer a yes/no question."""

NEGATION_WORDS = frozenset("no nope nah not never none neither nor negative".split())
"""Words that are themselves a negation (so "not no" denies a "no")."""

FILLER = STOP_WORDS | frozenset(
    """yes no not maybe perhaps probably possibly likely definitely certainly surely
    obviously clearly just only also too still now currently then think believe guess say
    sure ok okay well so um uh hmm please thanks thank answer actually either both else
    even though if than since because over under above below after before have has had
    one ones
    being am i'm you're it's that's there's let so-called etc com inc ltd llc corp co org
    net dollars dollar usd bucks euros hey hi hello formerly previously former used
    earlier originally instead rather except without longer anymore upgraded downgraded
    moved switched changed replaced replacing""".split()
)
"""Words that never make a list item a candidate value ("Amazon, I think")."""

DESCRIPTIVE = frozenset(
    """the a an your my his her their our its as since because which who whom whose that
    thanks to for with at in on from by than under over about of per after before like
    when where while so if via""".split()
)
"""Words that make a list item a description or a clause ("your current employer", "as
it's cheaper"), not another candidate value."""

_SEPARATOR_WORDS = frozenset("or and nor but plus vs versus either neither then".split())
_ALTERNATIVE_WORDS = frozenset("or nor vs versus".split())
_SEPARATOR_CHARS = re.compile(r"[,;:/|&()\[\]{}<>\n\u2022\u00b7!?.+\-\u2013\u2014]")

_TOKEN = re.compile(
    r"""
    (?P<email>[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+)
  | (?<![\d:.])(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>[ap])\.?\s?m\b\.?   # 2pm, 2:00 p.m.
  | (?<![\d:.])(?P<ch>\d{1,2}):(?P<cm>\d{2})(?![\d:])                     # 14:00, 2:00
  | (?<![\d:.])(?P<oh>\d{1,2})\s*o'clock\b                                 # 2 o'clock
  | (?<![\w.])(?P<thousands>\d{1,3}(?:,\d{3})+)(?![\d,])                  # 1,000
  | (?P<decimal>\d+\.\d+)
  | (?P<word>[a-z0-9]+(?:['-][a-z0-9]+)*)                                  # a word
    """,
    re.VERBOSE | re.I,
)

_DAYS = {
    d: d for d in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
}
_DAYS.update({d + "s": d for d in list(_DAYS)})
_DAYS.update(
    {"mon": "monday", "tue": "tuesday", "tues": "tuesday", "thu": "thursday"}
    | {"thur": "thursday", "thurs": "thursday", "fri": "friday"}
)
_CAPITALISED_DAYS = {"wed": "wednesday", "sat": "saturday", "sun": "sunday"}
_MONTHS = {
    m: m
    for m in (
        "january february march april june july august september october november december"
    ).split()
}
_MONTHS.update({m[:3]: m for m in list(_MONTHS)} | {"sept": "september"})
_CLOCK_WORDS = {"noon": "12:00", "midday": "12:00", "midnight": "00:00"}


@dataclass(frozen=True, slots=True)
class Token:
    """One token: canonical text, offsets in the folded text, kind and matching values."""

    text: str
    """Canonical form (lower case; ``14:00``; ``monday``)."""
    start: int
    end: int
    kind: str = "word"
    """``word``, ``email``, ``time``, ``day``, ``month`` or ``number``."""
    values: frozenset[str] = frozenset()
    """What an ambiguous token may stand for ("2:00": ``02:00`` or ``14:00``)."""

    def matches(self, other: Token) -> bool:
        """Same value: equal text, or overlapping values for ambiguous times."""
        if self.text == other.text:
            return True
        return bool((self.values or {self.text}) & (other.values or {other.text}))


def fold(text: str) -> str:
    """NFKC and straight quotes (offsets of tokens refer to this text)."""
    text = unicodedata.normalize("NFKC", text)
    return text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")


def _time(h: int, m: str, meridiem: str | None, padded: bool) -> tuple[str, frozenset[str]]:
    if meridiem is not None:
        h = h % 12 + (12 if meridiem == "p" else 0)
        return f"{h:02d}:{m}", frozenset()
    if 1 <= h <= 11 and not padded:  # "2:00": two in the morning or the afternoon
        return f"{h}:{m}", frozenset({f"{h:02d}:{m}", f"{h + 12:02d}:{m}"})
    return f"{h:02d}:{m}", frozenset()


def _token(m: re.Match[str], text: str) -> Token | None:
    start, end = m.span()
    if m.group("email"):
        return Token(m.group("email").lower(), start, end, "email")
    if m.group("ap"):
        h, mins = int(m.group("h")), m.group("m") or "00"
        if 1 <= h <= 12 and int(mins) < 60:
            canon, _ = _time(h, mins, m.group("ap").lower(), True)
            return Token(canon, start, end, "time")
    if m.group("ch"):
        h, mins = int(m.group("ch")), m.group("cm")
        if h < 24 and int(mins) < 60:
            canon, values = _time(h, mins, None, m.group("ch").startswith("0"))
            return Token(canon, start, end, "time", values)
    if m.group("oh"):
        h = int(m.group("oh"))
        if 1 <= h <= 12:
            canon, values = _time(h, "00", None, False)
            return Token(canon, start, end, "time", values)
    if m.group("thousands"):
        return Token(m.group("thousands").replace(",", ""), start, end, "number")
    if m.group("decimal"):
        return Token(m.group("decimal"), start, end, "number")
    word = m.group(0).lower()
    if not m.group("word"):
        word = " ".join(word.split())  # an invalid time such as "25:00" stays as written
    if word.endswith("'s"):
        word = word[:-2]  # possessive: "john's" reads as "john"
    if word in _DAYS:
        return Token(_DAYS[word], start, end, "day")
    if word in _CAPITALISED_DAYS and text[start].isupper():
        return Token(_CAPITALISED_DAYS[word], start, end, "day")
    if word in _MONTHS or (word == "may" and re.match(r"\.?\s*\d", text[end:])):
        return Token(_MONTHS.get(word, "may"), start, end, "month")
    if word in _CLOCK_WORDS:
        return Token(_CLOCK_WORDS[word], start, end, "time")
    if any(c.isdigit() for c in word):
        ordinal = re.fullmatch(r"(\d+)(?:st|nd|rd|th)", word)
        return Token(ordinal.group(1) if ordinal else word, start, end, "number")
    return Token(word, start, end) if word else None


def tokenize(text: str) -> list[Token]:
    """Tokens of ``text`` (offsets in ``fold(text)``)."""
    folded = fold(text)
    return [t for m in _TOKEN.finditer(folded) if (t := _token(m, folded)) is not None]


def list_items(text: str) -> tuple[list[Token], str, list[list[int]], set[int]]:
    """Tokens, the folded text, the list items and which of them are alternatives.

    List items are lists of token positions; an item is offered as an alternative when
    "or", "nor", "vs" or a slash introduces it. Items are cut at punctuation and at separator words ("or", "and", "but", ...), which
    belong to no item: "Amazon, Apple or Meta" is three items, the third an alternative.
    """
    toks = tokenize(text)
    folded = fold(text)
    items: list[list[int]] = [[]]
    offered: set[int] = set()
    for i, t in enumerate(toks):
        gap = folded[toks[i - 1].end : t.start] if i else ""
        if _SEPARATOR_CHARS.search(gap):
            items.append([])
            if "/" in gap or "|" in gap:
                offered.add(len(items) - 1)
        if t.text in _SEPARATOR_WORDS:
            items.append([])
            if t.text in _ALTERNATIVE_WORDS:
                offered.add(len(items) - 1)
            continue
        items[-1].append(i)
    keep = [n for n, s in enumerate(items) if s]
    return toks, folded, [items[n] for n in keep], {k for k, n in enumerate(keep) if n in offered}


def tokens(text: str) -> list[str]:
    """Canonical whole-word tokens of ``text`` (see the module docstring)."""
    return [t.text for t in tokenize(text)]
