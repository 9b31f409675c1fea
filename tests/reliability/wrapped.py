"""A store to build faulty or fussy stores from: bm25 underneath, ``search`` to override."""

from __future__ import annotations


class WrappedBM25:
    """bm25 behind the three methods (and ``flush``); subclasses change ``search``."""

    def __init__(self, lang: str = "auto") -> None:
        from mnemometer.stores.bm25 import BM25Store

        self.inner = BM25Store(lang=lang)

    def reset(self) -> None:
        self.inner.reset()

    def store(self, text: str, metadata: dict) -> None:
        self.inner.store(text, metadata)

    def flush(self) -> None:
        self.inner.flush()

    def search(self, query: str, top_k: int):
        return self.inner.search(query, top_k)
