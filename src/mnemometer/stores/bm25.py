"""``bm25``: Okapi BM25 on ``bm25s`` with English stemming or Chinese segmentation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from mnemometer.stores._lexical import SavedIndexStore
from mnemometer.stores._ties import DEFAULT_TIE_SEED


class BM25Store(SavedIndexStore):
    """BM25 (Lucene variant) over every stored text, via bm25s.

    Args:
        lang: ``en``, ``zh`` or ``auto`` (from the dataset, else detected).
        k1: term-frequency saturation.
        b: length normalisation.
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
    """

    def __init__(
        self,
        lang: str = "auto",
        k1: float = 1.5,
        b: float = 0.75,
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        self.k1 = float(k1)
        self.b = float(b)
        super().__init__(lang=lang, tie_seed=tie_seed)

    def _build(self, docs: list[list[str]]) -> None:
        import bm25s
        from bm25s.tokenization import Tokenized

        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in docs]
        self._bm25 = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        self._bm25.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
        self._vocab = vocab

    def index_options(self) -> dict[str, Any]:
        """The base's plus ``k1`` and ``b``."""
        return {**super().index_options(), "k1": self.k1, "b": self.b}

    def _save_index(self, path: Path) -> None:
        # bm25s writes its score matrix as .npy and the vocabulary (ours) as JSON.
        self._bm25.save(path / "bm25s", allow_pickle=False)

    def _load_index(self, path: Path, n_docs: int) -> bool:
        import bm25s

        bm25 = bm25s.BM25.load(path / "bm25s", mmap=False, allow_pickle=False)
        params = (bm25.k1, bm25.b, bm25.method, int(bm25.scores["num_docs"]))
        if params != (self.k1, self.b, "lucene", n_docs):
            return False
        self._bm25 = bm25
        self._vocab = {str(t): int(i) for t, i in bm25.vocab_dict.items()}
        return True

    def _scores(self, tokens: list[str]) -> np.ndarray:
        ids = [self._vocab[t] for t in tokens if t in self._vocab]
        if not ids:
            return np.zeros(len(self._ids), dtype=np.float32)
        return self._bm25.get_scores(ids)
