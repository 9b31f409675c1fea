"""memory-core-eval's shim: ``mceval run --dataset locomo`` with the shared BM25 as adapter.

The smallest adapter its API allows: a ``MemoryAdapter`` (``reset``/``store``/``search``
per namespace) registered in ``mceval.cli.ADAPTERS``, the CLI's own registry, then the
CLI itself runs. It reads LoCoMo from ``$MCEVAL_CACHE_DIR/locomo10.json`` and, as it
does for every question, makes a fresh namespace, stores the whole conversation into it,
searches once and resets it (4 worker threads by default).

Run: ``MCEVAL_CACHE_DIR=DIR python mceval_run.py run --adapter shared-bm25 --dataset
locomo --trace FILE --out-dir DIR``.
"""

from __future__ import annotations

import sys
from datetime import datetime

from mceval import cli
from mceval.adapters.base import Memory, Turn
from shared_bm25 import SharedBM25, dia_id


class SharedBM25Adapter:
    """The shared BM25, one index per namespace; a turn's key is its LoCoMo dia_id."""

    name = "shared-bm25"

    def __init__(self) -> None:
        self.spaces: dict[str, tuple[SharedBM25, list[Turn]]] = {}

    def reset(self, namespace: str) -> None:
        self.spaces.pop(namespace, None)

    def store(self, namespace: str, turn: Turn) -> str:
        index, turns = self.spaces.setdefault(namespace, (SharedBM25(), []))
        session = int(turn.session_id.rpartition("_")[2])  # "conv-26:session_3"
        key = dia_id(session, turn.turn_idx)
        index.add(key, f"{turn.role}: {turn.content}")
        turns.append(turn)
        return key

    def search(
        self, namespace: str, query: str, top_k: int, as_of_date: datetime | None = None
    ) -> list[Memory]:
        index, turns = self.spaces[namespace]
        return [
            Memory(
                id=index.keys[i],
                content=turns[i].content,
                score=s,
                session_id=turns[i].session_id,
                turn_idx=turns[i].turn_idx,
                session_idx=turns[i].session_idx,
            )
            for i, s in index.search(query, top_k)
        ]


if __name__ == "__main__":
    cli.ADAPTERS["shared-bm25"] = lambda **_: SharedBM25Adapter()
    sys.exit(cli.main())
