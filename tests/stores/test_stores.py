from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemometer.errors import MnemometerError, UnknownNameError
from mnemometer.stores import Hit, capabilities, create_store, store_names
from mnemometer.stores._ties import tie_key
from mnemometer.testing import check_store
from mnemometer.text import tokenizer

BUILTIN = ["keyword", "bm25", "tfidf"]


def test_builtins_registered_through_entry_points() -> None:
    assert set(BUILTIN) <= set(store_names())


@pytest.mark.parametrize("name", BUILTIN)
def test_builtin_stores_pass_conformance(name: str) -> None:
    rep = check_store(create_store(name))
    assert rep.ok, str(rep)
    assert {"store_many", "flush", "list_ids", "persistent", "abstains"} <= set(rep.capabilities)
    assert any(c.name.startswith("save and load") and c.ok for c in rep.checks)


@pytest.mark.parametrize("name", BUILTIN)
def test_ranking_prefers_the_matching_memory(name: str) -> None:
    s = create_store(name, lang="en")
    for i, t in enumerate(["cats chase mice", "dogs chase cats", "the stock market fell"]):
        s.store(t, {"memory_id": f"m{i}"})
    hits = s.search("stock market", 3)
    assert hits[0].memory_id == "m2"
    assert all(isinstance(h, Hit) for h in hits)
    assert s.search("zebra", 3) == []  # nothing matches: abstain, not noise


@pytest.mark.parametrize("name", BUILTIN)
def test_chinese_segmentation_finds_words(name: str) -> None:
    s = create_store(name, lang="zh")
    s.store("王芳三月搬到杭州工作", {"memory_id": "a"})
    s.store("李强在北京负责支付团队", {"memory_id": "b"})
    assert s.search("杭州", 2)[0].memory_id == "a"
    assert s.search("支付团队", 2)[0].memory_id == "b"


def test_versions_collapse_to_one_hit_per_memory() -> None:
    s = create_store("bm25", lang="en")
    for t in ["red apples", "apples that are red", "a red apple"]:
        s.store(t, {"memory_id": "same"})
    s.store("green pears", {"memory_id": "other"})
    assert [h.memory_id for h in s.search("red apples", 5)] == ["same"]


def test_auto_language_detection() -> None:
    s = create_store("bm25")  # no lang given: detected from the stored texts
    s.store("张伟在杭州买了龙井茶", {"memory_id": "a"})
    s.store("李娜在上海开会", {"memory_id": "b"})
    assert s.search("龙井茶", 1)[0].memory_id == "a"


def test_tokenizers() -> None:
    assert tokenizer("en")("The runners were running") == ["runner", "run"]
    assert tokenizer("en", stem=False)("The runners") == ["runners"]
    zh = tokenizer("zh")("我在北京大学读书 and running")
    assert "北京" in zh and "run" in zh


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab'' -é_1.\u2019Z\t\n,K\u212a", max_size=16))
def test_english_words_are_runs_with_outer_apostrophes_stripped(text: str) -> None:
    # The definition the saved indexes were built with: [\w']+ runs, apostrophes stripped
    # from both ends, empty and stop words dropped.
    import re

    from mnemometer.text import _EN_STOP

    runs = (w.strip("'") for w in re.findall(r"[\w']+", text.lower()))
    assert tokenizer("en", stem=False)(text) == [w for w in runs if w and w not in _EN_STOP]
    assert tokenizer("en", stem=False)("'Tis Ann's 'rock'n'roll' ''") == [
        "tis",
        "ann's",
        "rock'n'roll",
    ]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from("ab cd ef gh ij".split()), min_size=1, max_size=5),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.sampled_from("ab cd ef gh ij zz".split()), min_size=1, max_size=4),
)
def test_keyword_index_equals_a_naive_scan(docs, query) -> None:
    s = create_store("keyword", lang="en")
    for i, d in enumerate(docs):
        s.store(" ".join(d), {"memory_id": f"m{i}"})
    # Equal scores are ordered by the seeded hash of the memory id, never by position.
    naive = sorted(
        ((len(set(query) & set(d)), i) for i, d in enumerate(docs) if set(query) & set(d)),
        key=lambda x: (-x[0], tie_key(f"m{x[1]}")),
    )
    got = [(int(h.score), int(h.memory_id[1:])) for h in s.search(" ".join(query), 100)]
    assert got == naive


def test_unknown_store_and_bad_option() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'bm25'"):
        create_store("bm52")
    with pytest.raises(MnemometerError, match="no option 'k2'.*did you mean 'k1'"):
        create_store("bm25", {"k2": 1.0})


def test_create_refuses_what_is_not_a_store_or_agent_and_offers_only_set_context(tmp_path) -> None:
    from mnemometer._registry import AGENTS, STORES
    from mnemometer.agents import create_agent_factory

    seen: dict[str, object] = {}

    class OnlySearch:
        def __init__(self, lang: str = "default", workdir: object = "default") -> None:
            seen.update(lang=lang, workdir=workdir)

        def search(self, query, top_k):
            return []

    STORES.register("only-search-test", OnlySearch)
    AGENTS.register("only-search-test", OnlySearch)
    try:
        with pytest.raises(
            MnemometerError,
            match=r"store 'only-search-test' does not implement reset\(\), store\(\)$",
        ):
            create_store("only-search-test", lang="", workdir=tmp_path)
        assert seen == {"lang": "default", "workdir": tmp_path}  # an empty lang is not offered
        with pytest.raises(
            MnemometerError, match=r"agent 'only-search-test' does not implement create\(\)$"
        ):
            create_agent_factory("only-search-test")
        assert seen == {"lang": "default", "workdir": "default"}  # workdir=None is not offered
    finally:
        STORES.unregister("only-search-test")
        AGENTS.unregister("only-search-test")


def test_capabilities_of_a_minimal_store() -> None:
    class Minimal:
        def reset(self): ...
        def store(self, text, metadata): ...
        def search(self, query, top_k):
            return []

    assert capabilities(Minimal()) == []
    rep = check_store(Minimal())
    assert not rep.ok and "exact text not found" in str(rep)


def test_conformance_catches_a_store_whose_load_loses_its_index() -> None:
    from mnemometer.stores.bm25 import BM25Store

    class Forgetful(BM25Store):
        def load(self, path) -> bool:
            super().load(path)
            self.reset()  # claims success, keeps nothing
            return True

    rep = check_store(Forgetful())
    assert not rep.ok and "save and load" in str(rep)


@pytest.mark.parametrize("dataset", ["demo-en", "demo-zh"])
def test_tfidf_scores_are_scikit_learns(dataset: str) -> None:
    # The store reimplements TfidfVectorizer(sublinear_tf=True) on scipy; scikit-learn
    # (a dev dependency) is the independent reference.
    from sklearn.feature_extraction.text import TfidfVectorizer

    from mnemometer.datasets import load_dataset

    ds = load_dataset(dataset)
    s = create_store("tfidf", lang=ds.info.language)
    s.store_many([(m.text, {"memory_id": m.id}) for m in ds.memories])
    s.flush()
    tok = s._tokenize  # the store's own tokeniser
    vec = TfidfVectorizer(analyzer=lambda d: d, sublinear_tf=True, lowercase=False)
    matrix = vec.fit_transform([tok(m.text) for m in ds.memories])
    for q in ds.queries:
        tokens = tok(q.text) + tok(q.text)[:1]  # a repeated token: sublinear tf counts
        want = (matrix @ vec.transform([tokens]).T).toarray().ravel()
        assert s._scores(tokens) == pytest.approx(want, abs=1e-12)


def test_search_results_are_read_as_memtest_dicts_or_hits() -> None:
    """A dict's ``memory_id`` wins over ``id``, even when it is None; any Mapping reads alike."""
    from types import MappingProxyType

    from mnemometer.stores._protocol import coerce_hits

    hit = Hit("m0", 2.0, "kept")
    raw = [
        hit,
        {"memory_id": "m1", "score": 1.5, "content": "seed style"},
        {"id": 7, "text": "by id", "content": "ignored"},
        MappingProxyType({"memory_id": "m3", "score": None, "text": None}),
    ]
    got = coerce_hits(raw, 3)
    assert got == [hit, Hit("m1", 1.5, "seed style"), Hit("7", 0.0, "by id")]
    assert got[0] is hit and got.returned == 4
    assert coerce_hits(raw[3:], 1) == [Hit("m3", 0.0, "")]
    with pytest.raises(TypeError, match="no 'memory_id'"):
        coerce_hits([{"memory_id": None, "id": "m4"}], 1)
    with pytest.raises(ValueError, match="finite"):
        coerce_hits([{"memory_id": "m5", "score": float("nan")}], 1)
