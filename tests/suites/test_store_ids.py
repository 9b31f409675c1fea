"""A store is never given a dataset's ids: each memory gets an opaque id drawn for the run,
and every hit is mapped back before anything is scored (``suites/_store_ids.py``).

Issue 29 §6.1: MemTest's seed files number a cluster's and a chain's memories in a row, so
a store given those ids found a memory's mates by id alone. In the retrieval suite, BM25
with its best hit's id-neighbours (within 5) moved up scored recall@5 0.819 instead of
0.678 on sample_db_4875b98 and 0.733 instead of 0.567 on tianlongbabu_db.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from adversaries import AdjacentIdStore, permuted, redealt, renamed
from conftest import seed_file

from mnemometer import resume
from mnemometer.datasets import Memory, load_dataset
from mnemometer.datasets.generate import write_generated
from mnemometer.log import read_items
from mnemometer.runner import run
from mnemometer.stores.bm25 import BM25Store
from mnemometer.suites._store_ids import IDS_FILE, StoreIds


class NeighbourBoost(AdjacentIdStore):
    boost: ClassVar[int] = 5


def _metric(r: Any, name: str, k: int) -> float | None:
    return next(m.value for m in r.metrics if m.name == name and m.k == k)


def _figures(res: Any) -> dict[str, float]:
    return {m.key: m.value for m in res.summary.overall if "latency" not in m.name}


@pytest.mark.parametrize("name", ["sample_db_4875b98.json", "tianlongbabu_db.json"])
def test_id_adjacency_gains_nothing_in_the_retrieval_suite(name: str, tmp_path: Path) -> None:
    ds = load_dataset(seed_file("memtest", name))
    dealt = renamed(ds, redealt(ds).__getitem__)  # the same memories, ids dealt out again
    got = [
        _figures(run("retrieval", NeighbourBoost(), dataset=data, out=tmp_path / label))
        for label, data in (("as-is", ds), ("dealt", dealt))
    ]
    assert got[0] == got[1]


class Recording(BM25Store):
    """BM25 that remembers every id it was given."""

    given: ClassVar[set[str]] = set()

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        Recording.given.add(metadata["memory_id"])
        super().store(text, metadata)

    def store_many(self, items: Any) -> None:
        for text, metadata in items:
            self.store(text, metadata)


@pytest.mark.parametrize("suite", ["retrieval", "memtest"])
def test_a_store_is_given_opaque_ids_and_the_log_keeps_the_datasets(
    suite: str, tmp_path: Path
) -> None:
    path = tmp_path / "d.jsonl"
    write_generated(path, 200, "en", seed=3)
    ds = load_dataset(path)
    Recording.given = set()
    res = run(suite, Recording(), dataset=path, out=tmp_path / "r")
    dataset_ids = {m.id for m in ds.memories}
    assert len(Recording.given) == len(dataset_ids) and not Recording.given & dataset_ids
    assert all(re.fullmatch(r"m[0-9a-f]{16}(-\d+)?", x) for x in Recording.given)
    recorded = json.loads((tmp_path / "r" / IDS_FILE).read_text())
    assert recorded["seed"] == 0 and set(recorded["ids"]) == dataset_ids
    assert set(recorded["ids"].values()) == Recording.given
    hits = {h.id for r in read_items(res.path) for h in r.retrieved}
    assert hits and hits <= dataset_ids  # every hit mapped back before it was scored
    if suite == "memtest":  # list_ids() is mapped back too: the store's claim in our ids
        storage = res.summary.sections["memtest"]["dimensions"]["storage"]
        assert storage["listed"] == storage["stored"]


def test_store_ids_follow_the_seed_and_the_content_only() -> None:
    ds = load_dataset("demo-en")
    ids = StoreIds.draw(ds.memories, seed=0)
    assert StoreIds.draw(ds.memories, seed=0) == ids
    other = StoreIds.draw(ds.memories, seed=1)
    assert not set(other.given.values()) & set(ids.given.values())
    # Reordered or respelled, the same memories get the same ids.
    rename = redealt(ds)
    again = StoreIds.draw(renamed(permuted(ds, "shuffled"), rename.__getitem__).memories)
    assert {m: again.of(rename[m]) for m in ids.given} == ids.given
    # The very same content twice: numbered in the order of the dataset's ids.
    twins = [Memory(id=i, text="the same words") for i in ("b", "a")]
    got = StoreIds.draw(twins)
    assert got.of("a").endswith("-1") and got.of("b").endswith("-2")
    assert got.of("a")[:-2] == got.of("b")[:-2]


class GivesDatasetIds(BM25Store):
    """Answers every search with a dataset id it was never given first, then BM25's hits."""

    def search(self, query: str, top_k: int) -> list[Any]:
        return [{"memory_id": "en01", "score": 99.0}, *super().search(query, top_k)][:top_k]


def test_an_id_the_store_was_never_given_names_no_memory(tmp_path: Path) -> None:
    res = run("retrieval", GivesDatasetIds(), dataset="demo-en", out=tmp_path / "r")
    items = read_items(res.path)
    assert all(r.retrieved[0].id == "?en01" for r in items)
    assert all(r.extra["unknown_ids"] >= 1 for r in items)
    # The queries that want en01: the "en01" the store put first is no hit.
    asked = [r for r in items if "en01" in r.expected]
    assert asked and all(_metric(r, "hit", 1) == 0.0 for r in asked)


def test_a_resume_gives_the_store_the_ids_it_had(tmp_path: Path) -> None:
    out = tmp_path / "r"
    full = run("retrieval", Recording(), dataset="demo-en", out=out)
    # Record another map in the run (as an older draw would be) and cut the run short.
    ds = load_dataset("demo-en")
    StoreIds({m: f"z{i}" for i, m in enumerate(sorted(StoreIds.draw(ds.memories).given))}).write(
        out
    )
    lines = (out / "items.jsonl").read_text().splitlines(keepends=True)
    (out / "items.jsonl").write_text("".join(lines[:3]))
    Recording.given = set()
    resumed = resume(out, system=Recording())
    assert Recording.given == {f"z{i}" for i in range(len(ds.memories))}  # the recorded ones
    assert len(read_items(resumed.path)) == len(read_items(full.path))
