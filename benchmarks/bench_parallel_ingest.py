"""Conversations ingested in parallel vs one at a time, for stores that wait on an LLM (issue 32 §4).

    .venv/bin/python benchmarks/bench_parallel_ingest.py [--conversations 2] [--turns 120]
        [--concurrency 2] [--latency 0.05] [--stores extract,langmem,graphiti]

Each store runs a retrieval run over LoCoMo's first conversations (one store per
conversation, ``--turns`` turns of each) at ``--concurrency 1`` and ``--concurrency N`` in
this process, after a warm-up run (a few turns: imports, the embedding model, first-call
costs), in the order 1, N, N, 1, ... over ``--repeat`` pairs, and the ratio of the summed
ingest wall times (the runs' ``index`` timing) is printed. Every store call waits on a real HTTP server on 127.0.0.1, the test
LLM (:func:`mnemometer.testing._extraction.extraction_llm`) answering after
``--latency`` seconds, as a model would:

- ``extract``: defined here, the least a store that extracts can do: one chat completion
  per memory through :class:`mnemometer.llm.LLMClient`, then bm25 over the texts; it
  meters its own calls (``ingest_costs``), so the per-memory columns are checked too;
- ``langmem``, ``graphiti``: the real systems (``[langmem]``, ``[graphiti]``), metered at
  their relays; their own Python work holds the GIL, so they gain less than ``extract``;
- ``cognee``, in its own environment (``make cognee-env``; run this script with that
  environment's python): each conversation's store runs cognee in a worker process of its
  own (its configuration is process-wide); with the instant stand-in its fills are
  CPU-bound (its pipeline and its database processes), so two cores gain little.

Both runs must agree on every item (retrieved ids, scores to 6 places, metrics) and on LLM calls and
tokens per memory: the script exits 1 if they do not. Seconds per memory are each store's
own (what a memory waited), not the wall time divided by memories.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import mnemometer
from mnemometer.datasets import load_dataset
from mnemometer.llm import LLMClient, LLMSettings
from mnemometer.log import read_items
from mnemometer.stores import register_store
from mnemometer.stores._protocol import IngestCost
from mnemometer.stores.bm25 import BM25Store
from mnemometer.testing._extraction import extraction_llm

REPO = Path(__file__).resolve().parents[1]
LOCOMO = REPO.parent / "shared" / "seed-data" / "locomo" / "locomo10.json"
MODULES = {"extract": None, "langmem": "langmem", "graphiti": "graphiti_core", "cognee": "cognee"}


class ExtractStore(BM25Store):
    """bm25 that asks the run's LLM once per memory before it keeps the text."""

    def __init__(self, llm: Any = None, lang: str | None = None) -> None:
        super().__init__(lang=lang or "auto")
        self._client = LLMClient.from_settings(llm)
        self._costs: list[IngestCost] = []
        self._lock = threading.Lock()

    def reset(self) -> None:
        super().reset()
        self._costs = []

    def store(self, text: str, metadata: dict[str, Any]) -> None:
        t0 = time.perf_counter()
        before = self._client.usage
        self._client.chat([{"role": "user", "content": f"Extract the facts: {text}"}])
        used = self._client.usage
        secs = time.perf_counter() - t0
        cost = IngestCost(
            (str(metadata["memory_id"]),),
            seconds=secs,
            llm_calls=1,
            prompt_tokens=used.prompt_tokens - before.prompt_tokens,
            completion_tokens=used.completion_tokens - before.completion_tokens,
            llm_seconds=secs,
            extracted=1,
        )
        with self._lock:
            self._costs.append(cost)
        super().store(text, metadata)

    def store_many(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        for text, metadata in batch:
            self.store(text, metadata)

    def ingest_costs(self) -> list[IngestCost]:
        with self._lock:
            return list(self._costs)

    def close(self) -> None:
        self._client.close()


def _dataset(path: Path, conversations: int, turns: int):
    """The first conversations, each cut to its first ``turns`` turns, with their questions."""
    ds = load_dataset(path)
    convs = []
    for c in ds.conversations[:conversations]:
        sessions, left = [], turns
        for s in c.sessions:
            if left <= 0:
                break
            sessions.append(s.model_copy(update={"turns": s.turns[:left]}))
            left -= len(sessions[-1].turns)
        convs.append(c.model_copy(update={"sessions": sessions}))
    kept = {t.id for c in convs for _, t in c.turns()}
    ids = {c.id for c in convs}
    queries = [
        q.model_copy(update={"relevant_ids": [m for m in q.relevant_ids if m in kept]})
        for q in ds.queries
        if q.conversation_id in ids and any(m in kept for m in q.relevant_ids)
    ]
    return ds.model_copy(update={"conversations": convs, "queries": queries})


def _measured(run_dir: Path) -> list[tuple]:
    return [
        (
            r.item_id,
            r.status,
            [(h.id, round(h.score, 6)) for h in r.retrieved],  # cognee: last bits vary
            [(m.key, m.value) for m in r.metrics if m.name != "latency"],
        )
        for r in read_items(run_dir)
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--conversations", type=int, default=2)
    ap.add_argument("--turns", type=int, default=120, help="turns of each conversation")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--latency", type=float, default=0.05, help="the LLM's seconds per answer")
    ap.add_argument("--stores", default="extract", help="extract, langmem, graphiti, cognee")
    ap.add_argument("--repeat", type=int, default=1, help="pairs of runs (order 1,N,N,1,...)")
    ap.add_argument("--locomo-file", type=Path, default=LOCOMO)
    args = ap.parse_args()
    register_store("extract", ExtractStore)
    ds = _dataset(args.locomo_file, args.conversations, args.turns)
    memories = sum(len(c.memories()) for c in ds.conversations)
    print(
        f"LoCoMo: {len(ds.conversations)} conversations, {memories} turns, {len(ds.queries)} "
        f"questions; LLM latency {args.latency * 1000:.0f} ms"
    )
    print(
        "| store | concurrency | ingest wall s | s / memory | LLM calls / memory | tokens / memory |"
    )
    print("|---|---|---|---|---|---|")
    ok = True
    with extraction_llm(latency=args.latency) as srv, tempfile.TemporaryDirectory() as tmp:
        llm = LLMSettings(base_url=srv.base_url, model=srv.model)
        for store in args.stores.split(","):
            module = MODULES[store]
            if module is not None and importlib.util.find_spec(module) is None:
                print(f"skipped {store}: {module} is not installed", file=sys.stderr)
                continue
            mnemometer.run(  # the warm-up: first-call costs go here
                "retrieval",
                store,
                dataset=_dataset(args.locomo_file, 1, 3),
                out=Path(tmp) / f"{store}-warm",
                settings=mnemometer.RunSettings(llm=llm),
            )
            pair = [1, args.concurrency]
            order = [c for i in range(args.repeat) for c in (pair if i % 2 == 0 else pair[::-1])]
            walls: dict[int, float] = {1: 0.0, args.concurrency: 0.0}
            seen: list[tuple[dict, list]] = []
            for n, c in enumerate(order):
                res = mnemometer.run(
                    "retrieval",
                    store,
                    dataset=ds,
                    out=Path(tmp) / f"{store}-{n}-c{c}",
                    settings=mnemometer.RunSettings(concurrency=c, llm=llm, timeout=None),
                )
                row = res.summary.table("ingest").data[0]
                wall = res.header.timings["index"]
                walls[c] += wall
                seen.append((row, _measured(res.path)))
                print(
                    f"| {store} | {c} | {wall:.2f} | {row['seconds_per_memory']:.3f} "
                    f"| {row['llm_calls_per_memory']:.2f} | {row['tokens_per_memory']:.0f} |",
                    flush=True,
                )
            keys = ("memories", "llm_calls_per_memory", "tokens_per_memory")
            same_items = all(m == seen[0][1] for _, m in seen)
            same_costs = all(r[k] == seen[0][0][k] for r, _ in seen for k in keys)
            ok &= same_items and same_costs
            w1, wn = walls[1], walls[args.concurrency]
            print(
                f"{store}: concurrency {args.concurrency} ingests in {wn / w1:.2f}x the time of "
                f"concurrency 1 ({w1 / wn:.2f}x faster); items identical: {same_items}; "
                f"LLM calls and tokens per memory identical: {same_costs}"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
