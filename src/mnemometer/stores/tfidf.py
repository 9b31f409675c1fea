"""``tfidf``: TF-IDF cosine similarity on a scipy sparse matrix."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from mnemometer.stores._lexical import SavedIndexStore, read_arrays, write_arrays


class TfidfStore(SavedIndexStore):
    """TF-IDF (sublinear tf, smoothed idf, l2-normalised) with cosine similarity.

    The weighting is scikit-learn's ``TfidfVectorizer(sublinear_tf=True)``: tf is
    ``1 + ln(count)``, idf is ``ln((1 + n) / (1 + df)) + 1``, and every row is scaled to
    unit length (a test checks the scores against scikit-learn's). Written on scipy, which
    the core has anyway, so the store needs no 50 MB dependency.

    Args:
        lang: ``en``, ``zh`` or ``auto`` (from the dataset, else detected).
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
    """

    def _build(self, docs: list[list[str]]) -> None:
        from scipy.sparse import csr_matrix

        vocab: dict[str, int] = {}
        indices: list[int] = []
        counts: list[int] = []
        indptr = [0]
        for doc in docs:
            tf = Counter(vocab.setdefault(t, len(vocab)) for t in doc)
            indices.extend(tf)
            counts.extend(tf.values())
            indptr.append(len(indices))
        n = len(docs)
        df = np.bincount(np.asarray(indices, dtype=np.int64), minlength=len(vocab))
        self._vocab = vocab
        self._idf = np.log((1 + n) / (1 + df)) + 1.0
        cols = np.asarray(indices, dtype=np.int64)
        weights = (np.log(np.asarray(counts, dtype=np.float64)) + 1.0) * self._idf[cols]
        matrix = csr_matrix((weights, cols, indptr), shape=(n, max(1, len(vocab))))
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        lengths = np.diff(matrix.indptr)
        matrix.data /= np.repeat(np.where(norms > 0, norms, 1.0), lengths)
        self._matrix = matrix

    def _save_index(self, path: Path) -> None:
        m = self._matrix
        write_arrays(
            path, self._vocab, idf=self._idf, data=m.data, indices=m.indices, indptr=m.indptr
        )

    def _load_index(self, path: Path, n_docs: int) -> bool:
        from scipy.sparse import csr_matrix

        vocab, a = read_arrays(path, "idf", "data", "indices", "indptr")
        if len(a["indptr"]) != n_docs + 1 or len(a["idf"]) != len(vocab):
            return False
        shape = (n_docs, max(1, len(vocab)))
        self._matrix = csr_matrix((a["data"], a["indices"], a["indptr"]), shape=shape)
        self._vocab, self._idf = vocab, a["idf"]
        return True

    def _scores(self, tokens: list[str]) -> np.ndarray:
        tf = Counter(self._vocab[t] for t in tokens if t in self._vocab)
        if not tf:
            return np.zeros(self._matrix.shape[0])
        cols = np.fromiter(tf, np.int64, len(tf))
        q = (np.log(np.fromiter(tf.values(), np.float64, len(tf))) + 1.0) * self._idf[cols]
        q /= np.linalg.norm(q)
        # Cosine of unit vectors: the query's few columns against every row.
        return np.asarray(self._matrix[:, cols] @ q).ravel()
