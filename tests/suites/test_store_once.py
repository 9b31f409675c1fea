"""Every memory is stored exactly once per run, on every path (issue 32 §3).

The documented turn-memory path (``run("retrieval", dataset=ds.with_turn_memories(...))``)
called ``store()`` 838 times for LoCoMo conv-26's 419 turns: once into the run's store and
once into the conversation's own. A store that counts its calls says how many there are.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import seed_file

import mnemometer
from mnemometer.datasets import load_dataset
from mnemometer.stores import register_store, unregister_store
from mnemometer.stores.bm25 import BM25Store


class Counting(BM25Store):
    """bm25 that counts every memory id it is given, over every instance of a run."""

    seen: Counter[str] = Counter()

    def store(self, text: str, metadata: dict) -> None:
        Counting.seen[metadata["memory_id"]] += 1
        super().store(text, metadata)

    def store_many(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        for _, metadata in batch:
            Counting.seen[metadata["memory_id"]] += 1
        super().store_many(batch)


@pytest.fixture(autouse=True)
def counting():
    register_store("counting", Counting)
    Counting.seen = Counter()
    yield Counting.seen
    unregister_store("counting")


def _locomo():
    return load_dataset(seed_file("locomo", "locomo10.json"))


def test_the_turn_memory_path_stores_each_turn_once(tmp_path: Path, counting):
    view = _locomo().with_turn_memories("conv-26")
    r = mnemometer.run("retrieval", "counting", dataset=view, out=tmp_path / "r")
    assert len(counting) == len(view.memories) == 419
    assert set(counting.values()) == {1}
    assert r.summary.counts["memories_stored"] == 419


def test_the_locomo_reader_path_stores_each_turn_once(tmp_path: Path, counting):
    ds = _locomo()
    turns = sum(len(c.memories()) for c in ds.conversations)
    mnemometer.run("retrieval", "counting", dataset=ds, out=tmp_path / "r")
    assert len(counting) == turns and set(counting.values()) == {1}


def test_the_memtest_path_stores_each_version_once(tmp_path: Path, counting):
    ds = load_dataset(seed_file("memtest", "sample_db_100.json"))
    versions = sum(len(m.texts()) for m in ds.memories)
    mnemometer.run("memtest", "counting", dataset=ds, out=tmp_path / "r")
    assert sum(counting.values()) == versions and len(counting) == len(ds.memories)


def test_the_locomo_benchmark_path_stores_each_turn_once_in_parallel(tmp_path: Path, counting):
    from benchmark_helpers import small_locomo

    from mnemometer.llm import LLMSettings
    from mnemometer.testing import FakeLLMServer

    path = small_locomo(tmp_path / "locomo.json", conversations=3, questions=2)
    turns = sum(len(c.memories()) for c in load_dataset(path).conversations)
    with FakeLLMServer() as srv:
        llm = LLMSettings(base_url=srv.base_url, model=srv.model)
        r = mnemometer.run(
            "locomo",
            "counting",
            suite_options={"dataset": str(path)},
            out=tmp_path / "r",
            settings=mnemometer.RunSettings(concurrency=2, llm=llm),
        )
    assert r.summary.counts["errors"] == 0
    assert len(counting) == turns and set(counting.values()) == {1}
