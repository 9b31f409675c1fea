"""Shared plumbing for adapters over embedded vector databases (chroma, qdrant, lancedb).

Each adapter embeds with our :class:`~mnemometer.embeddings.Embedder` (the packaged
MiniLM by default), keeps its files in the run directory's ``workdir`` (or in a private
temporary directory that is removed when the store is garbage-collected or closed), and
stores every stylistic version of a memory as its own record tagged with ``memory_id``;
hits are collapsed to one per memory and ordered by the tie rule of
:mod:`mnemometer.stores._ties` (equal scores by the seeded id hash, not by insertion order).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mnemometer.embeddings import DEFAULT_BATCH, DEFAULT_MODEL, Embedder, load_embedder
from mnemometer.errors import MnemometerError
from mnemometer.stores._protocol import Hit
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed, ranked_search


def data_dir(workdir: Path | str | None, name: str, owner: object) -> Path:
    """The directory ``owner`` keeps its files in: ``workdir/name``, else a private temp dir.

    A temporary directory is removed when ``owner`` is garbage-collected.
    """
    if workdir is not None:
        path = Path(workdir) / name
        path.mkdir(parents=True, exist_ok=True)
        return path
    tmp = tempfile.mkdtemp(prefix=f"mnemometer-{name}-")
    weakref.finalize(owner, shutil.rmtree, tmp, True)
    return Path(tmp)


def locked(path: Path, system: str, err: BaseException) -> MnemometerError:
    """The error for a database directory another process holds."""
    return MnemometerError(
        f"{system}: {path} is locked by another process ({str(err)[:160]}); "
        "close that process, or give this run its own directory (--out)"
    )


class BufferedVectorStore:
    """Base: buffer stored texts, embed them in batches on flush, search by one embedding.

    Subclasses name their engine in ``system`` (also the directory below ``workdir``) and
    implement ``_open()`` (connect to :attr:`path`), ``_clear()``,
    ``_insert(rows, vectors)``, ``_query(text, vector, n) -> rows``
    (``(memory_id, score, text)``, best first) and ``_delete(memory_id)``.

    Args:
        model: ``minilm`` (packaged) or the directory of a sentence-transformers model.
        batch_size: texts per forward pass when indexing.
        workdir: the run's store directory (given by the runner); without one the engine
            works in memory, or in a private temporary directory when ``on_disk``.
        tie_seed: seed of the hash that orders equal scores (see ``docs/stores.md``).
    """

    requires: tuple[tuple[str, str], ...] = ()
    """Optional modules, checked when the name is looked up."""

    #: Vector search ranks everything; an empty result never means "nothing relevant".
    abstains = False
    system = "vector store"
    #: The engine has no in-memory mode: without ``workdir`` it gets a temporary directory.
    on_disk = False

    def __init__(
        self,
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        batch_size: int = DEFAULT_BATCH,
        workdir: Path | None = None,
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        self.path: Path | None = None
        if workdir is not None or self.on_disk:
            self.path = data_dir(workdir, self.system, self)
        self.embedder: Embedder = load_embedder(model)
        self.batch_size = int(batch_size)
        self.tie_seed = check_seed(tie_seed)
        self._lock = threading.RLock()
        self._pending: list[tuple[str, str]] = []
        self._ids: dict[str, None] = {}
        self._seq = 0
        self._open()

    def resolved_options(self) -> dict[str, Any]:
        """The embedding model actually loaded and the tie seed, for the run log."""
        return {"model": self.embedder.path, "tie_seed": self.tie_seed}

    def reset(self) -> None:
        """Forget everything."""
        with self._lock:
            self._pending.clear()
            self._ids.clear()
            self._clear()

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Remember ``text`` under ``metadata['memory_id']`` (embedded on flush)."""
        self.store_many([(text, metadata)])

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Remember every ``(text, metadata)`` pair (embedded on flush)."""
        with self._lock:
            for text, metadata in items:
                mid = str(metadata["memory_id"])
                self._pending.append((mid, text))
                self._ids[mid] = None

    def flush(self) -> None:
        """Embed and insert everything stored since the last flush."""
        with self._lock:
            if not self._pending:
                return
            rows = []
            for mid, text in self._pending:
                rows.append((self._seq, mid, text))
                self._seq += 1
            vecs = self.embedder.encode([t for _, _, t in rows], self.batch_size)
            self._insert(rows, vecs)
            self._pending.clear()

    def list_ids(self) -> list[str]:
        """Ids of every memory kept."""
        return list(self._ids)

    def delete(self, memory_id: str) -> None:
        """Forget every version of one memory."""
        if self._pending:
            self.flush()
        with self._lock:
            self._delete(str(memory_id))
            self._ids.pop(str(memory_id), None)

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Return at most ``top_k`` memories, best first."""
        if self._pending:
            self.flush()
        if top_k <= 0 or not query.strip() or not self._ids:
            return []
        vec = self.embedder.encode_one(query)

        def rows(n: int) -> list[tuple[str, float, str]]:
            with self._lock:
                return self._query(query, vec, n)

        # The engine orders tied rows by insertion; ranked_search re-sorts by the tie rule
        # and widens the request while a tie may straddle the cut (rare with cosine scores,
        # common with lancedb's full-text and RRF scores). Bounded by the rows stored.
        return ranked_search(rows, top_k, self.tie_seed, limit=max(self._seq, 1))

    # ---- subclass hooks -----------------------------------------------------------------

    def _open(self) -> None:
        raise NotImplementedError

    def _clear(self) -> None:
        raise NotImplementedError

    def _insert(self, rows: list[tuple[int, str, str]], vecs: np.ndarray) -> None:
        raise NotImplementedError

    def _query(self, text: str, vec: np.ndarray, n: int) -> list[tuple[str, float, str]]:
        raise NotImplementedError

    def _delete(self, memory_id: str) -> None:
        raise NotImplementedError
