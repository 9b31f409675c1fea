"""genome-memory (GENOME) as a mnemometer store: its Memory facade and its own search.

genome-memory (PyPI ``genome-memory``, repository NORTHTEKDevs/genome) stores each message
as one embedding, no LLM in the write path, and searches by cosine similarity (``dense``,
its default), BM25 + dense fusion (``hybrid``) or an entity graph (``graph``). This adapter
gives it the turns, asks ``Memory.search`` and returns what that returns, in its order.

Its default embedder is ``sentence-transformers/all-MiniLM-L6-v2``, a hub name; here the
same model comes from mnemometer's packaged copy (``mnemometer.embeddings``), loaded by path
with the hub offline, through genome's own ``EmbeddingProvider``.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mnemometer.embeddings import DEFAULT_MODEL, model_path, offline_env
from mnemometer.errors import MnemometerError
from mnemometer.stores import Hit

__all__ = ["GenomeStore", "locomo_date"]

MODES = ("dense", "hybrid", "graph")
_USER = "mnemometer"  # genome scopes every memory by user; one scope per store


def locomo_date(timestamp: str) -> str:
    """An ISO timestamp written as LoCoMo writes a session date (``1:56 pm on 8 May, 2023``).

    genome's LoCoMo scripts embed each turn as ``[<session date>] <speaker>: <text>`` with
    the dataset's own date string; the suite hands the date as ISO 8601, so it is written
    back in that form. A value that is not ISO 8601 is used as given.
    """
    try:
        t = datetime.fromisoformat(timestamp)
    except ValueError:
        return timestamp
    hour = t.hour % 12 or 12
    return f"{hour}:{t.minute:02d} {'am' if t.hour < 12 else 'pm'} on {t.day} {t:%B}, {t.year}"


class GenomeStore:
    """GENOME (genome-memory 1.2.1): ``Memory.search`` (dense cosine by default), fully local.

    Args:
        model: ``minilm`` (mnemometer's packaged all-MiniLM-L6-v2, genome's default model)
            or the directory of a sentence-transformers model. Never a hub name: genome
            would download it.
        mode: genome's search mode: ``dense`` (its default), ``hybrid`` (BM25 + dense,
            reciprocal rank fusion) or ``graph`` (entity graph; without entity extraction,
            which needs an LLM, genome falls back to dense).
        dated: embed each turn as ``[<session date>] <text>``, as genome's LoCoMo
            scripts do (``benchmarks/retrieval_quality.py``, ``retrieval_improve.py``);
            ``false`` embeds the text as given. Needs ``metadata['timestamp']``; a memory
            without one is embedded as given.

    CLI: ``-S model=/path/to/model``, ``-S mode=hybrid``, ``-S dated=false``.

    Raises:
        MnemometerError: an unknown mode, or a model that is not a local directory.
    """

    #: Dense search ranks everything; an empty result never means "nothing relevant".
    abstains = False

    def __init__(self, model: str = DEFAULT_MODEL, mode: str = "dense", dated: bool = True) -> None:
        if mode not in MODES:
            raise MnemometerError(
                f"genome: mode {mode!r} is not one of genome's search modes; "
                f"use -S mode=dense (its default), hybrid or graph"
            )
        self.mode = mode
        self.dated = bool(dated)
        self.model = model_path(model)  # a directory, or a MnemometerError naming the fix
        offline_env()  # before genome imports sentence-transformers
        from genome import Memory  # noqa: F401  (fail here, not at the first store)
        from genome.embeddings import EmbeddingProvider

        with warnings.catch_warnings():  # genome calls a since-renamed sentence-transformers method
            warnings.simplefilter("ignore", FutureWarning)
            self._embed = EmbeddingProvider(model_name=self.model)
        self._lock = threading.Lock()
        self._mem: Any = None
        self.reset()

    def resolved_options(self) -> dict[str, Any]:
        """Options as resolved (the model directory loaded), for the run log."""
        from importlib.metadata import version

        return {
            "model": self.model,
            "mode": self.mode,
            "dated": self.dated,
            "genome_version": version("genome-memory"),  # what is installed, never a guess
        }

    def reset(self) -> None:
        """Forget everything: a new in-memory genome ``Memory`` (SQLite ``:memory:``)."""
        from genome import Memory

        with self._lock:
            if self._mem is not None:
                self._mem.close()
            self._mem = Memory(storage=":memory:", embedding_provider=self._embed)
            self._pending: list[tuple[str, str]] = []  # (memory_id, text as embedded)
            self._texts: dict[str, str] = {}  # memory_id -> text as given
            self._records = 0

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Remember ``text`` under ``metadata['memory_id']`` (searchable after ``flush``)."""
        self.store_many([(text, metadata)])

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Queue every ``(text, metadata)`` pair; ``flush`` embeds them in one batch."""
        with self._lock:
            for text, metadata in items:
                if not isinstance(text, str) or "memory_id" not in (metadata or {}):
                    raise MnemometerError(
                        "genome: store(text, metadata) needs a str text and "
                        f"metadata['memory_id'], got {type(text).__name__} and {metadata!r:.80}"
                    )
                mid = str(metadata["memory_id"])
                stamp = metadata.get("timestamp")
                shown = f"[{locomo_date(str(stamp))}] {text}" if self.dated and stamp else text
                self._pending.append((mid, shown))
                self._texts[mid] = text

    def flush(self) -> None:
        """Embed what was queued with genome's provider and add it to genome's store.

        Batched as genome's own LoCoMo scripts do (``encode_batch``, then
        ``store.add(MemoryRecord)``), since ``Memory.add`` embeds one text per call; the
        search cache is cleared, as ``Memory.add`` would invalidate it.
        """
        import numpy as np
        from genome.memory.schema import MemoryRecord

        with self._lock:
            if not self._pending:
                return
            ids, shown = zip(*self._pending, strict=True)
            vecs = self._embed.encode_batch(list(shown))
            for mid, text, vec in zip(ids, shown, vecs, strict=True):
                self._mem.store.add(
                    MemoryRecord(
                        content=text,
                        embedding=np.asarray(vec, dtype=np.float32),
                        user_id=_USER,
                        metadata={"memory_id": mid},
                    )
                )
            self._records += len(ids)
            self._pending = []
            self._mem.clear_cache()

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Search with GENOME's ``Memory.search`` in its mode: at most ``top_k`` hits, best first.

        A memory stored more than once comes back once, at its best rank (genome keeps
        each version as its own record).
        """
        if self._pending:
            self.flush()
        if top_k <= 0:
            return []
        # Ask for as many more as there are extra versions, so top_k distinct ids remain.
        extra = self._records - len(self._texts)
        results = self._mem.search(query, user_id=_USER, limit=top_k + extra, mode=self.mode)
        hits: list[Hit] = []
        seen: set[str] = set()
        for r in results:
            mid = str((r.record.metadata or {}).get("memory_id", r.id))
            if mid not in seen:
                seen.add(mid)
                hits.append(Hit(mid, float(r.score), self._texts.get(mid, r.record.content)))
        return hits[:top_k]

    def list_ids(self) -> list[str]:
        """Ids of every memory stored since the last ``reset``."""
        return list(self._texts)

    def close(self) -> None:
        """Close genome's SQLite connection."""
        if self._mem is not None:
            self._mem.close()
            self._mem = None
