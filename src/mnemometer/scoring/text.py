"""Text grading: negation-aware assertions, and keyword grading of one reply.

Two graders share this module. **Assertions** (the items suite): does a text assert a
phrase, where "avoid X", "X was rejected" or "not X" mention it without asserting it.
**Keyword grading** (the scenarios suite): whole-word keywords, forbidden words, order,
word limit and persona markers of one reply.

Fixes the seed benchmark's grading bugs (docs/scenarios.md lists them one by one):

* matching is on **whole tokens**, so "choices" does not contain "choice" and "items" does
  not contain the marker "ms";
* e-mail addresses stay one token ("john@example.com"), and times are canonical, so "2pm",
  "2 pm", "2 p.m." and "2:00 PM" all read as ``2pm`` ("2:30 pm" as ``2:30pm``);
* forbidden keywords fail the turn (naming Hilton after the change, or old employers);
* ``ordered`` checks that required keywords appear in the given order;
* the similarity rescue compares with this turn's own expected answer, and never rescues
  a forbidden word or a wrong order;
* a failed call scores 0.0 (it is never left out of the mean).

Scores keep the seed's scale: 1.0 (keywords and concise), 0.5 (keywords but too long, or
rescued by similarity), 0.0 (otherwise).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    [a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+            # an e-mail address, whole
  | (?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>a|p)\.?\s?m\b\.?   # a time: 2pm, 2 pm, 2:00 p.m.
  | [a-z0-9]+(?:['-][a-z0-9]+)*                            # a word, with inner ' or -
    """,
    re.VERBOSE,
)

PERSONA_MARKERS = ("sir", "ma'am", "madam", "mister", "mr", "mrs", "ms", "miss")
"""Formal forms of address, matched as whole words (never "your name is")."""


def normalise(text: str) -> str:
    """Lower-case, fold compatibility forms and curly quotes."""
    text = unicodedata.normalize("NFKC", text).lower()
    return text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")


def tokens(text: str) -> list[str]:
    """Whole-word tokens of ``text`` (e-mails and times kept as one canonical token)."""
    out: list[str] = []
    for m in _TOKEN.finditer(normalise(text)):
        if m.group("ap"):
            minutes = m.group("m")
            stamp = m.group("h").lstrip("0") or "0"
            if minutes and minutes != "00":
                stamp += f":{minutes}"
            out.append(f"{stamp}{m.group('ap')}m")
            continue
        tok = m.group(0)
        if tok.endswith("'s"):
            tok = tok[:-2]  # possessive: "john's" reads as "john"
        out.append(tok)
    return out


def find(keyword: str, toks: list[str]) -> int:
    """Token position where ``keyword`` (one or more words) occurs in ``toks``, or -1.

    ``keyword`` may list alternatives separated by ``|`` ("peanut|peanuts"); the earliest
    occurrence of any of them counts.
    """
    best = -1
    for alt in keyword.split("|"):
        needle = tokens(alt)
        if not needle:
            continue
        n = len(needle)
        for i in range(len(toks) - n + 1):
            if toks[i : i + n] == needle:
                if best < 0 or i < best:
                    best = i
                break
    return best


@dataclass(frozen=True, slots=True)
class TurnGrade:
    """The grade of one reply."""

    score: float
    """1.0, 0.5 or 0.0."""
    reason: str
    """``ok``, ``verbose``, ``missing``, ``forbidden``, ``order``, ``persona-missing``,
    ``no-marker`` or ``error``."""
    words: int = 0
    """Whole-word tokens in the reply."""
    missing: tuple[str, ...] = ()
    """Required keywords not found."""
    forbidden: tuple[str, ...] = ()
    """Forbidden keywords found."""
    similarity: float | None = None
    """Cosine similarity with this turn's expected answer, when computed."""
    rescued: bool = False
    """True when the similarity rescue turned 0.0 into 0.5."""


def grade_keywords(
    reply: str,
    required: list[str],
    forbidden: list[str] = (),  # type: ignore[assignment]
    *,
    ordered: bool = False,
    max_words: int | None = None,
) -> TurnGrade:
    """The seed's keyword + conciseness grade, with whole words, forbidden words and order."""
    toks = tokens(reply)
    words = len(toks)
    bad = tuple(k for k in forbidden if find(k, toks) >= 0)
    if bad:
        return TurnGrade(0.0, "forbidden", words, forbidden=bad)
    positions = [find(k, toks) for k in required]
    missing = tuple(k for k, p in zip(required, positions, strict=True) if p < 0)
    if missing:
        return TurnGrade(0.0, "missing", words, missing=missing)
    if ordered and positions != sorted(positions):
        return TurnGrade(0.0, "order", words)
    if max_words is not None and words > max_words:
        return TurnGrade(0.5, "verbose", words)
    return TurnGrade(1.0, "ok", words)


def grade_persona(
    reply: str,
    required: list[str],
    markers: list[str] = PERSONA_MARKERS,  # type: ignore[assignment]
    forbidden: list[str] = (),  # type: ignore[assignment]
) -> TurnGrade:
    """The seed's persona grade: the fact and a formal marker 1.0, the fact only 0.5."""
    toks = tokens(reply)
    bad = tuple(k for k in forbidden if find(k, toks) >= 0)
    if bad:
        return TurnGrade(0.0, "forbidden", len(toks), forbidden=bad)
    missing = tuple(k for k in required if find(k, toks) < 0)
    if missing:
        return TurnGrade(0.0, "persona-missing", len(toks), missing=missing)
    if any(find(m, toks) >= 0 for m in markers):
        return TurnGrade(1.0, "ok", len(toks))
    # With a fact to recall, recalling it without the persona is half right; with no fact,
    # the persona is the whole test.
    return TurnGrade(0.5 if required else 0.0, "no-marker", len(toks))


def rescue(grade: TurnGrade, similarity: float | None, threshold: float | None) -> TurnGrade:
    """Apply the similarity rescue: a 0.0 for *missing* keywords becomes 0.5 when close.

    Only missing keywords can be rescued (a paraphrase); a forbidden word or a wrong order
    is a wrong answer however similar it reads.
    """
    out = TurnGrade(
        grade.score, grade.reason, grade.words, grade.missing, grade.forbidden, similarity, False
    )
    if (
        grade.score == 0.0
        and grade.reason == "missing"
        and similarity is not None
        and threshold is not None
        and similarity >= threshold
    ):
        return TurnGrade(0.5, "rescued", grade.words, grade.missing, (), similarity, True)
    return out


def failed(error: str) -> TurnGrade:
    """The grade of a turn whose call failed: a failure, never a missing value."""
    del error
    return TurnGrade(0.0, "error")


# ---- assertions ------------------------------------------------------------------

# Cues that, earlier in the same clause, turn a mention into a denial: "avoid X",
# "never use X", "X was rejected" (the last via _AFTER).
_BEFORE = re.compile(
    r"\b(not|never|no|avoid|avoids|avoided|avoiding|don't|doesn't|didn't|won't|can't|"
    r"cannot|shouldn't|mustn't|isn't|aren't|wasn't|weren't|without|instead of|rather than|"
    r"except|nor|neither|stop|stopped|drop|dropped|replace|replaced|no longer|"
    r"formerly|previously|used to|deprecated|rejected|banned|forbid|forbids|forbidden)\b",
    re.I,
)
_AFTER = re.compile(
    r"^\W*(?:\w+\W+){0,4}?(is|are|was|were|has been|have been|got)?\s*"
    r"(not|never|no longer|deprecated|rejected|removed|banned|forbidden|retired|"
    r"abandoned|dropped|discouraged|obsolete|superseded|closed|shut down|turned off|"
    r"declined|refused|turned down|vetoed)\b",
    re.I,
)
_CLAUSE = re.compile(r"[.;:!?\n]|\bbut\b|\bhowever\b|\bwhereas\b", re.I)
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(
    "a an the of to in on at for by with and or is are was were be been do does did what "
    "which who whom whose when where why how that this these those it its our we us you "
    "your i me my they them their he she his her there here should would could can will "
    "shall may might must about into from as any some all each per up get me".split()
)


def _occurrences(text: str, phrase: str) -> list[int]:
    """Start offsets of ``phrase`` in ``text`` (case-insensitive, whole-word at the edges)."""
    p = re.escape(phrase.strip())
    if not p:
        return []
    left = r"(?<!\w)" if phrase.strip()[0].isalnum() else ""
    right = r"(?!\w)" if phrase.strip()[-1].isalnum() else ""
    return [m.start() for m in re.finditer(left + p + right, text, re.I)]


def _negated(text: str, start: int, end: int) -> bool:
    clause_start = 0
    for m in _CLAUSE.finditer(text, 0, start):
        clause_start = m.end()
    if _BEFORE.search(text[clause_start:start]):
        return True
    rest = text[end:]
    stop = _CLAUSE.search(rest)
    return bool(_AFTER.search(rest[: stop.start()] if stop else rest))


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
    if _BEFORE.search(phrase):
        return True
    return any(not _negated(text, s, s + len(phrase)) for s in starts)


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
        if w in _STOP or len(w) < 2:
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
