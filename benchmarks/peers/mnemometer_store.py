"""mnemometer's shim: the shared BM25 as a store, registered as ``peer-bm25``.

``bench_peers.py`` registers it the way any third-party store plugs in (an entry point in
the ``mnemometer.stores`` group, from a ``.dist-info`` directory it writes beside this
file's directory on ``PYTHONPATH``), so ``mnemometer run retrieval --store peer-bm25``
runs the CLI's own path with nothing else changed.

A turn memory's text is ``Speaker: text`` plus `` [shares <caption>]`` for an image
(LoCoMo's own convention); the other harnesses never see the caption, so it is dropped to
index the same document. The memory id ``conv-26/D1:3`` gives the key ``D1:3``.
"""

from __future__ import annotations

from typing import Any

from shared_bm25 import SharedBM25


class PeerBM25Store:
    """The shared Okapi BM25 (``benchmarks/peers/shared_bm25.py``) as a mnemometer store."""

    def __init__(self) -> None:
        self.index = SharedBM25()
        self.ids: list[str] = []

    def reset(self) -> None:
        """Forget everything."""
        self.index.reset()
        self.ids = []

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Index the turn's ``Speaker: text``."""
        if text.endswith("]") and " [shares " in text:
            text = text.rpartition(" [shares ")[0]
        mid = metadata["memory_id"]
        self.ids.append(mid)
        self.index.add(mid.rpartition("/")[2], text)

    def search(self, query: str, top_k: int = 20) -> list[dict[str, Any]]:
        """The best ``top_k`` turns."""
        return [{"memory_id": self.ids[i], "score": s} for i, s in self.index.search(query, top_k)]
