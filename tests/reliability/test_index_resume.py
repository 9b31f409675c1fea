"""A resumed run loads the lexical stores' saved index instead of indexing again (issue 20).

Real bm25s, keyword and tf-idf stores; the suites' own setup, as a resumed run calls it.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from mnemometer.datasets import load_dataset
from mnemometer.datasets.generate import write_generated
from mnemometer.stores import Persistent, create_store
from mnemometer.stores.bm25 import BM25Store
from mnemometer.suites import create_suite, retrieval
from mnemometer.suites._base import RunContext
from mnemometer.suites._index_file import INDEX_DIR
from mnemometer.systems import SystemSpec


@pytest.fixture(autouse=True)
def save_every_index(monkeypatch: pytest.MonkeyPatch) -> None:
    # These 300 memories index in milliseconds, which the suites would not save.
    monkeypatch.setattr(retrieval, "SAVE_INDEX_AFTER", 0.0)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("ds") / "g.jsonl"
    write_generated(path, 300, "en", seed=5)
    return load_dataset(path)


class Counting(BM25Store):
    """bm25 that counts the memories it is given."""

    stored = 0

    def store(self, text: str, metadata: dict) -> None:
        Counting.stored += 1
        super().store(text, metadata)

    def store_many(self, items) -> None:
        Counting.stored += len(items)
        super().store_many(items)


def _items(suite_name: str, run_dir: Path, ds, pending, store=None, **options):
    """Set a suite up as a (resumed) run does and run its items; what they logged."""
    suite = create_suite(suite_name)
    items = suite.plan(ds)
    store = store if store is not None else Counting(**options)
    Counting.stored = 0
    spec = SystemSpec.store("bm25", **options)
    timings = suite.setup(store, ds, RunContext(run_dir, spec, pending=pending))
    todo = [it for it in items if pending is None or it.id in pending]
    lines = []
    for it in todo:
        r = suite.run_item(store, it)
        doc = r if isinstance(r, dict) else r.model_dump(mode="json")
        doc.pop("latency_ms", None)  # the only field a second session may change
        if suite_name == "memtest" and it.id.startswith("forget/"):
            continue  # carries the replay's mean access latency
        lines.append(json.dumps(doc, sort_keys=True, default=str))
    return lines, timings, items


@pytest.mark.parametrize("suite_name", ["retrieval", "memtest"])
def test_a_resume_loads_the_index_and_logs_byte_identical_items(suite_name, dataset, tmp_path):
    full, timings, items = _items(suite_name, tmp_path, dataset, None)
    assert Counting.stored > 0 and "index" in timings and "index_save" in timings
    assert (tmp_path / INDEX_DIR / "key.json").is_file()
    left = frozenset(it.id for it in items[len(items) // 2 :])
    resumed, timings, _ = _items(suite_name, tmp_path, dataset, left)
    assert Counting.stored == 0, "the resume stored memories instead of loading the index"
    assert "index_load" in timings and "index" not in timings
    logged = [it for it in items if suite_name != "memtest" or not it.id.startswith("forget/")]
    want = [line for line, it in zip(full, logged, strict=True) if it.id in left]
    assert resumed == want and resumed


def test_a_corrupt_index_falls_back_to_indexing(dataset, tmp_path):
    full, _, items = _items("retrieval", tmp_path, dataset, None)
    left = frozenset(it.id for it in items)
    # Flip bytes in the middle of bm25s's score matrix: it still loads, with wrong scores.
    data = next((tmp_path / INDEX_DIR / "index").rglob("data.csc.index.npy"))
    raw = bytearray(data.read_bytes())
    raw[-8:] = b"\x7f" * 8
    data.write_bytes(bytes(raw))
    again, timings, _ = _items("retrieval", tmp_path, dataset, left)
    assert Counting.stored > 0 and "index" in timings
    assert again == full
    # ... and a torn key file, and a missing directory.
    (tmp_path / INDEX_DIR / "key.json").write_text("{torn")
    assert _items("retrieval", tmp_path, dataset, left)[0] == full and Counting.stored > 0
    shutil.rmtree(tmp_path / INDEX_DIR)
    assert _items("retrieval", tmp_path, dataset, left)[0] == full and Counting.stored > 0


def test_a_fifo_in_place_of_a_saved_index_file_means_indexing_again(dataset, tmp_path):
    # Issue 30 §6: the resume hashed each saved file through open(), which blocks on a FIFO
    # until a writer comes. Now it is refused unopened, and the run indexes again.
    full, _, items = _items("retrieval", tmp_path, dataset, None)
    data = next((tmp_path / INDEX_DIR / "index").rglob("data.csc.index.npy"))
    data.unlink()
    os.mkfifo(data)
    result: list = []
    left = frozenset(it.id for it in items)
    worker = threading.Thread(
        target=lambda: result.append(_items("retrieval", tmp_path, dataset, left)), daemon=True
    )
    worker.start()
    worker.join(60)
    if worker.is_alive():  # free the blocked reader, then fail
        os.close(os.open(data, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail("the resume blocked on a FIFO in the saved index")
    again, timings, _ = result[0]
    assert Counting.stored > 0 and "index" in timings
    assert again == full


def test_a_changed_store_option_indexes_again(dataset, tmp_path):
    _items("retrieval", tmp_path, dataset, None, k1=1.5)
    items = create_suite("retrieval").plan(dataset)
    left = frozenset(it.id for it in items)
    other, timings, _ = _items("retrieval", tmp_path, dataset, left, k1=0.9)
    assert Counting.stored > 0 and "index" in timings
    fresh, _, _ = _items("retrieval", tmp_path / "fresh", dataset, None, k1=0.9)
    assert other == fresh
    # The store itself refuses an index saved with other options, whatever the key says.
    assert Counting(k1=0.9).load(tmp_path / INDEX_DIR / "index")
    assert not Counting(k1=1.5).load(tmp_path / INDEX_DIR / "index")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["bm25", "keyword", "tfidf"])
def test_a_loaded_store_answers_exactly_as_the_one_saved(name, lang, dataset, tmp_path):
    if lang == "zh":
        write_generated(tmp_path / "zh.jsonl", 200, "zh", seed=2)
        dataset = load_dataset(tmp_path / "zh.jsonl")
    built = create_store(name)
    assert isinstance(built, Persistent)
    for m in dataset.memories:
        for _, text in m.texts():
            built.store(text, {"memory_id": m.id})
    built.save(tmp_path / "idx")
    loaded = create_store(name)
    assert loaded.load(tmp_path / "idx")
    queries = [q.text for q in dataset.queries] + [m.text for m in dataset.memories[:50]]
    for q in queries:
        assert loaded.search(q, 20) == built.search(q, 20), q
    assert not create_store(name, {"tie_seed": 7}).load(tmp_path / "idx")
    (tmp_path / "idx" / "documents.json").write_text("[]")
    assert not loaded.load(tmp_path / "idx") and loaded.search(queries[0], 5) == []


def test_a_resumed_run_rebuilt_from_its_header_loads_the_index(dataset, tmp_path, monkeypatch):
    """Through the runner: the resume's store spec comes from the header, not the caller."""
    from mnemometer.log import read_items
    from mnemometer.runner import resume, run
    from mnemometer.suites import _index_file

    def logged(run_dir):
        return [
            json.dumps(r.model_dump(mode="json", exclude={"latency_ms"}), sort_keys=True)
            for r in read_items(run_dir)
        ]

    opts = {"store": "bm25", "dataset": dataset}
    run("retrieval", **opts, out=tmp_path / "full", suite_options={"versions": "first"})
    assert not (tmp_path / "full" / INDEX_DIR).exists()  # a finished run drops its index
    run_dir = tmp_path / "cut"
    # The run is cut short below, by hand: keep the index a killed run would have left.
    with monkeypatch.context() as m:
        m.setattr(_index_file, "discard_index", lambda run_dir: None)
        run("retrieval", **opts, out=run_dir, suite_options={"versions": "first"})
    lines = (run_dir / "items.jsonl").read_bytes().splitlines(keepends=True)
    (run_dir / "items.jsonl").write_bytes(b"".join(lines[: len(lines) // 2]))
    header = json.loads((run_dir / "header.json").read_text())
    header["status"] = "running"
    (run_dir / "header.json").write_text(json.dumps(header))
    (run_dir / "summary.json").unlink()
    resume(run_dir, dataset=dataset)
    timings = json.loads((run_dir / "header.json").read_text())["timings"]
    assert "index_load" in timings, timings
    assert logged(run_dir) == logged(tmp_path / "full")


def test_only_stores_that_save_an_index_claim_the_capability():
    from mnemometer.stores.dense import DenseStore

    # dense shares the lexical stores' base but saves nothing: it must not look Persistent,
    # or a run would try to save it.
    assert not issubclass(DenseStore, Persistent)
    assert issubclass(BM25Store, Persistent)


@pytest.mark.parametrize("suite_name", ["retrieval", "memtest"])
def test_an_index_built_in_less_than_the_threshold_is_not_saved_and_a_resume_rebuilds_it(
    suite_name, dataset, tmp_path, monkeypatch
):
    monkeypatch.setattr(retrieval, "SAVE_INDEX_AFTER", 60.0)
    first, timings, items = _items(suite_name, tmp_path, dataset, None)
    assert "index" in timings and "index_save" not in timings
    assert not (tmp_path / INDEX_DIR).exists()
    pending = frozenset(it.id for it in items)
    again, timings, _ = _items(suite_name, tmp_path, dataset, pending)
    assert "index" in timings and "index_load" not in timings and Counting.stored > 0
    assert again == first
