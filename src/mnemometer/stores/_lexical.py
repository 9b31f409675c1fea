"""Shared machinery for in-process stores that index every stored text as a document."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from mnemometer.stores._protocol import Hit
from mnemometer.text import Tokenizer, detect_language, tokenizer


class IndexedStore:
    """Base for stores that keep ``(memory_id, text)`` documents and index them on flush.

    Several stylistic versions of one memory are separate documents; hits are collapsed to
    one per memory id (its best-scoring document). Subclasses implement ``_build`` and
    ``_scores``; the base handles locking, lazy indexing and top-k selection.
    """

    #: An empty result means "nothing relevant": lexical stores return only scored matches.
    abstains = True
    #: Stem English words (BM25, TF-IDF); the naive keyword reference does not.
    stem = True

    def __init__(self, lang: str = "auto") -> None:
        self.lang = lang
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget everything."""
        with self._lock:
            self._ids: list[str] = []
            self._texts: list[str] = []
            self._dirty = True
            self._tokenize: Tokenizer | None = None

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Remember ``text`` under ``metadata['memory_id']``."""
        with self._lock:
            self._ids.append(str(metadata["memory_id"]))
            self._texts.append(text)
            self._dirty = True

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Store every ``(text, metadata)`` pair."""
        with self._lock:
            for text, metadata in items:
                self._ids.append(str(metadata["memory_id"]))
                self._texts.append(text)
            self._dirty = True

    def list_ids(self) -> list[str]:
        """Ids of every memory kept."""
        return list(dict.fromkeys(self._ids))

    def flush(self) -> None:
        """Build the index over everything stored so far."""
        with self._lock:
            if self._dirty:
                lang = self.lang if self.lang != "auto" else detect_language(self._texts)
                self._tokenize = tokenizer(lang, stem=self.stem)
                if self._texts:
                    self._build([self._tokenize(t) for t in self._texts])
                self._dirty = False

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Return at most ``top_k`` memories with a positive score, best first."""
        if self._dirty:
            self.flush()
        if not self._texts or top_k <= 0:
            return []
        assert self._tokenize is not None
        tokens = self._tokenize(query)
        if not tokens:
            return []
        scores = self._scores(tokens)
        return self._top(scores, top_k)

    def _top(self, scores: np.ndarray, top_k: int) -> list[Hit]:
        positive = np.flatnonzero(scores > 0)
        if positive.size == 0:
            return []
        # Take enough candidates to survive collapsing versions of the same memory; ties are
        # broken by insertion order so rankings are deterministic.
        want = min(positive.size, top_k * 4 + 8)
        cand = positive
        if positive.size > want:
            part = np.argpartition(-scores[positive], want - 1)[:want]
            cand = positive[part]
        order = cand[np.lexsort((cand, -scores[cand]))]
        hits: list[Hit] = []
        seen: set[str] = set()
        for i in order:
            mid = self._ids[i]
            if mid in seen:
                continue
            seen.add(mid)
            hits.append(Hit(mid, float(scores[i]), self._texts[i]))
            if len(hits) == top_k:
                return hits
        if len(hits) < top_k and cand.size < positive.size:
            # Rare: many versions collapsed; fall back to a full sort.
            order = positive[np.lexsort((positive, -scores[positive]))]
            hits, seen = [], set()
            for i in order:
                if self._ids[i] not in seen:
                    seen.add(self._ids[i])
                    hits.append(Hit(self._ids[i], float(scores[i]), self._texts[i]))
                    if len(hits) == top_k:
                        break
        return hits

    def _build(self, docs: list[list[str]]) -> None:
        raise NotImplementedError

    def _scores(self, tokens: list[str]) -> np.ndarray:
        raise NotImplementedError
