"""Scoring for typed items: negation-aware assertion checks and ranked-retrieval metrics."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

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


def rank_scores(ranked: Sequence[str], expected: Iterable[str], k: int) -> dict[str, float | None]:
    """recall, MRR and nDCG at ``k`` (binary relevance); ``None`` with no expected ids.

    Unlike Memory Layer, nDCG's ideal DCG uses ``min(|expected|, k)`` positions, not the
    number of hits returned, so returning fewer hits is never rewarded.
    """
    rel = set(expected)
    if not rel:
        return {"recall_at_k": None, "mrr": None, "ndcg": None}
    top = list(dict.fromkeys(ranked))[:k]
    hits = [i for i, mid in enumerate(top) if mid in rel]
    dcg = sum(1.0 / math.log2(i + 2) for i in hits)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), k)))
    return {
        "recall_at_k": len(hits) / len(rel),
        "mrr": 1.0 / (hits[0] + 1) if hits else 0.0,
        "ndcg": dcg / idcg if idcg else 0.0,
    }


def label_recall(expected: Sequence[str], found: Iterable[str]) -> float | None:
    """Share of expected labels (tags, files; trimmed, lowercase) among ``found``."""
    want = {e.strip().lower() for e in expected if e.strip()}
    if not want:
        return None
    have = {f.strip().lower() for f in found}
    return len(want & have) / len(want)
