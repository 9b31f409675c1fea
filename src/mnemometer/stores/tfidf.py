"""``tfidf``: TF-IDF cosine similarity on scikit-learn."""

from __future__ import annotations

import numpy as np

from mnemometer.stores._lexical import IndexedStore


class TfidfStore(IndexedStore):
    """TF-IDF (sublinear tf, l2-normalised) with cosine similarity, via scikit-learn.

    Args:
        lang: ``en``, ``zh`` or ``auto`` (from the dataset, else detected).
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
    """

    def _build(self, docs: list[list[str]]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        # Documents arrive tokenised; the vectoriser must not re-tokenise them.
        self._vec = TfidfVectorizer(
            analyzer=lambda d: d, sublinear_tf=True, lowercase=False, norm="l2"
        )
        self._matrix = self._vec.fit_transform(docs).tocsr()

    def _scores(self, tokens: list[str]) -> np.ndarray:
        q = self._vec.transform([tokens])
        return np.asarray((self._matrix @ q.T).todense()).ravel()
