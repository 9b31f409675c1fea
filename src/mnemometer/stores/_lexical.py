"""Shared machinery for in-process stores that index every stored text as a document."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mnemometer._gc import paused
from mnemometer.stores._protocol import Hit
from mnemometer.stores._ties import DEFAULT_TIE_SEED, check_seed, tie_keys
from mnemometer.text import Tokenizer, detect_language, tokenizer

#: Bumped when what :meth:`IndexedStore.save` writes changes; other formats are not loaded.
INDEX_FORMAT = 1
DOCUMENTS_FILE = "documents.json"


class IndexedStore:
    """Base for stores that keep ``(memory_id, text)`` documents and index them on flush.

    Several stylistic versions of one memory are separate documents; hits are collapsed to
    one per memory id (its best-scoring document). Equal scores are ordered by the seeded
    hash of the memory id (``tie_seed``, see :mod:`mnemometer.stores._ties`), never by
    insertion order. Subclasses implement ``_build`` and ``_scores``; the base handles
    locking, lazy indexing and top-k selection.
    """

    #: An empty result means "nothing relevant": lexical stores return only scored matches.
    abstains = True
    #: Stem English words (BM25, TF-IDF); the naive keyword reference does not.
    stem = True

    def __init__(self, lang: str = "auto", tie_seed: int = DEFAULT_TIE_SEED) -> None:
        self.lang = lang
        self.tie_seed = check_seed(tie_seed)
        self._lock = threading.Lock()
        self.reset()

    def resolved_options(self) -> dict[str, Any]:
        """The tie seed in force, for the run log."""
        return {"tie_seed": self.tie_seed}

    def reset(self) -> None:
        """Forget everything."""
        with self._lock:
            self._ids: list[str] = []
            self._texts: list[str] = []
            self._keys = np.zeros(0, dtype=np.uint64)
            self._dirty = True
            self._tokenize: Tokenizer | None = None
            self._lang = self.lang  # the language indexed ("auto" resolved on flush)

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        """Remember ``text`` under ``metadata['memory_id']``."""
        with self._lock:
            self._ids.append(str(metadata["memory_id"]))
            self._texts.append(text)
            self._dirty = True

    def store_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Store every ``(text, metadata)`` pair."""
        with self._lock:
            for text, metadata in items:
                self._ids.append(str(metadata["memory_id"]))
                self._texts.append(text)
            self._dirty = True

    def list_ids(self) -> list[str]:
        """Ids of every memory kept."""
        return list(dict.fromkeys(self._ids))

    def flush(self) -> None:
        """Build the index over everything stored so far."""
        with self._lock:
            if self._dirty:
                lang = self.lang if self.lang != "auto" else detect_language(self._texts)
                self._lang = lang
                self._tokenize = tokenizer(lang, stem=self.stem)
                if self._texts:
                    with paused():  # token lists for every document, none in a cycle
                        self._build([self._tokenize(t) for t in self._texts])
                self._tie_keys()  # now, not in the first (timed) search
                self._dirty = False

    def search(self, query: str, top_k: int) -> list[Hit]:
        """Return at most ``top_k`` memories with a positive score, best first."""
        if self._dirty:
            self.flush()
        if not self._texts or top_k <= 0:
            return []
        assert self._tokenize is not None
        tokens = self._tokenize(query)
        if not tokens:
            return []
        scores = self._scores(tokens)
        return self._top(scores, top_k)

    def _tie_keys(self) -> np.ndarray:
        """The tie key of every document (extended for documents stored since)."""
        keys = self._keys
        if len(keys) < len(self._ids):
            keys = np.concatenate([keys, tie_keys(self._ids[len(keys) :], self.tie_seed)])
            self._keys = keys
        return keys

    def _order(self, idx: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """``idx`` sorted by score (descending), then tie key, then position.

        Position only orders versions of one memory (same id, same key), which are stored
        together in their own order wherever the memory sits in the dataset.
        """
        return idx[np.lexsort((idx, self._tie_keys()[idx], -scores[idx]))]

    def _top(self, scores: np.ndarray, top_k: int) -> list[Hit]:
        # Take enough candidates to survive collapsing versions of the same memory. The
        # candidates are every positive document scoring at least the want-th best score,
        # so a tie across that cut is kept whole (argpartition alone would pick among tied
        # documents by position, i.e. by insertion order).
        want = top_k * 4 + 8
        floor = 0.0
        if scores.size > want:
            negated = -scores  # a new array: partitioned in place, no second copy
            negated.partition(want - 1)
            floor = -negated[want - 1]  # the want-th best score
        cand = (scores >= floor if floor > 0 else scores > 0).nonzero()[0]
        if cand.size == 0:
            return []
        order = self._order(cand, scores)
        hits: list[Hit] = []
        seen: set[str] = set()
        ids, texts = self._ids, self._texts
        # Python ints and floats (``tolist``): indexing a list by numpy scalars is slower.
        for i, score in zip(order.tolist(), scores[order].tolist(), strict=True):
            mid = ids[i]
            if mid in seen:
                continue
            seen.add(mid)
            hits.append(Hit(mid, score, texts[i]))
            if len(hits) == top_k:
                return hits
        if len(hits) < top_k and floor > 0:
            # Rare: many versions collapsed; fall back to a full sort.
            order = self._order(np.flatnonzero(scores > 0), scores)
            hits, seen = [], set()
            for i in order:
                if self._ids[i] not in seen:
                    seen.add(self._ids[i])
                    hits.append(Hit(self._ids[i], float(scores[i]), self._texts[i]))
                    if len(hits) == top_k:
                        break
        return hits

    def _build(self, docs: list[list[str]]) -> None:
        raise NotImplementedError

    def _scores(self, tokens: list[str]) -> np.ndarray:
        raise NotImplementedError


class SavedIndexStore(IndexedStore):
    """An :class:`IndexedStore` that can save its index and load it back (``Persistent``).

    The base writes the documents, the language indexed and the options; subclasses add
    their index's arrays via ``_save_index`` and ``_load_index``.
    """

    def index_options(self) -> dict[str, Any]:
        """What the index depends on besides the texts; a saved index must match them."""
        return {"lang": self.lang, "stem": self.stem, "tie_seed": self.tie_seed}

    def save(self, path: Path) -> None:
        """Write the built index (documents, language, the subclass's arrays) to ``path``."""
        self.flush()
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        with self._lock:
            doc = {
                "format": INDEX_FORMAT,
                "store": type(self).__name__,
                "options": self.index_options(),
                "lang": self._lang,
                "ids": self._ids,
                "texts": self._texts,
            }
            (path / DOCUMENTS_FILE).write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
            if self._texts:
                self._save_index(path)

    def load(self, path: Path) -> bool:
        """Replace the contents with the index saved at ``path``.

        Returns ``False``, leaving the store empty, when there is none, it is unreadable, or
        it was saved by another store class, format or options.
        """
        path = Path(path)
        try:
            doc = json.loads((path / DOCUMENTS_FILE).read_text("utf-8"))
            same = (doc["format"], doc["store"]) == (INDEX_FORMAT, type(self).__name__)
            if not same or doc["options"] != json.loads(json.dumps(self.index_options())):
                return False
            ids, texts = [str(i) for i in doc["ids"]], [str(t) for t in doc["texts"]]
            if len(ids) != len(texts):
                return False
            tokenize = tokenizer(str(doc["lang"]), stem=self.stem)
            with self._lock:
                if texts and not self._load_index(path, len(texts)):
                    raise ValueError("index does not match its documents")
                self._ids, self._texts, self._lang = ids, texts, str(doc["lang"])
                self._keys = np.zeros(0, dtype=np.uint64)
                self._tokenize = tokenize
                self._tie_keys()
                self._dirty = False
            return True
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            self.reset()  # never half loaded
            return False

    def _save_index(self, path: Path) -> None:
        """Write the index ``_build`` made into the directory ``path``."""
        raise NotImplementedError

    def _load_index(self, path: Path, n_docs: int) -> bool:
        """Read what ``_save_index`` wrote; ``False`` (or an error) when it does not fit."""
        raise NotImplementedError


VOCAB_FILE = "vocab.json"


def write_arrays(path: Path, vocab: dict[str, int], **arrays: np.ndarray) -> None:
    """Write a vocabulary (JSON) and named arrays (``.npy``, no pickles) into ``path``."""
    (path / VOCAB_FILE).write_text(json.dumps(vocab, ensure_ascii=False), "utf-8")
    for name, arr in arrays.items():
        np.save(path / f"{name}.npy", np.asarray(arr), allow_pickle=False)


def read_arrays(path: Path, *names: str) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """What :func:`write_arrays` wrote (raises when a file is missing or unreadable)."""
    vocab = {str(t): int(i) for t, i in json.loads((path / VOCAB_FILE).read_text("utf-8")).items()}
    return vocab, {n: np.load(path / f"{n}.npy", allow_pickle=False) for n in names}
