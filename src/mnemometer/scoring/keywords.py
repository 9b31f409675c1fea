"""Keyword grading of one reply: the seed's 1.0 / 0.5 / 0.0, hard to fool.

Tokens (:mod:`mnemometer.scoring.tokens`) are whole words, with e-mails, times, weekdays,
months and numbers canonical; :mod:`mnemometer.scoring.phrasing` first respells times the
tokenizer does not read ("Mon 14h" and "Monday, 2 in the afternoon" are ``monday 14:00``).
A reply scores **1.0** when it asserts every required keyword within the word limit,
**0.5** when it does so at more length, and **0.0** otherwise. What fails a reply, in the
order checked (``TurnGrade.reason``):

``forbidden`` / ``competitor``
    It asserts a forbidden keyword, a competing value the scenario offers (the old
    employer, the other chain), or another value of an exact answer's kind (another
    e-mail, time, weekday, month or number). A value the reply marks as former or denies
    ("Amazon (formerly Google)", "not Hilton") is not asserted, so it does not count.
``negated`` / ``missing``
    A required keyword is only mentioned under a negation ("Not Amazon.", "Amazon is
    false.", "Hardly Gold.", "Amazon (not really).") or not at all. Negation is
    :func:`mnemometer.scoring.assertions.negated`, the items suite's test, reading the
    reply with :mod:`~mnemometer.scoring.phrasing`'s extra cues.
``order``
    ``ordered`` keywords out of order.
``hedge``
    An open answer (a name, place, brand, tier, step) listed beside other short items
    that the conversation never mentioned and the grade does not allow ("Amazon, Apple,
    Meta"), or any answer offered beside an unnamed alternative ("Amazon or some other big
    tech company"): a shotgun of candidates is not an answer.

A confidence hedge ("Maybe Amazon?", "Amazon, I'm not sure", "No idea, maybe Amazon")
says how sure the reply is, not which value it gives: it is graded as the answer it
hedges, its words counted against the limit.

Only ``missing`` can be rescued by similarity, and never for an exact answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from mnemometer.scoring.assertions import carries_negation, negated
from mnemometer.scoring.phrasing import (
    cue_spans,
    denies,
    for_negation,
    open_alternative,
    respell,
)
from mnemometer.scoring.tokens import (
    DESCRIPTIVE,
    EXACT_KINDS,
    FILLER,
    NEGATION_WORDS,
    POLARITY,
    Token,
    fold,
    list_items,
    tokenize,
)

__all__ = [
    "PERSONA_MARKERS",
    "TurnGrade",
    "exact_answer",
    "failed",
    "find",
    "grade_keywords",
    "grade_persona",
    "keyword_kind",
    "rescue",
]

PERSONA_MARKERS = ("sir", "ma'am", "madam", "mister", "mr", "mrs", "ms", "miss")
"""Formal forms of address, matched as whole words (never "your name is")."""

_BARE = 4
"""A list item of at most this many tokens is *bare*: a candidate value, not a clause."""


@dataclass(frozen=True, slots=True)
class TurnGrade:
    """The grade of one reply."""

    score: float
    """1.0, 0.5 or 0.0."""
    reason: str
    """``ok``, ``verbose``, ``missing``, ``negated``, ``forbidden``, ``competitor``,
    ``hedge``, ``order``, ``persona-missing``, ``no-marker``, ``rescued`` or ``error``."""
    words: int = 0
    """Whole-word tokens in the reply."""
    missing: tuple[str, ...] = ()
    """Required keywords not found (or found only under a negation)."""
    forbidden: tuple[str, ...] = ()
    """Forbidden keywords asserted."""
    similarity: float | None = None
    """Cosine similarity with this turn's expected answer, when computed."""
    rescued: bool = False
    """True when the similarity rescue turned 0.0 into 0.5."""
    negated: tuple[str, ...] = ()
    """Required keywords mentioned only under a negation."""
    competing: tuple[str, ...] = ()
    """Competing values asserted (``competitor``) or extra candidates listed (``hedge``)."""


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@lru_cache(maxsize=4096)
def _alternatives(keyword: str) -> tuple[tuple[Token, ...], ...]:
    return tuple(tuple(t) for alt in keyword.split("|") if (t := tokenize(alt)))


@lru_cache(maxsize=1024)
def _known(sources: tuple[str, ...]) -> frozenset[str]:
    """Stems of every word of ``sources`` (a turn's expected answer, conversation, ...)."""
    return frozenset(_stem(t.text) for src in sources for t in tokenize(src.replace("|", " ")))


def _matches(needle: Sequence[Token], toks: list[Token]) -> list[int]:
    n = len(needle)
    return [
        i for i in range(len(toks) - n + 1) if all(toks[i + j].matches(needle[j]) for j in range(n))
    ]


def find(keyword: str, toks: list[str]) -> int:
    """Token position where ``keyword`` (``a|b`` alternatives) occurs in ``toks``, or -1.

    Plain string matching on canonical tokens, kept for callers that need no negation.
    """
    hits = [i for alt in _alternatives(keyword) for i in _matches(alt, tokenize(" ".join(toks)))]
    return min(hits) if hits else -1


def keyword_kind(keyword: str) -> str:
    """The kind of answer a keyword asks for.

    ``polarity`` (every alternative a yes/no word), an exact kind (``email``, ``time``,
    ``day``, ``month``, ``number``) or ``word``.
    """
    alts = _alternatives(keyword)
    if alts and all(len(a) == 1 and a[0].text in POLARITY for a in alts):
        return "polarity"
    if alts and len(alts[0]) == 1 and alts[0][0].kind in EXACT_KINDS:
        return alts[0][0].kind
    return "word"


def exact_answer(expected: str, required: Sequence[str] = ()) -> bool:
    """True when similarity cannot judge the answer.

    That is, it holds an e-mail, a time, a weekday, a month or a number, or is a yes/no.
    """
    if any(t.kind in EXACT_KINDS for t in tokenize(expected)):
        return True
    return any(keyword_kind(k) != "word" for k in required) or keyword_kind(expected) != "word"


class _Reply:
    """One reply, tokenised and cut into list items (segments) once."""

    def __init__(self, reply: str) -> None:
        self.toks, self.text, self.segments, self.offered = list_items(respell(fold(reply)))
        # The negation test reads the same offsets with hedges blanked and cues respelt.
        self.negation_text = for_negation(self.text)
        spans = cue_spans(self.text)
        self.cues = {i for i, t in enumerate(self.toks) if any(a <= t.start < b for a, b in spans)}
        self.segment_of = {i: n for n, seg in enumerate(self.segments) for i in seg}
        self.at: dict[str, list[int]] = {}
        for i, t in enumerate(self.toks):
            for value in {t.text, *t.values}:
                self.at.setdefault(value, []).append(i)

    def occurrences(self, keyword: str) -> list[tuple[int, int]]:
        """(start, length) of every occurrence of any alternative, in token positions."""
        found = set()
        for alt in _alternatives(keyword):
            starts = {i for v in {alt[0].text, *alt[0].values} for i in self.at.get(v, ())}
            n = len(alt)
            for i in starts:
                if i + n <= len(self.toks) and all(
                    self.toks[i + j].matches(alt[j]) for j in range(1, n)
                ):
                    found.add((i, n))
        return sorted(found)

    def asserted(self, i: int, n: int) -> bool:
        """Whether the reply asserts the occurrence (not denied, not marked former)."""
        first = self.toks[i]
        if first.text in POLARITY and n == 1:
            # A yes/no answer is denied only by a negation right before it ("not yes"); a
            # "no" followed by a content word in its item is a determiner ("no problem").
            seg = self.segment_of.get(i)
            prev = self.toks[i - 1].text if i and self.segment_of.get(i - 1) == seg else ""
            if prev in NEGATION_WORDS:
                return False
            if first.text in NEGATION_WORDS and seg is not None:
                return all(t <= i or self.toks[t].text in FILLER for t in self.segments[seg])
            return True
        return not negated(self.negation_text, first.start, self.toks[i + n - 1].end)

    def counts(self, i: int, n: int, negative: bool) -> bool:
        """Whether this occurrence of a required keyword answers the question.

        A negative question ("what must it not contain?") is answered by "no meat" or a
        bare "meat", never by "you can eat meat"; any other by an asserted mention.
        """
        if not negative:
            return self.asserted(i, n)
        seg = self.segments[self.segment_of[i]] if i in self.segment_of else []
        alone = all(i <= t < i + n or self.toks[t].text in FILLER for t in seg)
        return alone or not self.asserted(i, n)

    def competing(self, keywords: Iterable[str]) -> list[str]:
        """The keywords the reply asserts somewhere."""
        return [k for k in keywords if any(self.asserted(i, n) for i, n in self.occurrences(k))]


def _facts(
    r: _Reply,
    required: Sequence[str],
    forbidden: Sequence[str],
    competitors: Sequence[str],
    allowed: Sequence[str],
    context: str,
    expected: str,
    negative: bool,
    extra_words: Sequence[str] = (),
) -> tuple[TurnGrade | None, list[int]]:
    """Check the facts of a reply; a failing grade, or ``None`` and keyword positions."""
    words = len(r.toks)
    bad = tuple(r.competing(forbidden))
    if bad:
        return TurnGrade(0.0, "forbidden", words, forbidden=bad), []
    competing = r.competing(competitors)
    # Another value of an exact answer's kind competes: another e-mail, time, day, month.
    want = {
        kind: [alt for alt in _alternatives(k) if len(alt) == 1]
        for k in required
        if (kind := keyword_kind(k)) in EXACT_KINDS
    }
    for i, t in enumerate(r.toks):
        if t.kind in want and not any(t.matches(a[0]) for a in want[t.kind]):
            if r.asserted(i, 1):
                competing.append(t.text)
    if competing:
        return TurnGrade(0.0, "competitor", words, competing=tuple(dict.fromkeys(competing))), []
    positions: list[int] = []
    used: set[int] = set()
    missing: list[str] = []
    denied: list[str] = []
    # "Amazon? No.", "Amazon (not really)": an item that only denies denies the answer
    # before it (a yes/no answer excepted: "No, not really" is a no).
    denial = [seg[0] for seg in r.segments if denies([r.toks[t].text for t in seg])]
    for k in required:
        occ = r.occurrences(k)
        if denial and keyword_kind(k) != "polarity":
            occ_denied = [(i, n) for i, n in occ if any(d > i for d in denial)]
            if occ_denied and len(occ_denied) == len(occ):
                denied.append(k)
                continue
        for i, n in occ:
            used.update(range(i, i + n))
        ok = [i for i, n in occ if r.counts(i, n, negative)]
        if ok:
            positions.append(ok[0])
        elif occ:
            denied.append(k)
        else:
            missing.append(k)
    if denied:
        return TurnGrade(
            0.0, "negated", words, missing=tuple(denied + missing), negated=tuple(denied)
        ), []
    if missing:
        return TurnGrade(0.0, "missing", words, missing=tuple(missing)), []
    extra = _candidates(r, used, required, (expected, context, *required, *allowed, *extra_words))
    if extra:
        return TurnGrade(0.0, "hedge", words, competing=extra), []
    return None, positions


def _candidates(
    r: _Reply, used: set[int], required: Sequence[str], sources: tuple[str, ...]
) -> tuple[str, ...]:
    """Other candidates listed beside the answer (the hedge check); empty when none.

    For every kind of answer, an item offered with "or" that names no value is one ("or
    some other big tech company"). For an open answer, so is a bare item with a word
    nobody said that describes nothing ("Amazon, Apple, Meta"); exact answers have their
    competitors instead. Confidence hedges and denial phrasings ("I'm not sure", "anything
    but") are never candidates.
    """
    free = [(n, seg) for n, seg in enumerate(r.segments) if not used.intersection(seg)]
    for n, seg in free:
        if n in r.offered and open_alternative([r.toks[t].text for t in seg if t not in r.cues]):
            return tuple(r.toks[t].text for t in seg)
    if not any(keyword_kind(k) == "word" for k in required):
        return ()
    known = _known(sources)
    extra = [
        r.toks[t].text
        for n, seg in free
        if len(seg) <= _BARE
        # "your current employer" describes the answer; "or the Hyatt" offers another
        and (n in r.offered or not any(r.toks[t].text in DESCRIPTIVE for t in seg))
        for t in seg
        if r.toks[t].kind == "word"
        and t not in r.cues
        and r.toks[t].text not in FILLER
        and not carries_negation(r.toks[t].text)
        and not known.intersection(_stem(part) for part in r.toks[t].text.split("-"))
        and r.asserted(t, 1)
    ]
    return tuple(dict.fromkeys(extra))


def grade_keywords(
    reply: str,
    required: Sequence[str],
    forbidden: Sequence[str] = (),
    *,
    competitors: Sequence[str] = (),
    allowed: Sequence[str] = (),
    context: str = "",
    expected: str = "",
    negative: bool = False,
    ordered: bool = False,
    max_words: int | None = None,
) -> TurnGrade:
    """The seed's keyword + conciseness grade, made hard to fool (see the module docs).

    Args:
        reply: the agent's reply.
        required: keywords that must be asserted (``a|b`` lists accepted alternatives).
        forbidden: keywords that must not be asserted.
        competitors: other candidate values the scenario offers; asserting one fails.
        allowed: words a right answer may list beside it ("Arizona" after Phoenix).
        context: the conversation so far; words it used are never hedge candidates.
        expected: this turn's reference answer; its words are never hedge candidates.
        negative: the question asks what to exclude, so "no meat" answers it.
        ordered: required keywords must appear in the order given.
        max_words: word limit for the full score.
    """
    r = _Reply(reply)
    fail, positions = _facts(
        r, required, forbidden, competitors, allowed, context, expected, negative
    )
    if fail is not None:
        return fail
    words = len(r.toks)
    if ordered and positions != sorted(positions):
        return TurnGrade(0.0, "order", words)
    if max_words is not None and words > max_words:
        return TurnGrade(0.5, "verbose", words)
    return TurnGrade(1.0, "ok", words)


def grade_persona(
    reply: str,
    required: Sequence[str],
    markers: Sequence[str] = PERSONA_MARKERS,
    forbidden: Sequence[str] = (),
    *,
    competitors: Sequence[str] = (),
    allowed: Sequence[str] = (),
    context: str = "",
    expected: str = "",
) -> TurnGrade:
    """The seed's persona grade: the fact and a formal marker 1.0, the fact only 0.5.

    The fact is checked as in :func:`grade_keywords`; markers are plain whole words ("No,
    sir." is formal, so a negation does not cancel a marker).
    """
    r = _Reply(reply)
    fail, _ = _facts(
        r, required, forbidden, competitors, allowed, context, expected, False, markers
    )
    if fail is not None:
        if fail.reason == "missing":
            return replace(fail, reason="persona-missing")
        return fail
    words = len(r.toks)
    if any(r.occurrences(m) for m in markers):
        return TurnGrade(1.0, "ok", words)
    # With a fact to recall, recalling it without the persona is half right; with no fact,
    # the persona is the whole test.
    return TurnGrade(0.5 if required else 0.0, "no-marker", words)


def rescue(grade: TurnGrade, similarity: float | None, threshold: float | None) -> TurnGrade:
    """Apply the similarity rescue: a 0.0 for *missing* keywords becomes 0.5 when close.

    Only missing keywords can be rescued (a paraphrase); a negated keyword, a competing
    value, a hedge, a forbidden word or a wrong order is a wrong answer however similar it
    reads. The caller passes ``threshold=None`` where the rescue is off (exact answers).
    """
    out = replace(grade, similarity=similarity, rescued=False)
    if (
        grade.score == 0.0
        and grade.reason == "missing"
        and similarity is not None
        and threshold is not None
        and similarity >= threshold
    ):
        return replace(out, score=0.5, reason="rescued", rescued=True)
    return out


def failed(error: str) -> TurnGrade:
    """The grade of a turn whose call failed: a failure, never a missing value."""
    del error
    return TurnGrade(0.0, "error")
