"""``hybrid``: BM25 and dense candidates fused by weighted reciprocal rank fusion."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from mnemometer.embeddings import DEFAULT_BATCH, DEFAULT_MODEL, MINILM_REQUIRES, is_default
from mnemometer.errors import MnemometerError
from mnemometer.stores._protocol import Hit
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed, tie_key
from mnemometer.stores.bm25 import BM25Store
from mnemometer.stores.dense import DenseStore
from mnemometer.text import detect_language

_MODES = ("auto", "fused", "bm25")


def rrf(
    rankings: Sequence[Sequence[str]], weights: Sequence[float], k: float = 60.0
) -> dict[str, float]:
    """Weighted reciprocal rank fusion: ``score(d) = sum_i w_i / (k + rank_i(d))``, ranks from 1.

    Args:
        rankings: one ranked list of ids per retriever, best first.
        weights: one weight per retriever.
        k: rank offset; larger values flatten the contribution of the top ranks.
    """
    fused: dict[str, float] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for rank, mid in enumerate(ranking, start=1):
            fused[mid] = fused.get(mid, 0.0) + w / (k + rank)
    return fused


def fused_hits(
    found: Sequence[Sequence[Hit]], weights: Sequence[float], k: float, tie_seed: int, top_k: int
) -> list[Hit]:
    """The best ``top_k`` of several retrievers' hits by :func:`rrf`, best first.

    Equal fused scores are ordered by the seeded hash of the memory id; a hit's text is the
    one the first retriever to return it gave.
    """
    fused = rrf([[h.memory_id for h in hits] for hits in found], weights, k)
    texts: dict[str, str] = {}
    for hits in found:
        for h in hits:
            texts.setdefault(h.memory_id, h.text)
    best = sorted(fused.items(), key=lambda kv: (-kv[1], tie_key(kv[0], tie_seed)))[:top_k]
    return [Hit(mid, score, texts.get(mid, "")) for mid, score in best]


class HybridStore:
    """BM25 plus dense retrieval, fused by weighted reciprocal rank fusion (RRF).

    Each retriever returns its best ``depth`` memories; a memory's fused score is
    ``bm25_weight / (rrf_k + rank_bm25) + dense_weight / (rrf_k + rank_dense)`` (a retriever
    that did not return it adds nothing). The packaged MiniLM is English-only, so with it on
    Chinese data (``mode=auto``) the store falls back to BM25 alone and records
    ``mode: bm25`` in the run log's store options.

    Args:
        model: ``minilm`` (packaged) or the directory of a sentence-transformers model.
        mode: ``auto`` (fuse, except BM25 alone for Chinese data with the English-only
            default model), ``fused`` (always fuse) or ``bm25`` (lexical only).
        bm25_weight: weight of the BM25 ranking in the fusion.
        dense_weight: weight of the dense ranking in the fusion.
        rrf_k: RRF rank offset (60 in the original paper).
        depth: candidates taken from each retriever before fusion.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        batch_size: texts per forward pass when indexing.
        lang: ``en``, ``zh`` or ``auto`` (from the dataset, else detected from the texts).
        tie_seed: seed of the hash that orders equal scores, in both halves and in the
            fusion (equal fused scores are common: one rank in one list each).
    """

    requires = MINILM_REQUIRES
    """Optional modules, checked when the name is looked up."""

    abstains = False

    def __init__(
        self,
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        mode: str = "auto",
        bm25_weight: float = 1.0,
        dense_weight: float = 1.0,
        rrf_k: float = 60.0,
        depth: int = 100,
        k1: float = 1.5,
        b: float = 0.75,
        batch_size: int = DEFAULT_BATCH,
        lang: str = "auto",
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        if mode not in _MODES:
            raise MnemometerError(f"hybrid: mode must be one of {', '.join(_MODES)}, got {mode!r}")
        if min(float(bm25_weight), float(dense_weight)) < 0 or float(rrf_k) < 0:
            raise MnemometerError("hybrid: weights and rrf_k must be non-negative")
        if int(depth) < 1:
            raise MnemometerError(f"hybrid: depth must be at least 1, got {depth}")
        self.model = str(model)
        self.requested_mode = mode
        self.weights = (float(bm25_weight), float(dense_weight))
        self.rrf_k = float(rrf_k)
        self.depth = int(depth)
        self.lang = lang
        self.tie_seed = check_seed(tie_seed)
        self.lexical = BM25Store(lang=lang, k1=k1, b=b, tie_seed=self.tie_seed)
        self._dense_args = (model, int(batch_size))
        self._dense: DenseStore | None = None
        self._init_lock = threading.Lock()
        self.mode = self._resolve_mode(lang)

    def _resolve_mode(self, lang: str) -> str:
        """``fused`` or ``bm25`` (``unknown`` until an ``auto`` store sees its texts)."""
        if self.requested_mode != "auto":
            return self.requested_mode
        if lang == "auto":
            return "unknown"
        return "bm25" if lang.startswith("zh") and is_default(self.model) else "fused"

    @property
    def dense(self) -> DenseStore:
        """The dense half, loaded on first use (BM25-only runs never load torch)."""
        with self._init_lock:
            if self._dense is None:
                model, batch = self._dense_args
                self._dense = DenseStore(model=model, batch_size=batch, tie_seed=self.tie_seed)
            return self._dense

    def resolved_options(self) -> dict[str, Any]:
        """The mode actually used (after the language fallback) and the tie seed, for the run log."""
        return {"mode": self.mode, "tie_seed": self.tie_seed}

    def reset(self) -> None:
        """Forget everything."""
        self.lexical.reset()
        if self._dense is not None:
            self._dense.reset()
        self.mode = self._resolve_mode(self.lang)

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Remember ``text`` under ``metadata['memory_id']``."""
        self.store_many([(text, metadata)])

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Store every ``(text, metadata)`` pair in both halves."""
        self.lexical.store_many(items)
        # Chinese with the English-only model never needs the dense half.
        if self.mode != "bm25":
            self.dense.store_many(items)

    def list_ids(self) -> list[str]:
        """Ids of every memory kept."""
        return self.lexical.list_ids()

    def flush(self) -> None:
        """Index both halves; an ``auto`` store decides its mode here if it must."""
        if self.mode == "unknown":
            lang = detect_language(self.lexical._texts)
            self.mode = "bm25" if lang == "zh" and is_default(self.model) else "fused"
        self.lexical.flush()
        if self.mode != "bm25":
            self.dense.flush()

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Return at most ``top_k`` memories by fused rank, best first."""
        if self.mode == "unknown":
            self.flush()
        if top_k <= 0 or not query.strip():
            return []
        depth = max(self.depth, top_k)
        lex = self.lexical.search(query, depth)
        if self.mode == "bm25":
            return lex[:top_k]
        dense = self.dense.search(query, depth)
        return fused_hits([lex, dense], self.weights, self.rrf_k, self.tie_seed, top_k)
