"""The bm25 store builds bm25s's index itself, vectorised: it must be bm25s's, bit for bit.

Every comparison is against a real ``bm25s.BM25(...).index(...)`` on the same token lists.
If bm25s ever changes its maths, dtypes or layout, these tests fail loudly: that is their
purpose (``BM25Store._build`` replicates bm25s 0.3.16's lucene index; update it, never
loosen the comparison to a tolerance).
"""

from __future__ import annotations

import filecmp
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import seed_file

from mnemometer import Dataset, load_dataset
from mnemometer.datasets.generate import generate
from mnemometer.stores.bm25 import BM25Store


class BuiltByBm25s(BM25Store):
    """The store as it was: token ids handed to bm25s's own ``index()``."""

    def _build(self, docs: list[list[str]]) -> None:
        import bm25s
        from bm25s.tokenization import Tokenized

        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in docs]
        self._bm25 = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        self._bm25.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
        self._vocab = vocab


def _filled(cls: type[BM25Store], ds: Dataset, **options: Any) -> BM25Store:
    store = cls(lang=ds.info.language, **options)
    store.store_many(
        [(v.text, {"memory_id": m.id}) for m in ds.memories for v in (m.versions or [m])]
    )
    store.flush()
    return store


def _docs(ds: Dataset) -> list[list[str]]:
    """Every stored text of ``ds`` tokenised the store's way."""
    store = _filled(BM25Store, ds)
    assert store._tokenize is not None
    return [store._tokenize(t) for t in store._texts]


def _assert_same_index(docs: list[list[str]], k1: float = 1.5, b: float = 0.75) -> None:
    ref, ours = BuiltByBm25s(k1=k1, b=b), BM25Store(k1=k1, b=b)
    ref._build(docs)
    ours._build(docs)
    want, got = ref._bm25, ours._bm25
    for key in ("data", "indices", "indptr"):
        assert got.scores[key].dtype == want.scores[key].dtype, key
        assert np.array_equal(got.scores[key], want.scores[key]), key
    assert type(got.scores["num_docs"]) is int
    assert got.scores["num_docs"] == want.scores["num_docs"] == len(docs)
    assert list(got.vocab_dict.items()) == list(want.vocab_dict.items())  # order too
    assert got.unique_token_ids_set == want.unique_token_ids_set
    assert got.nonoccurrence_array is None and want.nonoccurrence_array is None
    assert ours._vocab == ref._vocab


def test_the_hp_set_gives_bm25s_own_index() -> None:
    docs = _docs(load_dataset(seed_file("memtest", "hp_benchmark_db.json")))
    assert len(docs) > 1000
    _assert_same_index(docs)
    _assert_same_index(docs, k1=0.9, b=0.4)  # the parameters reach the maths


@pytest.mark.parametrize(("lang", "size"), [("en", 2000), ("zh", 300)])
def test_a_generated_set_gives_bm25s_own_index(lang: str, size: int) -> None:
    docs = _docs(generate(size, lang=lang, seed=5))
    assert len(docs) > size  # several versions per memory
    _assert_same_index(docs)


@pytest.mark.parametrize(
    "docs",
    [
        [["owl", "tower"], [], ["owl"]],  # an empty document among others
        [["owl", "owl", "owl", "wand"], ["wand", "owl", "wand"]],  # repeated tokens
        [["a", "b", "a"]],  # a single document
        [["owl", "wand"], ["owl", "wand"], ["owl", "wand"]],  # duplicate documents
        [["x"] * 40 + ["y"], ["y"], ["z", "x"]],  # lengths far from the average
    ],
    ids=["empty-doc", "repeats", "single", "duplicates", "skewed-lengths"],
)
def test_edge_cases_give_bm25s_own_index(docs: list[list[str]]) -> None:
    _assert_same_index(docs)


def test_texts_without_a_token_index_where_bm25s_raises() -> None:
    # bm25s's index() fails on an empty vocabulary (max() of nothing); the store now builds
    # an empty index and finds nothing instead of failing the flush.
    with warnings.catch_warnings(), pytest.raises(ValueError, match="empty"):
        warnings.simplefilter("ignore", RuntimeWarning)  # bm25s divides 0 by 0 first
        BuiltByBm25s()._build([[], []])
    store = BM25Store(lang="en")
    store.store_many([("!!!", {"memory_id": "a"}), ("?", {"memory_id": "b"})])
    store.flush()
    assert store.search("owl", 5) == [] and store._bm25.scores["indptr"].tolist() == [0]


def test_hp_rankings_and_the_saved_index_are_unchanged(tmp_path: Path) -> None:
    ds = load_dataset(seed_file("memtest", "hp_benchmark_db.json"))
    ref, ours = _filled(BuiltByBm25s, ds), _filled(BM25Store, ds)
    for q in ds.queries:
        want = [(h.memory_id, h.score) for h in ref.search(q.text, 20)]
        assert [(h.memory_id, h.score) for h in ours.search(q.text, 20)] == want, q.id
    ref.save(tmp_path / "ref")
    ours.save(tmp_path / "ours")
    names = sorted(p.name for p in (tmp_path / "ref" / "bm25s").iterdir())
    same, diff, errors = filecmp.cmpfiles(
        tmp_path / "ref" / "bm25s", tmp_path / "ours" / "bm25s", names, shallow=False
    )
    assert (diff, errors) == ([], []) and "data.csc.index.npy" in same
    loaded = BM25Store(lang=ds.info.language)
    assert loaded.load(tmp_path / "ours")
    q = ds.queries[0].text
    assert [h.memory_id for h in loaded.search(q, 20)] == [h.memory_id for h in ref.search(q, 20)]
