"""Ask a suite's memory one question: the library behind ``mnemometer query``.

The store is built the way a run builds it (same registered store, same options, the
suite's seed memories stored the same way), so an agent asking through the memory helper
sees what the harness sees, and the harness can check the answer it recorded.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from mnemometer.datasets._models import Dataset, DatasetInfo
from mnemometer.errors import MnemometerError
from mnemometer.stores._factory import create_store
from mnemometer.suites._store_ids import StoreIds
from mnemometer.suites.items._manifest import load_suite
from mnemometer.suites.retrieval import store_dataset, timed_search

SCHEMA_VERSION = 1


def query_suite(
    suite_dir: str | Path,
    question: str,
    *,
    store: str = "bm25",
    store_options: dict[str, Any] | None = None,
    memories: str | Path | None = None,
    top_k: int = 8,
    seed: int = 0,
) -> dict[str, Any]:
    """Seed ``store`` with the suite's memories and search it for ``question``.

    Args:
        suite_dir: suite directory or ``suite.toml``.
        question: what to ask.
        store: registered store name (a condition's store).
        store_options: options for the store's factory.
        memories: seed memories overriding the manifest's.
        top_k: hits to return.
        seed: the run seed the store's ids are drawn with (a run's default, 0, gives the
            ids, hence the tie order, that run's store had).

    Returns:
        ``{"schema_version", "question", "store", "top_k", "results": [{"id", "score",
        "text", "tags"}]}``.

    Raises:
        MnemometerError: bad suite, no memories, unknown store, empty question.
    """
    if not question.strip():
        raise MnemometerError("the question is empty")
    if top_k < 1:
        raise MnemometerError(f"--top-k must be at least 1, got {top_k}")
    loaded = load_suite(suite_dir, memories)
    if not loaded.memories:
        raise MnemometerError(
            f"{loaded.root}: the suite has no memories to query (set "
            "'memories' in suite.toml or pass --memories)"
        )
    ds = Dataset(
        info=DatasetInfo(name=loaded.slug, version=loaded.manifest.suite_version),
        memories=[s.memory for s in loaded.memories],
    )
    by_id = {s.memory.id: s for s in loaded.memories}
    with tempfile.TemporaryDirectory(prefix="mnemometer-query-") as tmp:
        system = create_store(store, store_options or {}, lang=ds.info.language, workdir=Path(tmp))
        ids = StoreIds.draw(ds.memories, seed)
        store_dataset(system, ds, "first", ids=ids)
        hits, ms = timed_search(system, question, top_k, ids=ids)
        close = getattr(system, "close", None)
        if callable(close):
            close()
    results = [
        {
            "id": h.memory_id,
            "score": h.score,
            "text": by_id[h.memory_id].memory.text if h.memory_id in by_id else h.text,
            "tags": list(by_id[h.memory_id].tags) if h.memory_id in by_id else [],
        }
        for h in hits
    ]
    return {
        "schema_version": SCHEMA_VERSION,
        "suite": loaded.manifest.name,
        "question": question,
        "store": store,
        "top_k": top_k,
        "latency_ms": ms,
        "results": results,
    }
