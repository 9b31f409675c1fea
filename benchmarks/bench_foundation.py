"""Foundation benchmarks (issue: datasets, runner, run log, retrieval suite).

Prints, in one run:
1. harness overhead per query with a no-op store, against a bare loop calling the store
   (the named reference), both inline (no timeout) and with the default per-call timeout;
2. the MemTest Harry Potter set with ``bm25``, end to end through the CLI (process start,
   load, indexing, 130 queries, report), beside ``keyword``;
3. a synthetic 10,000-memory / 5,000-query set with ``bm25`` and ``keyword``, end to end,
   with the ratio and each process's peak memory.

Run: ``.venv/bin/python benchmarks/bench_foundation.py``
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mnemometer import RunSettings, run
from mnemometer._registry import STORES
from mnemometer.datasets import Dataset, DatasetInfo, Memory, Query, save_dataset

REPO = Path(__file__).resolve().parents[1]
HP = REPO.parent / "shared" / "seed-data" / "memtest" / "hp_benchmark_db.json"
CLI = str(Path(sys.executable).with_name("mnemometer"))


class NoOp:
    """A store that does nothing, instantly."""

    def reset(self) -> None: ...
    def store(self, text, metadata) -> None: ...
    def search(self, query, top_k):
        return []


def synthetic(n_mem: int, n_q: int, seed: int = 7) -> Dataset:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(5000)]
    memories = [Memory(id=f"m{i}", text=" ".join(rng.choices(vocab, k=12))) for i in range(n_mem)]
    queries = []
    for j in range(n_q):
        target = rng.randrange(n_mem)
        words = rng.sample(memories[target].text.split(), 4)
        queries.append(Query(id=f"q{j}", text=" ".join(words), relevant_ids=[f"m{target}"]))
    return Dataset(
        info=DatasetInfo(name=f"synthetic-{n_mem}", language="en"),
        memories=memories,
        queries=queries,
    )


class _CpuClock:
    """Progress callback that measures process CPU time from the first to the last item.

    CPU time is what the harness costs; wall time on a shared 2-core machine also counts
    waiting for other processes.
    """

    def __init__(self) -> None:
        self.first: float | None = None
        self.last = 0.0

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        if phase != "items":
            return
        now = time.process_time()
        if self.first is None:
            self.first = now
        self.last = now

    def seconds(self) -> float:
        return self.last - (self.first or self.last)


def overhead(tmp: Path) -> None:
    ds = synthetic(10, 20_000)
    STORES.register("noop-bench", NoOp)
    store = NoOp()
    t0 = time.perf_counter()
    for q in ds.queries:
        store.search(q.text, 20)
    bare = (time.perf_counter() - t0) / len(ds.queries) * 1e6
    for label, timeout in (("inline, no timeout", None), ("worker thread, 60 s timeout", 60.0)):
        progress = _CpuClock()
        res = run(
            "retrieval",
            "noop-bench",
            dataset=ds,
            out=tmp / f"noop-{timeout}",
            settings=RunSettings(timeout=timeout, progress=progress),
        )
        per = res.header.timings["items"] / len(ds.queries) * 1e6
        cpu = progress.seconds() / (len(ds.queries) - 1) * 1e6
        print(
            f"  harness overhead per query ({label}): wall {per - bare:6.1f} µs, "
            f"CPU {cpu - bare:6.1f} µs (bare loop {bare:.2f} µs/query; "
            "target: CPU <= 25 µs, issue 17)"
        )


def cli_run(dataset: Path | str, store: str, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one CLI run in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(
        [CLI, "run", "retrieval", "--dataset", str(dataset), "--store", store]
        + ["--out", str(out), "--format", "none"],
        capture_output=True,
        text=True,
    )
    secs = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"run failed: {p.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return secs, cpu


def main() -> None:
    load = open("/proc/loadavg").read().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(
        f"load average {load} on {len(__import__('os').sched_getaffinity(0))} cores "
        "(wall figures grow with load; CPU figures much less)"
    )
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        print("1. harness overhead (no-op store, 20,000 queries)")
        overhead(tmp)

        if HP.exists():
            print("2. MemTest Harry Potter (1,626 memories, 130 scorable queries), CLI end to end")
            bm, bm_cpu = cli_run(HP, "bm25", tmp / "hp-bm25")
            kw, kw_cpu = cli_run(HP, "keyword", tmp / "hp-kw")
            print(f"  bm25    wall {bm:5.2f} s, CPU {bm_cpu:5.2f} s (target <= 2 s)")
            print(f"  keyword wall {kw:5.2f} s, CPU {kw_cpu:5.2f} s (reference)")
        else:
            print(f"2. skipped: {HP} not found")

        print("3. synthetic 10,000 memories / 5,000 queries, CLI end to end")
        path = save_dataset(synthetic(10_000, 5_000), tmp / "syn10k.jsonl")
        results = {}
        for store in ("bm25", "keyword"):
            # A fresh interpreter per store, so each peak RSS is its own.
            code = (
                "import resource,subprocess,sys,time;t=time.perf_counter();"
                f"subprocess.run([{CLI!r},'run','retrieval','--dataset',{str(path)!r},"
                f"'--store',{store!r},'--out',{str(tmp / store)!r},'--format','none'],"
                "check=True,capture_output=True);"
                "print(time.perf_counter()-t, "
                "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024)"
            )
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout.split()
            results[store] = (float(out[0]), float(out[1]))
        (bs, bmem), (ks, kmem) = results["bm25"], results["keyword"]
        print(f"  bm25    {bs:5.2f} s, peak {bmem:6.0f} MB (target <= 10 s)")
        print(f"  keyword {ks:5.2f} s, peak {kmem:6.0f} MB (reference)")
        print(f"  bm25 / keyword time ratio: {bs / ks:.2f}")


if __name__ == "__main__":
    main()
