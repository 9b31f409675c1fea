"""One Okapi BM25 ranking, plugged into every harness ``bench_peers.py`` compares.

Pure standard library, so it adds nothing to any harness's environment, and every harness
runs these same lines: the ranking is identical by construction (``bench_peers.py`` checks
it from each harness's own output all the same).

* Documents are ``Speaker: text`` (one LoCoMo turn each), keyed by the turn's ``dia_id``
  (``D1:3``). Each harness's shim builds that from what its harness hands a store.
* Tokens: lowercase ``[a-z0-9]+`` runs, no stemming, no stop words.
* Okapi BM25 with k1 = 1.2, b = 0.75 and the non-negative idf
  ``ln(1 + (N - df + 0.5) / (df + 0.5))``; each distinct query term counts once.
* The index is built at the first search after a store (a harness that re-ingests per
  question rebuilds it per question: that is its own work).
* Ties keep insertion order; documents scoring 0 are not returned.
"""

from __future__ import annotations

import math
import re

_TOKEN = re.compile(r"[a-z0-9]+")
K1 = 1.2
B = 0.75


def tokens(text: str) -> list[str]:
    """The ranking's tokens of ``text``."""
    return _TOKEN.findall(text.lower())


class SharedBM25:
    """An in-memory Okapi BM25 index over ``(key, text)`` documents."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every document."""
        self.keys: list[str] = []
        self.texts: list[str] = []
        self._docs: list[dict[str, int]] = []
        self._postings: dict[str, list[tuple[int, int]]] | None = None
        self._norm: list[float] = []
        self._n = 0

    def add(self, key: str, text: str) -> None:
        """Index ``text`` under ``key`` (appended; the index is rebuilt at the next search)."""
        counts: dict[str, int] = {}
        for t in tokens(text):
            counts[t] = counts.get(t, 0) + 1
        self.keys.append(key)
        self.texts.append(text)
        self._docs.append(counts)
        self._postings = None

    def _build(self) -> dict[str, list[tuple[int, int]]]:
        postings: dict[str, list[tuple[int, int]]] = {}
        lengths = [sum(d.values()) for d in self._docs]
        avg = (sum(lengths) / len(lengths)) if lengths else 1.0
        for i, counts in enumerate(self._docs):
            for t, tf in counts.items():
                postings.setdefault(t, []).append((i, tf))
        self._norm = [K1 * (1 - B + B * n / (avg or 1.0)) for n in lengths]
        self._n = len(self._docs)
        self._postings = postings
        return postings

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The ``k`` best ``(document index, score)`` pairs, best first."""
        postings = self._postings if self._postings is not None else self._build()
        scores: dict[int, float] = {}
        n = self._n
        for t in dict.fromkeys(tokens(query)):
            plist = postings.get(t)
            if not plist:
                continue
            df = len(plist)
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            norm = self._norm
            for i, tf in plist:
                scores[i] = scores.get(i, 0.0) + idf * tf * (K1 + 1) / (tf + norm[i])
        ranked = sorted(scores.items(), key=lambda p: (-p[1], p[0]))
        return [p for p in ranked[:k] if p[1] > 0]


def dia_id(session: int, index: int) -> str:
    """LoCoMo's ``dia_id`` of the ``index``-th turn (from 0) of session ``session``."""
    return f"D{session}:{index + 1}"
