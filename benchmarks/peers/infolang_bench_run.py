"""infolang-bench's shim: its LoCoMo loop with the shared BM25 as a backend.

The smallest adapter its API allows: a ``MemoryBackend`` with ``NATIVE_PIPELINE = True``
(``runner.run_benchmark(backend=...)``, the path its own mem0 and zep lanes take: one
``recall`` per question, no query variants or fusion), driven as ``il-bench run locomo
--backend ...`` drives it: provenance, the run, the printed summary, ``summary.json`` and
``per_q.json``. The CLI itself only offers its three backends and refuses a dataset file
whose checksum is not the published one, hence this script.

Run: ``python infolang_bench_run.py DATA_DIR RESULTS_DIR`` (``DATA_DIR/locomo10.json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from infolang_bench.datasets import get_adapter
from infolang_bench.provenance import build_provenance
from infolang_bench.runner import print_summary, run_benchmark
from shared_bm25 import SharedBM25


class SharedBM25Backend:
    """The shared BM25, one index per namespace; a turn's key is its first tag (dia_id)."""

    name = "shared-bm25"
    NATIVE_PIPELINE = True

    def __init__(self) -> None:
        self.spaces: dict[str, tuple[SharedBM25, list[str]]] = {}

    def reset(self, namespace: str) -> None:
        self.spaces[namespace] = (SharedBM25(), [])

    def remember_batch(self, items: list[dict[str, Any]], *, namespace: str) -> list[dict]:
        index, tags = self.spaces.setdefault(namespace, (SharedBM25(), []))
        for item in items:
            index.add(item["tags"][0], item["text"])
            tags.append(",".join(item["tags"]))
        return [{"ok": True} for _ in items]

    def recall(self, query: str, *, k: int, namespace: str, **caps: Any) -> list[dict]:
        index, tags = self.spaces[namespace]
        return [
            {"id": index.keys[i], "text": index.texts[i], "tags": tags[i], "score": s}
            for i, s in index.search(query, k)
        ]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "native_pipeline": True}

    def close(self) -> None:
        self.spaces.clear()


def main() -> int:
    data_dir, results = sys.argv[1], Path(sys.argv[2])
    adapter = get_adapter("locomo")
    backend = SharedBM25Backend()
    print(f"Backend: {backend.name} (native retrieval path)")
    provenance = build_provenance(
        client=None, benchmark="locomo", data_dir=data_dir, health_payload=None, sdk_version=None
    )
    try:
        result = run_benchmark(adapter, data_dir=data_dir, backend=backend, provenance=provenance)
    finally:
        backend.close()
    print_summary(adapter, result["summary"])
    results.mkdir(parents=True, exist_ok=True)
    (results / "locomo.shared-bm25.summary.json").write_text(
        json.dumps(result["summary"], indent=2)
    )
    (results / "locomo.shared-bm25.per_q.json").write_text(
        json.dumps(result["per_question"], indent=2)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
