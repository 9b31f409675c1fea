"""``bm25``: Okapi BM25 on ``bm25s`` with English stemming or Chinese segmentation."""

from __future__ import annotations

import math
from itertools import chain
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

        # Token ids in first-occurrence order, as bm25s's own ``index`` would be given them;
        # every loop here runs in C (dict.fromkeys, map, fromiter), none per document.
        vocab = {t: i for i, t in enumerate(dict.fromkeys(chain.from_iterable(docs)))}
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        flat = np.fromiter(
            map(vocab.__getitem__, chain.from_iterable(docs)),
            dtype=np.int64,
            count=int(lengths.sum()),
        )
        bm25 = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        _set_index(bm25, _lucene_scores(flat, lengths, len(vocab), bm25), vocab)
        self._bm25 = bm25
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


def _lucene_scores(
    flat: np.ndarray, lengths: np.ndarray, n_vocab: int, bm25: Any
) -> dict[str, Any]:
    """The ``scores`` dict ``bm25s.BM25.index`` builds (lucene), without its per-doc loop.

    bm25s 0.3.16 counts terms with a ``Counter`` and small arrays per document (10% of a
    10k memtest run); here one sort of all ``(token, doc)`` postings does it. The result is
    bit-identical to bm25s's (``tests/stores/test_bm25_build.py`` compares every array with
    a real ``index()``), so saved indexes, ``get_scores`` and rankings do not change.

    Args:
        flat: every document's token ids, concatenated (int64).
        lengths: each document's token count (int64), at least one document.
        n_vocab: vocabulary size; ids are ``0 .. n_vocab - 1``.
        bm25: the ``bm25s.BM25`` whose ``k1``, ``b``, ``dtype`` and ``int_dtype`` apply.

    Returns:
        ``data`` (score per posting), ``indices`` (doc per posting), ``indptr`` (postings
        per token, CSC) and ``num_docs``, with bm25s's dtypes.
    """
    n_docs = len(lengths)
    l_avg = lengths.mean()  # a numpy float64 scalar, as in bm25s
    docs = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    # Sorted token-major then doc-major: exactly the CSC order bm25s's builder produces.
    keys, tf = np.unique(flat * n_docs + docs, return_counts=True)
    tokens, rows = np.divmod(keys, n_docs)
    df = np.bincount(tokens, minlength=n_vocab)
    # idf with Python's math.log, once per distinct document frequency: np.log's SIMD
    # kernels may differ from libm in the last bit, and bm25s calls math.log per token.
    dfs, which = np.unique(df, return_inverse=True)
    idf_of = [_lucene_idf(d, n_docs) if d else 0.0 for d in dfs.tolist()]
    idf = np.asarray(idf_of, dtype=bm25.dtype)[which]
    # bm25s's lucene tfc, tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf), per document with
    # l_avg a float64 scalar, so (numpy 2 promotion) computed in float64 from float32 tf,
    # multiplied by the float32 idf in float64 and only then cast: same operations here.
    tf64 = tf.astype(bm25.dtype).astype(np.float64)
    tfc = tf64 / (bm25.k1 * ((1 - bm25.b) + bm25.b * lengths[rows] / l_avg) + tf64)
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    return {
        "data": (idf[tokens] * tfc).astype(bm25.dtype),
        "indices": rows.astype(bm25.int_dtype),
        "indptr": indptr,
        "num_docs": n_docs,
    }


def _lucene_idf(df: int, n_docs: int) -> float:
    # bm25s.scoring._score_idf_lucene, operation for operation.
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


def _set_index(bm25: Any, scores: dict[str, Any], vocab: dict[str, int]) -> None:
    """Give ``bm25`` the attributes ``index()`` sets, from ``scores`` and our ``vocab``.

    Like ``index(Tokenized(...))``, ``vocab`` gains the empty token ``""`` (an id past the
    matrix; bm25s reserves it for empty queries) unless it has one.
    """
    if "" not in vocab:
        vocab[""] = max(vocab.values(), default=-1) + 1
    bm25.scores = scores
    bm25.vocab_dict = vocab
    bm25.unique_token_ids_set = set(vocab.values())
    bm25.nonoccurrence_array = None  # lucene has no non-occurrence scores
