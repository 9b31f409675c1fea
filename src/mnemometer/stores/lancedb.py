"""``lancedb``: LanceDB embedded, with vector, full-text and hybrid search modes."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from mnemometer._registry import require
from mnemometer.embeddings import DEFAULT_BATCH, DEFAULT_MODEL, MINILM_REQUIRES
from mnemometer.envfile import quiet_libraries
from mnemometer.errors import MnemometerError
from mnemometer.stores._ties import DEFAULT_TIE_SEED, rows_through, sort_rows
from mnemometer.stores._vector import BufferedVectorStore
from mnemometer.text import _CJK_RUN as _CJK
from mnemometer.text import Tokenizer, detect_language, tokenizer

_TABLE = "memories"
_MODES = ("vector", "fts", "hybrid")
_RRF_K = 60  # LanceDB's RRFReranker default


class LanceDBStore(BufferedVectorStore):
    """LanceDB embedded (a directory in the run directory), flat cosine search.

    Modes: ``vector`` (embeddings), ``fts`` (LanceDB's native full-text index) and
    ``hybrid`` (both, fused by reciprocal rank fusion: LanceDB's ``RRFReranker`` formula,
    ``1 / (60 + rank)`` per list with ranks from 1, applied here to lists ordered by the
    tie rule, since LanceDB's own reranker ranks tied rows by insertion order). The full-text index
    is built over text tokenised by our own tokeniser (jieba for Chinese, stemmed words for
    English), so Chinese full-text search works.

    Args:
        mode: ``vector``, ``fts`` or ``hybrid``.
        lang: ``en``, ``zh`` or ``auto`` (from the dataset, else detected from the texts).
        model, batch_size, workdir, tie_seed: see
            :class:`~mnemometer.stores._vector.BufferedVectorStore` (without ``workdir``,
            a temporary directory).
    """

    requires = (("lancedb", "vector"), *MINILM_REQUIRES)
    system = "lancedb"
    on_disk = True

    def __init__(
        self,
        mode: str = "vector",
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        batch_size: int = DEFAULT_BATCH,
        lang: str = "auto",
        workdir: Path | None = None,
        tie_seed: int = DEFAULT_TIE_SEED,
    ) -> None:
        if mode not in _MODES:
            raise MnemometerError(f"lancedb: mode must be one of {', '.join(_MODES)}, got {mode!r}")
        self.mode = mode
        self.lang = lang
        self._tokenize: Tokenizer | None = None
        super().__init__(model, batch_size, workdir, tie_seed)

    def _open(self) -> None:
        quiet_libraries()
        lancedb = require("lancedb", "vector", "the lancedb store")
        self.db = lancedb.connect(str(self.path))
        self._clear()

    def _clear(self) -> None:
        if _TABLE in self._tables():
            self.db.drop_table(_TABLE)
        self.table: Any = None
        self._tokenize = None

    def _tables(self) -> list[str]:
        listed = self.db.list_tables()  # a paged response in recent versions, a list before
        return list(getattr(listed, "tables", listed))

    def _terms(self, text: str) -> str:
        assert self._tokenize is not None
        return " ".join(self._tokenize(text))

    def _insert(self, rows: list[tuple[int, str, str]], vecs: np.ndarray) -> None:
        if self._tokenize is None:
            lang = self.lang if self.lang != "auto" else detect_language(t for _, _, t in rows)
            # The Chinese tokeniser also handles Latin words (as the English one does), so
            # mixed text is covered either way; English data does not pay for jieba.
            mixed = lang == "en" and any(_CJK.search(t) for _, _, t in rows)
            self._tokenize = tokenizer("zh" if mixed else lang)
        data = [
            {
                "seq": seq,
                "memory_id": mid,
                "text": text,
                "terms": self._terms(text),
                "vector": v.tolist(),
            }
            for (seq, mid, text), v in zip(rows, vecs, strict=True)
        ]
        if self.table is None:
            self.table = self.db.create_table(_TABLE, data=data)
        else:
            self.table.add(data)
        if self.mode != "vector":
            self._index_terms()

    def _index_terms(self) -> None:
        """(Re)build the full-text index over the pre-tokenised ``terms`` column."""
        with warnings.catch_warnings():  # its successor API is not stable across versions
            warnings.simplefilter("ignore", DeprecationWarning)
            self.table.create_fts_index(
                "terms",
                replace=True,
                base_tokenizer="whitespace",
                lower_case=False,
                stem=False,
                remove_stop_words=False,
                ascii_folding=False,
                max_token_length=None,
            )

    def _query(self, text: str, vec: np.ndarray, n: int) -> list[Any]:
        if self.table is None:
            return []
        if self.mode == "vector":
            return self._vector_rows(vec, n)
        terms = self._terms(text)
        if not terms:
            return []
        if self.mode == "fts":
            return self._fts_rows(terms, n)
        # Hybrid: each list is cut at n fairly (every row tied with the n-th is fetched, then
        # the tie rule picks), ranked by the tie rule, and fused per row as RRFReranker does.
        limit = self.table.count_rows()
        fused: dict[int, float] = {}
        info: dict[int, tuple[str, str]] = {}
        for fetch in (lambda m: self._vector_rows(vec, m), lambda m: self._fts_rows(terms, m)):
            rows = sort_rows(rows_through(fetch, n, limit=limit), self.tie_seed)[:n]
            for rank, (mid, _, txt, seq) in enumerate(rows, start=1):
                fused[seq] = fused.get(seq, 0.0) + 1.0 / (rank + _RRF_K)
                info[seq] = (mid, txt)
        return [(info[seq][0], score, info[seq][1]) for seq, score in fused.items()]

    def _vector_rows(self, vec: np.ndarray, n: int) -> list[Any]:
        res = self.table.search(vec.tolist()).distance_type("cosine").limit(n).to_list()
        return [(r["memory_id"], 1.0 - r["_distance"], r["text"], r["seq"]) for r in res]

    def _fts_rows(self, terms: str, n: int) -> list[Any]:
        res = self.table.search(terms, query_type="fts").limit(n).to_list()
        return [(r["memory_id"], r["_score"], r["text"], r["seq"]) for r in res]

    def _delete(self, memory_id: str) -> None:
        if self.table is not None:
            quoted = memory_id.replace("'", "''")
            self.table.delete(f"memory_id = '{quoted}'")
            if self.mode != "vector" and self.table.count_rows():
                self._index_terms()
