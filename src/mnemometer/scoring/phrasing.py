"""Phrasings the scenario grader reads beyond the shared tokenizer and negation test.

:mod:`mnemometer.scoring.keywords` reads a reply through :mod:`~mnemometer.scoring.tokens`
and :func:`~mnemometer.scoring.assertions.negated`, which the items suite shares. What
only the scenario grader needs lives here, so the items suite's assertions keep their
meaning:

* **time spellings** the tokenizer does not read become ones it does, before tokenising:
  "2 in the afternoon" and "two pm" are ``2pm``, "14h" and "14h00" are ``14:00`` (a
  one-digit "2h" or "1h30" is a duration), "2.30pm" is ``2:30pm`` (:func:`respell`);
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

__all__ = ["cue_spans", "denies", "for_negation", "open_alternative", "respell"]

_HOURS = "one two three four five six seven eight nine ten eleven twelve".split()
_MERIDIEM = r"[ap]\.?\s?m\b"
_PART = r"in\s+the\s+(morning|afternoon|evening)\b"
# "two pm", "two o'clock", "two in the afternoon": a spelled hour before a clock word.
_SPELLED = re.compile(rf"\b({'|'.join(_HOURS)})(?=\s*(?:{_MERIDIEM}|o'clock\b|{_PART}))", re.I)
# "2 in the afternoon", "2:30 o'clock in the evening": the part of day gives the meridiem.
_PART_OF_DAY = re.compile(rf"(?<![\d:.])(\d{{1,2}})(:\d{{2}})?\s*(?:o'clock\s*)?{_PART}", re.I)
# "14h", "14h00", "09h30": the 24-hour "h" spelling, with a two-digit hour ("2h" and
# "1h30" are durations).
_H_CLOCK = re.compile(r"(?<![\w:.])(\d{1,2})h(\d{2})?(?!\w)", re.I)
# "2.30pm": a dot for the colon, only with a meridiem (a bare "2.30" is a number).
_DOT_CLOCK = re.compile(rf"(?<![\d:.])(\d{{1,2}})\.(\d{{2}})(?=\s*{_MERIDIEM})", re.I)


def _part_of_day(m: re.Match[str]) -> str:
    hour = int(m.group(1))
    if not 1 <= hour <= 12:
        return m.group(0)
    return f"{hour}{m.group(2) or ''}{'am' if m.group(3).lower() == 'morning' else 'pm'}"


def _h_clock(m: re.Match[str]) -> str:
    hour, minutes = int(m.group(1)), m.group(2) or "00"
    if len(m.group(1)) < 2 or hour > 23 or int(minutes) > 59:
        return m.group(0)
    return f"{hour:02d}:{minutes}"


def respell(text: str) -> str:
    """``text`` with the time spellings the tokenizer does not read rewritten to ones it does.

    The result is tokenised in place of the reply, so a time stays one token ("Monday, 2
    in the afternoon" is two words, as "Monday, 2pm" is).
    """
    text = _SPELLED.sub(lambda m: str(_HOURS.index(m.group(1).lower()) + 1), text)
    text = _PART_OF_DAY.sub(_part_of_day, text)
    text = _H_CLOCK.sub(_h_clock, text)
    return _DOT_CLOCK.sub(r"\1:\2", text)


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
