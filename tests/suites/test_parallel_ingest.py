"""Conversations ingested in parallel (issue 32 §4): ``--concurrency`` of them at once.

A retrieval run over a conversation dataset fills one store per conversation in setup;
with ``--concurrency N`` it fills N at once. What it measures must not change: the same
item results as one at a time, every turn stored exactly once, never more fills in
flight than asked for, and a fill that fails (or an endpoint found down) stops the run as
before.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import seed_file

import mnemometer
from mnemometer.datasets import load_dataset
from mnemometer.log import read_items
from mnemometer.stores import register_store, unregister_store
from mnemometer.stores.bm25 import BM25Store
from mnemometer.suites._ingest import fill_each


class Watched(BM25Store):
    """bm25 that counts each memory id it is given and how many stores fill at once."""

    seen: Counter[str] = Counter()
    active: Counter[int] = Counter()
    most = 0
    lock = threading.Lock()

    def store(self, text: str, metadata: dict) -> None:
        cls = Watched
        with cls.lock:
            cls.seen[metadata["memory_id"]] += 1
            cls.active[id(self)] += 1
            cls.most = max(cls.most, len(+cls.active))
        time.sleep(0.0005)  # a store call that waits, as one on an LLM does
        with cls.lock:
            cls.active[id(self)] -= 1
        super().store(text, metadata)

    def store_many(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        for text, metadata in batch:
            self.store(text, metadata)


@pytest.fixture(autouse=True)
def watched():
    register_store("watched", Watched)
    Watched.seen, Watched.active, Watched.most = Counter(), Counter(), 0
    yield Watched
    unregister_store("watched")


def _locomo(n: int):
    """LoCoMo's first ``n`` conversations with their questions (as the systems table)."""
    ds = load_dataset(seed_file("locomo", "locomo10.json"))
    keep = {c.id for c in ds.conversations[:n]}
    return ds.model_copy(
        update={
            "conversations": ds.conversations[:n],
            "queries": [q for q in ds.queries if q.conversation_id in keep],
        }
    )


def _measured(run_dir: Path) -> list[tuple]:
    """What each item measured, without its timings."""
    return [
        (
            r.item_id,
            r.status,
            r.success,
            [(h.id, h.score) for h in r.retrieved],
            [(m.key, m.value) for m in r.metrics if m.name != "latency"],
        )
        for r in read_items(run_dir)
    ]


def test_parallel_ingest_measures_what_sequential_ingest_measures(tmp_path: Path) -> None:
    ds = _locomo(3)
    turns = sum(len(c.memories()) for c in ds.conversations)
    runs, most, seen = {}, {}, {}
    for c in (1, 2):
        Watched.seen, Watched.most = Counter(), 0
        runs[c] = mnemometer.run(
            "retrieval",
            "watched",
            dataset=ds,
            out=tmp_path / f"c{c}",
            settings=mnemometer.RunSettings(concurrency=c),
        )
        most[c], seen[c] = Watched.most, Watched.seen
    assert _measured(runs[1].path) == _measured(runs[2].path)
    assert len(_measured(runs[1].path)) == len(ds.queries)
    for c in (1, 2):  # every turn stored exactly once, either way
        assert len(seen[c]) == turns and set(seen[c].values()) == {1}
        assert runs[c].summary.counts["memories_stored"] == turns
    # never more fills at once than asked for; with 2, two stores did fill at once
    assert most == {1: 1, 2: 2}
    ingest = [r.summary.table("ingest").data[0] for r in runs.values()]
    assert ingest[0]["memories"] == ingest[1]["memories"] == turns


def test_fill_each_keeps_order_bounds_concurrency_and_raises_the_first_failure() -> None:
    running, most, lock = [0], [0], threading.Lock()
    finished: list[int] = []

    def fill(n: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.01 * (5 - n))  # later conversations finish first
        with lock:
            running[0] -= 1
        return n * n

    assert fill_each(fill, range(5), 3, finished.append) == [0, 1, 4, 9, 16]
    assert most[0] <= 3 and finished == [1, 2, 3, 4, 5]
    assert fill_each(fill, [], 2) == []

    started: list[int] = []

    def fails(n: int) -> int:
        started.append(n)
        if n == 1:
            raise ValueError("conversation 1 failed")
        time.sleep(0.05)
        return n

    with pytest.raises(ValueError, match="conversation 1 failed"):
        fill_each(fails, range(10), 2)
    assert len(started) < 10  # what had not started when it failed never starts


def test_a_fill_runs_under_the_callers_endpoint_watch() -> None:
    from mnemometer import outage

    watch = outage.Outages()
    with outage.watching(watch):
        seen = fill_each(lambda _: outage.current(), range(3), 2)
    assert seen == [watch, watch, watch]
