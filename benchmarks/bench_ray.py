"""What Ray costs per work unit, against local threads, and what a second worker buys a sweep.

1. Per-unit overhead of the executors, no work in the unit (a no-op), measured as the
   marginal cost per unit between a map of N/10 and one of N units (fixed costs such as
   actor start-up and setup cancel out):
   - reference: ``LocalExecutor`` (threads in this process), concurrency 2;
   - the item unit on Ray: a ``WorkerFn`` on 2 set-up actors;
   - the run unit on Ray: one task per unit.
   Then the same for a real run: retrieval, bm25, the MemTest Harry Potter set (130
   queries) through ``mnemometer.run``, local threads against Ray actors (setup included).
2. A sweep's wall time on a local Ray cluster with 1 worker process, then 2 (``num_cpus``
   1 and 2): 2 systems × 1 dataset × 3 repeats, whole runs as units; the local executor
   (one run after another) as the reference. Twice: CPU-bound stores (bm25, tfidf), which
   a second process can only speed up when a core is free, and a latency-bound store (a
   plug-in that waits 20 ms per search, as a remote system or an LLM does), which it can.

The machine has 2 cores shared with other work: the script prints the load average.

Run: .venv/bin/python benchmarks/bench_ray.py [N] [--sweep-only]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

from mnemometer import RunSettings, run  # noqa: E402
from mnemometer.runner import LocalExecutor, RayExecutor  # noqa: E402
from mnemometer.workflows import sweep  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
HP = REPO.parent / "shared" / "seed-data" / "memtest" / "hp_benchmark_db.json"


def noop(unit):
    return unit


def warm(unit):
    import mnemometer.runner  # noqa: F401  (what a run unit imports first)

    return unit


class NoopWork:
    """A WorkerFn with nothing to set up."""

    def setup(self):
        return {}

    def __call__(self, unit):
        return unit

    def teardown(self):
        pass

    def record_setup(self, timings):
        pass


def timed_map(executor, fn, n: int) -> float:
    seen = []
    t0 = time.perf_counter()
    executor.map(fn, list(range(n)), seen.append, concurrency=2, timeout=60.0)
    assert len(seen) == n and all(d.error is None for d in seen)
    return time.perf_counter() - t0


def marginal(executor, fn, n: int) -> float:
    """Seconds per unit between a map of n // 10 and one of n units (best of 2)."""
    small = min(timed_map(executor, fn, n // 10) for _ in range(2))
    large = min(timed_map(executor, fn, n) for _ in range(2))
    return (large - small) / (n - n // 10)


def per_unit(n: int) -> None:
    import ray

    print("1. per-unit overhead (no-op units, concurrency 2)")
    local = marginal(LocalExecutor(), noop, n)
    print(f"  local threads (reference)   {local * 1e6:9.1f} µs/unit")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        ex = RayExecutor()
        actor = marginal(ex, NoopWork(), n)
        task = marginal(ex, noop, max(200, n // 5))
        print(
            f"  ray, item unit (actors)     {actor * 1e6:9.1f} µs/unit   ratio {actor / local:7.0f}x"
        )
        print(
            f"  ray, run unit (tasks)       {task * 1e6:9.1f} µs/unit   ratio {task / local:7.0f}x"
        )
        if HP.exists():
            for name, executor in (("local threads", None), ("ray actors", ex)):
                out = Path(tempfile.mkdtemp())
                t0 = time.perf_counter()
                settings = RunSettings(concurrency=2, executor=executor)
                res = run("retrieval", "bm25", dataset=HP, out=out / "r", settings=settings)
                wall = time.perf_counter() - t0
                items = res.summary.counts.get("items", 0)
                print(
                    f"  retrieval/bm25/HP, {name:13s} {wall:6.2f} s for {items} items "
                    f"({wall / items * 1e3:6.2f} ms/item, setup included)"
                )
                shutil.rmtree(out, ignore_errors=True)
    finally:
        ray.shutdown()


SLOW_STORE = """
import time


class SlowStore:
    def __init__(self, delay=0.01):
        self.delay, self.docs = float(delay), []

    def reset(self):
        self.docs = []

    def store(self, text, metadata):
        self.docs.append((metadata["memory_id"], set(text.lower().split())))

    def search(self, query, top_k):
        time.sleep(self.delay)  # a remote system's latency: the worker waits, the CPU idles
        words = set(query.lower().split())
        scored = sorted(((len(words & d), i, m) for i, (m, d) in enumerate(self.docs)), reverse=True)
        return [{"memory_id": m, "score": float(s)} for s, _, m in scored[:top_k] if s > 0]
"""


def install_slow_store(root: Path) -> None:
    """A latency-bound store plug-in, visible to this process and to workers it starts."""
    from mnemometer._registry import _group

    root.mkdir(parents=True, exist_ok=True)
    (root / "bench_slow_store.py").write_text(SLOW_STORE)
    info = root / "bench_slow_store-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bench-slow-store\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[mnemometer.stores]\nslow = bench_slow_store:SlowStore\n"
    )
    sys.path.insert(0, str(root))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    _group.cache_clear()


def sweep_scaling() -> None:
    import ray

    if not HP.exists():
        print("2. skipped: the Harry Potter set is not at", HP)
        return
    tmp = Path(tempfile.mkdtemp())
    install_slow_store(tmp / "plugin")
    data = f'[[datasets]]\npath = "{HP}"\nname = "hp"\n'
    sweeps = {
        "CPU-bound (bm25, tfidf)": 'repeats = 3\n[[systems]]\nstore = "bm25"\n'
        '[[systems]]\nstore = "tfidf"\n' + data,
        "latency-bound (a store waiting 20 ms per search)": "repeats = 3\n[[systems]]\n"
        'store = "slow"\nname = "slow-a"\noptions = { delay = 0.02 }\n[[systems]]\n'
        'store = "slow"\nname = "slow-b"\noptions = { delay = 0.021 }\n' + data,
    }
    print("2. sweep wall time: 2 systems x 1 dataset (130 queries) x 3 repeats = 6 whole runs")
    for title, text in sweeps.items():
        path = tmp / "sweep.toml"
        path.write_text(text)
        out = Path(tempfile.mkdtemp(dir=tmp))
        t0 = time.perf_counter()
        sweep(path, out / "local")
        ref = time.perf_counter() - t0
        print(f"  {title}")
        print(f"    local executor, one run after another (reference) {ref:6.2f} s")
        for workers in (1, 2):
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            try:
                ex = RayExecutor()
                # Start the worker processes and import mnemometer in each once.
                ex.map(
                    warm, list(range(workers * 4)), print_nothing, concurrency=workers, timeout=None
                )
                t0 = time.perf_counter()
                sweep(path, out / f"ray{workers}", settings=RunSettings(executor=ex))
                wall = time.perf_counter() - t0
                print(f"    ray, {workers} worker process(es) {wall:37.2f} s ({ref / wall:4.2f}x)")
            finally:
                ray.shutdown()
        print(f"    load average now {os.getloadavg()[0]:.2f}")
    shutil.rmtree(tmp, ignore_errors=True)


def print_nothing(done) -> None:
    del done


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 2000
    load = os.getloadavg()[0]
    print(f"load average {load:.2f} on {os.cpu_count()} cores (wall figures grow with load)")
    if "--sweep-only" not in sys.argv:
        per_unit(n)
    sweep_scaling()


if __name__ == "__main__":
    main()
