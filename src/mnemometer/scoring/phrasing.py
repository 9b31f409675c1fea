"""Phrasings the scenario grader reads beyond the shared tokenizer and negation test.

:mod:`mnemometer.scoring.keywords` reads a reply through :mod:`~mnemometer.scoring.tokens`
and :func:`~mnemometer.scoring.assertions.negated`, which the items suite shares. What
only the scenario grader needs lives here, so the items suite's assertions keep their
meaning:

* **denial cues** that :func:`negated` does not know are rewritten onto ones it does,
  keeping every offset, so its scope rules (clauses, contrasts, swaps) apply unchanged:
  "X is false", "X is out of the question", "hardly X", "anything but X"
  (:func:`for_negation`);
* **confidence hedges** say how sure the speaker is, not that the value is wrong: "not
  sure", "no idea", "I don't know", "if I'm not mistaken", "no doubt" are blanked for the
  negation test; neither they nor denial phrasings are hedge candidates (:func:`cue_spans`);
* a **denial item**, a list item made only of denial words ("(not really)", "just
  kidding", "or not"), denies the answer before it (:func:`denies`);
* an **open alternative**, a list item offered with "or" that names no value ("or some
  other big tech company"), is another candidate (:func:`open_alternative`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["cue_spans", "denies", "for_negation", "open_alternative"]

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
# Confidence hedges: how sure the speaker is. "doubt" and "unlikely" still deny.
_CONFIDENCE = re.compile(
    r"\b(?:(?:i'm|i am|i)\s+)?(?:not|never)\s+"
    r"(?:(?:entirely|completely|totally|fully|quite|really|very|too|so|that|100\s*%|"
    r"a hundred percent)\s+)?(?:sure|certain|positive|confident)\b"
    r"|\b(?:i\s+)?(?:don't|do not|can't|cannot|couldn't)\s+(?:quite\s+|really\s+)?"
    r"(?:know|remember|recall|say|tell|be sure|be certain)"
    r"(?:\s+(?:for sure|for certain|exactly|precisely))?(?=\s*(?:[,.;:!?)\]]|$|if\b|whether\b))"
    r"|\b(?:if|unless)\s+(?:i'm|i am)\s+(?:not\s+)?(?:mistaken|wrong)\b"
    r"|\bno\s+(?:idea|clue)\b"
    r"|\b(?:no|without(?:\s+a)?)\s+doubt\b",
    re.I,
)


def cue_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of confidence hedges and denial phrasings ("not sure", "anything but").

    Their words say how sure the reply is or what it denies, so they are never candidate
    values in the hedge check.
    """
    spans = [m.span() for m in _CONFIDENCE.finditer(text)]
    return spans + [m.span() for phrase, _ in _DENIAL_CUES for m in phrase.finditer(text)]


def for_negation(text: str) -> str:
    """``text`` as the negation test should read it, with every offset kept.

    Confidence hedges are blanked ("Amazon, I'm not sure" asserts Amazon) and denial
    phrasings :func:`~mnemometer.scoring.assertions.negated` does not know are written as
    cues it does ("Amazon is false" reads "Amazon is wrong", "hardly Gold" reads "not Gold").
    """
    for m in _CONFIDENCE.finditer(text):
        text = text[: m.start()] + " " * (m.end() - m.start()) + text[m.end() :]
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
    wrong" affirms and "not Google" or "not sure" is no denial item.
    """
    if not words or not all(w in _DENIERS or w in _DENIAL_FILLER for w in words):
        return False
    return sum(w in _DENIERS for w in words) % 2 == 1


_INDEFINITE = frozenset(
    """other another else elsewhere otherwise some something somewhere someone somebody
    similar whatever whichever whoever wherever any anything anywhere anyone""".split()
)


def open_alternative(words: Sequence[str]) -> bool:
    """True when an item offered as an alternative names no value ("some other company").

    The caller passes only items introduced by "or", "nor", "vs" or a slash that hold no
    required keyword: "Amazon or some other big tech company" offers a second, unnamed
    candidate, so the reply commits to neither.
    """
    return any(w in _INDEFINITE for w in words)
