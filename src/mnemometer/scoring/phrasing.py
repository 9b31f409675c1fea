"""Phrasings the scenario grader reads beyond the shared tokenizer and negation test.

:mod:`mnemometer.scoring.keywords` reads a reply through :mod:`~mnemometer.scoring.tokens`
and :func:`~mnemometer.scoring.assertions.negated`, which the items suite shares. What
only the scenario grader needs lives here, so the items suite's assertions keep their
meaning:

* **denial cues** that :func:`negated` does not know are rewritten onto ones it does,
  keeping every offset, so its scope rules (clauses, contrasts, swaps) apply unchanged:
  "X is false", "X is out of the question", "hardly X", "anything but X"
  (:func:`for_negation`);
* denial phrasings are never hedge candidates (:func:`cue_spans`);
* a **denial item**, a list item made only of denial words ("(not really)", "just
  kidding", "or not"), denies the answer before it (:func:`denies`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["cue_spans", "denies", "for_negation"]

# Denial phrasings onto the cue negated() reads in the same place: after the value
# ("wrong") or before it ("not"). Each replacement is padded to the phrase's length.
_DENIAL_CUES = (
    (
        re.compile(
            r"\b(?:false|untrue|out of the question|off the table|ruled out|a no-go)\b", re.I
        ),
        "wrong",
    ),
    (re.compile(r"\b(?:hardly|scarcely|far from|anything but)\b", re.I), "not"),
)


def cue_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the denial phrasings in ``text`` ("anything but", "false").

    Their words say what the reply denies, so they are never candidate values in the hedge
    check.
    """
    return [m.span() for phrase, _ in _DENIAL_CUES for m in phrase.finditer(text)]


def for_negation(text: str) -> str:
    """``text`` as the negation test should read it, with every offset kept.

    Denial phrasings :func:`~mnemometer.scoring.assertions.negated` does not know are
    written as cues it does ("Amazon is false" reads "Amazon is wrong", "hardly Gold" reads
    "not Gold").
    """
    for phrase, cue in _DENIAL_CUES:
        text = phrase.sub(lambda m, cue=cue: cue.ljust(len(m.group(0))), text)
    return text


_DENIERS = frozenset(
    """no nope nah not never none neither nor negative false untrue wrong incorrect kidding
    joking""".split()
)
# Words that may stand beside a denier in a denial item without changing its sense.
_DENIAL_FILLER = frozenset(
    """really at all anymore quite exactly just way chance of course is it that definitely
    certainly absolutely totally simply""".split()
)


def denies(words: Sequence[str]) -> bool:
    """True when a list item is only a denial: "not really", "just kidding", "no way".

    The item must be made of denial words alone and deny an odd number of times, so "not
    wrong" affirms and "not Google" is no denial item.
    """
    if not words or not all(w in _DENIERS or w in _DENIAL_FILLER for w in words):
        return False
    return sum(w in _DENIERS for w in words) % 2 == 1
