"""Real stores' ingest per memory, and dense indexing per 1,000 memories (issue #17, goal 3).

    .venv/bin/python benchmarks/bench_ingest.py [--memories 100] [--versions 3] [--dense 1000]

1. mem0 (``infer=False``), N memories with V versions each, as a MemTest run stores them.
   "before" re-implements the store's old ingest (mem0 loads its own copy of the model and
   embeds inside every ``add``, one ``add`` per text); "after" is ``Mem0Store.store_many``
   (one batched embedding pass over the shared model, one ``add`` per memory). References
   in the same process: chroma and qdrant over the same embedder. Each store is measured
   twice: cold (it embeds) and warm (the content cache already holds every vector, so the
   figure is the engine's own cost).
2. dense and hybrid indexing per 1,000 memories at several batch sizes, cold, then a
   second store over the same texts with the cache warm (hits, misses counted).

CPU seconds are this process's own; on a shared machine wall time mostly measures the others.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from bench_dense import corpus

from mnemometer.embeddings import load_embedder
from mnemometer.stores import create_store


def timed(fn) -> tuple[float, float]:
    """Wall and CPU seconds of ``fn()``."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def mem0_before(items: list[tuple[str, dict]], workdir: Path) -> tuple[float, float]:
    """The old store's ingest: mem0's own HuggingFace embedder, one ``add`` per text."""
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("MEM0_DIR", str(workdir / "home"))
    import mem0

    emb = load_embedder()
    cfg = {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "bench",
                "embedding_model_dims": emb.dim,
                "path": str(workdir / "qdrant"),
                "on_disk": True,
            },
        },
        "embedder": {
            "provider": "huggingface",
            "config": {"model": emb.path, "embedding_dims": emb.dim, "model_kwargs": {}},
        },
        "llm": {
            "provider": "openai",
            "config": {"model": "x", "api_key": "sk-x", "openai_base_url": "http://127.0.0.1:9/v1"},
        },
        "history_db_path": str(workdir / "history.db"),
    }
    memory = mem0.Memory.from_config(cfg)
    memory.embedding_model.embed("warm up", "search")  # model load is not ingest

    def run() -> None:
        for text, meta in items:
            memory.add(text, user_id="u", metadata=dict(meta), infer=False)

    out = timed(run)
    memory.vector_store.client.close()
    return out


def store_ingest(name: str, items: list[tuple[str, dict]], workdir: Path) -> tuple[float, float]:
    """``store_many`` + ``flush`` of a fresh store in ``workdir``."""
    store = create_store(name, {}, lang="en", workdir=workdir)

    def run() -> None:
        store.store_many(items)
        getattr(store, "flush", lambda: None)()

    out = timed(run)
    getattr(store, "close", lambda: None)()
    return out


def part1(n: int, versions: int, tmp: Path) -> None:
    texts = corpus(n)
    items = [
        (text if v == 0 else f"{text} (version {v + 1})", {"memory_id": f"m{i}"})
        for i, text in enumerate(texts)
        for v in range(versions)
    ]
    emb = load_embedder()
    print(f"1. ingest, {n} memories x {versions} versions = {len(items)} texts, ms per memory")
    rows: dict[str, tuple[float, float]] = {}
    rows["mem0 before (own model, one add per text)"] = mem0_before(items, tmp / "before")
    for warm in (False, True):
        for name in ("chroma", "qdrant", "mem0"):
            emb.cache = {} if not warm else emb.cache
            rows[f"{name} ({'warm: engine only' if warm else 'cold: embeds'})"] = store_ingest(
                name, items, tmp / f"{name}-{warm}"
            )
    for label, (wall, cpu) in rows.items():
        print(f"  {label:44s} wall {wall / n * 1000:8.1f}  CPU {cpu / n * 1000:8.1f}")
    before, after = rows["mem0 before (own model, one add per text)"], rows["mem0 (cold: embeds)"]
    print(
        f"  mem0 after / before: wall {before[0] / after[0]:.1f}x, "
        f"CPU {before[1] / after[1]:.1f}x faster (target >= 5x)"
    )
    for ref in ("chroma", "qdrant"):
        for state in ("cold: embeds", "warm: engine only"):
            m, r = rows[f"mem0 ({state})"], rows[f"{ref} ({state})"]
            print(f"  mem0 / {ref} ({state}): wall {m[0] / r[0]:.2f}x, CPU {m[1] / r[1]:.2f}x")


def part2(n: int, batches: list[int]) -> None:
    texts = corpus(n, seed=23)
    items = [(t, {"memory_id": f"d{i}"}) for i, t in enumerate(texts)]
    emb = load_embedder()
    print(f"2. dense indexing per 1,000 memories ({n} memories), torch threads", end=" ")
    import torch

    print(torch.get_num_threads())
    for b in batches:
        emb.cache = {}
        store = create_store("dense", {"batch_size": b}, lang="en")
        wall, cpu = timed(lambda s=store: (s.store_many(items), s.flush()))
        print(
            f"  dense, batch {b:4d}, cold  wall {wall / n * 1000:7.2f} s  CPU {cpu / n * 1000:7.2f} s"
        )
    hits, misses = emb.cache_hits, emb.cache_misses
    store = create_store("hybrid", {}, lang="en")
    wall, cpu = timed(lambda: (store.store_many(items), store.flush()))
    print(
        f"  hybrid, warm cache          wall {wall / n * 1000:7.2f} s  CPU {cpu / n * 1000:7.2f} s"
        f"  ({emb.cache_hits - hits} hits, {emb.cache_misses - misses} misses)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=100, help="memories for part 1 (0: skip)")
    ap.add_argument("--versions", type=int, default=3)
    ap.add_argument("--dense", type=int, default=1000, help="memories for part 2 (0: skip)")
    ap.add_argument("--batches", default="16,32,64,128")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    load_embedder().enable_cache()
    load_embedder().encode_one("warm up")
    if args.memories:
        with tempfile.TemporaryDirectory() as tmp:
            part1(args.memories, args.versions, Path(tmp))
    if args.dense:
        part2(args.dense, [int(b) for b in args.batches.split(",")])


if __name__ == "__main__":
    main()
