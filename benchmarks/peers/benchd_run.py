"""benchd-harness's shim: ``benchd run -b locomo-v1`` with the shared BM25 as adapter.

The smallest adapter its API allows: a ``BaseAdapter`` (``ingest``/``recall``/``reset``)
registered in the CLI's adapter registry, and LoCoMo registered with ``data_path`` (the
documented way to read a local file) under its own slug; then the CLI itself runs. For
every question (it skips category 5) it resets the adapter, ingests the whole
conversation, recalls once, scores the recall text and records a trace; then it signs
the manifest and writes it.

``recall`` returns the ten best turns, one a line, each led by its ``[dia_id]``.

Run: ``BENCHD_LOCOMO=FILE python benchd_run.py run -a shared-bm25 -b locomo-v1 -o DIR``.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from benchd_harness import cli
from benchd_harness.adapters import _BUILTIN_ADAPTERS, BaseAdapter
from benchd_harness.benchmarks import _BUILTIN_BENCHMARKS, LoCoMoBenchmark
from shared_bm25 import SharedBM25

TOP_K = 10


class SharedBM25Adapter(BaseAdapter):
    """The shared BM25 over the ingested turns; a turn's key is its dia_id."""

    def __init__(self) -> None:
        self.index = SharedBM25()

    @property
    def name(self) -> str:
        return "shared-bm25"

    def ingest(self, turns: list[dict[str, Any]]) -> None:
        for turn in turns:
            meta = turn["metadata"]
            self.index.add(meta["dia_id"], f"{meta['speaker']}: {turn['content']}")

    def recall(self, query: str) -> str:
        index = self.index
        return "\n".join(
            f"[{index.keys[i]}] {index.texts[i]}" for i, _ in index.search(query, TOP_K)
        )

    def reset(self) -> None:
        self.index.reset()


if __name__ == "__main__":
    _BUILTIN_ADAPTERS["shared-bm25"] = SharedBM25Adapter
    data = Path(os.environ["BENCHD_LOCOMO"])
    _BUILTIN_BENCHMARKS["locomo-v1"] = functools.partial(LoCoMoBenchmark, data_path=data)
    cli.cli()
