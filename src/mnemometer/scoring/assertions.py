"""Negation-aware assertions: does a text *assert* a phrase, or only mention it?

"Avoid the purple default", "black is no longer used", "Amazon (formerly Google)" and
"No, not Amazon" mention a phrase without asserting it. :func:`negated` is the one
implementation of that test: the items suite grades answers with :func:`asserts`, and the
scenarios suite's keyword grading (:mod:`mnemometer.scoring.keywords`) asks it about every
keyword occurrence.

Scope, in order:

* a **clause** ends at ``. ; : ! ?``, a line break, a parenthesis or bracket, "but",
  "however", "whereas", and at ", now" / "and now" ("used to work at Google, now Amazon");
* a **cue before** the phrase in its clause negates it ("not", "never", "avoid", "instead
  of", "formerly", "previously", "used to", "moved from", ...), except that after a swap
  verb the new value is asserted: "replaced Hilton **with** Choice" and "moved from San
  Francisco **to** Austin" negate only the old value;
* a **cue after** the phrase negates it ("X was rejected", "X is no longer used", "X is
  wrong"), except a contrast: in "Amazon, not Google" only Google is negated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = [
    "STOP_WORDS",
    "assertion_hits",
    "assertion_recall",
    "asserts",
    "carries_negation",
    "label_recall",
    "negated",
    "support",
    "terms",
]

# Cues that, earlier in the same clause, turn a mention into a denial or a former fact.
_BEFORE = re.compile(
    r"\b(not|never|no|nothing|avoid|avoids|avoided|avoiding|don't|doesn't|didn't|won't|"
    r"can't|cannot|shouldn't|mustn't|isn't|aren't|wasn't|weren't|without|instead of|"
    r"rather than|except|nor|neither|stop|stopped|drop|dropped|replace|replaced|no longer|"
    r"formerly|former|previously|used to|before that|prior to that|deprecated|rejected|"
    r"banned|forbid|forbids|forbidden|doubt|doubtful|unlikely|"
    r"(?:moved|switched|changed|upgraded|downgraded|transferred|relocated)\s+(?:away\s+)?from)"
    r"\b",
    re.I,
)
# Swap cues whose object is the old value, and the word that introduces the new one:
# "replaced Hilton with Choice", "moved from San Francisco to Austin".
_SWAP = (
    (re.compile(r"replace|replaced|drop|dropped", re.I), re.compile(r"\b(?:with|by|for)\b", re.I)),
    (re.compile(r".*\sfrom", re.I | re.S), re.compile(r"\b(?:to|into)\b", re.I)),
)
_AFTER = re.compile(
    r"^\W*(?:\w+\W+){0,4}?(is|are|was|were|has been|have been|got)?\s*"
    r"(not|never|no longer|deprecated|rejected|removed|banned|forbidden|retired|"
    r"abandoned|dropped|discouraged|obsolete|superseded|closed|shut down|turned off|"
    r"declined|refused|turned down|vetoed|wrong|incorrect|unlikely|doubtful)\b",
    re.I,
)
# "Amazon, not Google" / "Amazon and not Google": the negation belongs to what follows.
_CONTRAST = re.compile(
    r"^\s*(?:[,/\u2013\u2014-]|\band\b|\bbut\b)\s*(?:not|never|no longer|nor)\b", re.I
)
_CLAUSE = re.compile(
    r"[.;:!?\n()\[\]]|\bbut\b|\bhowever\b|\bwhereas\b"
    r"|,\s*(?:and\s+|but\s+)?(?:now|currently|nowadays|these days|today)\b"
    r"|\band\s+(?:now|currently|nowadays)\b",
    re.I,
)
_WORD = re.compile(r"\w+", re.UNICODE)
STOP_WORDS = frozenset(
    "a an the of to in on at for by with and or is are was were be been do does did what "
    "which who whom whose when where why how that this these those it its our we us you "
    "your i me my they them their he she his her there here should would could can will "
    "shall may might must about into from as any some all each per up get me".split()
)
"""Function words: never content, never a candidate value."""


def _occurrences(text: str, phrase: str) -> list[int]:
    """Start offsets of ``phrase`` in ``text`` (case-insensitive, whole-word at the edges)."""
    p = re.escape(phrase.strip())
    if not p:
        return []
    left = r"(?<!\w)" if phrase.strip()[0].isalnum() else ""
    right = r"(?!\w)" if phrase.strip()[-1].isalnum() else ""
    return [m.start() for m in re.finditer(left + p + right, text, re.I)]


def carries_negation(phrase: str) -> bool:
    """True when ``phrase`` itself holds a negation cue ("no auto-retry", "not yet")."""
    return bool(_BEFORE.search(phrase))


def negated(text: str, start: int, end: int) -> bool:
    """True when the mention ``text[start:end]`` is denied or marked as former.

    The module docstring gives the rules. ``start`` and ``end`` are character offsets.
    """
    clause_start = 0
    for m in _CLAUSE.finditer(text, 0, start):
        clause_start = m.end()
    window = text[clause_start:start]
    cues = list(_BEFORE.finditer(window))
    if cues:
        last = cues[-1]
        swapped = any(
            cue.fullmatch(last.group(1)) and new.search(window, last.end()) for cue, new in _SWAP
        )
        if not swapped or len(cues) > 1:
            return True  # "not X"; but "replaced A with X" asserts X (unless "not" precedes)
    rest = text[end:]
    stop = _CLAUSE.search(rest)
    rest = rest[: stop.start()] if stop else rest
    if _CONTRAST.match(rest):
        return False  # a contrast: "Amazon, not Google" denies only Google
    return bool(_AFTER.search(rest))


def asserts(text: str, phrase: str) -> bool:
    """True when ``text`` asserts ``phrase``: some mention of it is not negated.

    "Avoid the purple default" mentions "purple default" without asserting it. A phrase
    that itself carries a negation ("no auto-retry") is matched as written.
    """
    phrase = phrase.strip()
    if not phrase:
        return False
    starts = _occurrences(text, phrase)
    if not starts:
        return False
    if carries_negation(phrase):
        return True
    return any(not negated(text, s, s + len(phrase)) for s in starts)


def assertion_recall(text: str, phrases: Sequence[str]) -> float | None:
    """Share of ``phrases`` asserted; ``None`` when there are none."""
    if not phrases:
        return None
    return sum(asserts(text, p) for p in phrases) / len(phrases)


def assertion_hits(text: str, phrases: Sequence[str]) -> int:
    """How many of ``phrases`` are asserted."""
    return sum(asserts(text, p) for p in phrases)


def terms(text: str) -> set[str]:
    """Content words: lowercase, stop words dropped, a plural ``s`` stripped."""
    out = set()
    for w in _WORD.findall(text.lower()):
        if w in STOP_WORDS or len(w) < 2:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def support(question: str, text: str) -> float:
    """Share of the question's content words found in ``text`` (0 when it has none)."""
    q = terms(question)
    return len(q & terms(text)) / len(q) if q else 0.0


def label_recall(expected: Sequence[str], found: Iterable[str]) -> float | None:
    """Share of expected labels (tags, files; trimmed, lowercase) among ``found``."""
    want = {e.strip().lower() for e in expected if e.strip()}
    if not want:
        return None
    have = {f.strip().lower() for f in found}
    return len(want & have) / len(want)
