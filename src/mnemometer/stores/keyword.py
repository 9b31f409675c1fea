"""``keyword``: naive keyword overlap, MemTest's reference adapter made CJK-aware."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from mnemometer.stores._lexical import SavedIndexStore, read_arrays, write_arrays


class KeywordStore(SavedIndexStore):
    """Keyword overlap: score = number of distinct query words found in the memory.

    The MemTest seed's reference behaviour (it split on whitespace, so it found nothing in
    Chinese); here words come from the shared tokeniser, unstemmed, so Chinese works.
    An inverted index gives the same ranking as scanning every memory, only faster.

    Args:
        lang: ``en``, ``zh`` or ``auto`` (from the dataset, else detected).
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
    """

    stem = False

    def _build(self, docs: list[list[str]]) -> None:
        postings: dict[str, list[int]] = defaultdict(list)
        for i, doc in enumerate(docs):
            for tok in set(doc):
                postings[tok].append(i)
        self._postings = {t: np.asarray(v, dtype=np.int64) for t, v in postings.items()}
        self._n = len(docs)

    def _scores(self, tokens: list[str]) -> np.ndarray:
        # One bincount over every matched posting list: a per-token ``scores[docs] += 1``
        # cost twice as much on MemTest's read-back queries (a whole memory's text).
        hit = [d for tok in set(tokens) if (d := self._postings.get(tok)) is not None]
        if not hit:
            return np.zeros(self._n, dtype=np.float64)
        return np.bincount(np.concatenate(hit), minlength=self._n).astype(np.float64)

    def _save_index(self, path: Path) -> None:
        # The postings as one flat array with each token's offset (its vocabulary number).
        tokens = list(self._postings)
        lengths = [len(self._postings[t]) for t in tokens]
        offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        flat = np.concatenate([self._postings[t] for t in tokens] or [np.zeros(0, np.int64)])
        write_arrays(path, {t: i for i, t in enumerate(tokens)}, docs=flat, offsets=offsets)

    def _load_index(self, path: Path, n_docs: int) -> bool:
        vocab, a = read_arrays(path, "docs", "offsets")
        docs, offsets = a["docs"], a["offsets"]
        if len(offsets) != len(vocab) + 1 or (docs.size and int(docs.max()) >= n_docs):
            return False
        self._postings = {t: docs[offsets[i] : offsets[i + 1]] for t, i in vocab.items()}
        self._n = n_docs
        return True
