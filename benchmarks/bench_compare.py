"""compare on two runs of 10,000 items with 10,000 bootstrap resamples (target: <= 5 s).

Writes two real run directories (header + JSONL through the run-log writer), then times
``mnemometer.comparison.compare`` end to end: reading both logs, pairing, McNemar, paired
bootstrap (percentile + BCa) for success and every metric overall and per group, Holm.

References, in the same run, on the same pairs and columns:
  * float32-deviations: the resampling loop shipped before BCa moved to float64 (float32
    products of draw counts with deviations from the mean), timed in full: "before";
  * naive-python: a per-resample, per-column pure-Python loop (how Memory Layer's compare
    bootstraps), timed on a few resamples and extrapolated to 10,000;
  * numpy-per-resample: one numpy draw and column means per resample in a Python loop,
    timed on a subset and extrapolated.

Run: .venv/bin/python benchmarks/bench_compare.py [--items N] [--resamples R]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from mnemometer import stats
from mnemometer.comparison import compare
from mnemometer.log import read_log
from mnemometer.log._schema import DatasetRef, ItemResult, Metric, RunHeader, SystemRef
from mnemometer.log._writer import ItemWriter, write_header

METRICS = ("recall_at_k", "mrr", "ndcg", "assertion_recall", "topic_recall")
TYPES = ("retrieval_qa", "grounded_answer", "adversarial_stale", "resume_quality")
LEVELS = ("easy", "medium", "hard")


def write_run(path: Path, n: int, p_success: float, seed: int, condition: str) -> None:
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True)
    write_header(
        path,
        RunHeader(
            run_id=uuid.uuid4().hex[:12],
            run_group="bench",
            repeat=0,
            suite="items",
            suite_version="1",
            suite_options={"suite_checksum": "x"},
            dataset=DatasetRef(name="bench", version="1", content_hash="h", language="en"),
            system=SystemRef(name=condition, condition=condition, implementation="bench:Bench"),
            config_fingerprint=condition,
            package_version="0",
            python_version="3",
            platform="bench",
            created_at=datetime.now(UTC),
            status="finished",
            item_count=n,
        ),
    )
    w = ItemWriter(path)
    ok = rng.random(n) < p_success
    vals = rng.random((n, len(METRICS)))
    for i in range(n):
        metrics = [Metric(name="success", value=float(ok[i]))]
        metrics += [Metric(name=m, value=float(vals[i, j])) for j, m in enumerate(METRICS)]
        w.write(
            ItemResult(
                item_id=f"item-{i:05d}",
                index=i,
                success=bool(ok[i]),
                metrics=metrics,
                latency_ms=float(vals[i, 0]),
                groups={"eval_type": TYPES[i % 4], "difficulty": LEVELS[i % 3]},
                tokens={"total": int(100 * vals[i, 1])},
            )
        )
    w.close()


def columns(n: int, seed: int) -> np.ndarray:
    """The same shape of work compare does: (success + metrics) x (overall + groups)."""
    rng = np.random.default_rng(seed)
    base = rng.random((n, 1 + len(METRICS)))
    groups = [np.arange(n) % 4 == g for g in range(4)] + [np.arange(n) % 3 == g for g in range(3)]
    cols = [base]
    for mask in groups:
        cols.append(np.where(mask[:, None], base, np.nan))
    return np.column_stack(cols)


def naive_python(cols: np.ndarray, resamples: int, seed: int) -> float:
    rows = cols.tolist()
    n, k = cols.shape
    rnd = random.Random(seed)
    t0 = time.perf_counter()
    for _ in range(resamples):
        idx = [rnd.randrange(n) for _ in range(n)]
        for j in range(k):
            s = c = 0.0
            for i in idx:
                v = rows[i][j]
                if v == v:  # not NaN
                    s += v
                    c += 1
            _ = s / c if c else 0.0
    return time.perf_counter() - t0


def float32_deviations(cols: np.ndarray, resamples: int, seed: int) -> float:
    """The shipped float32 loop (before the float64 fix), timed on all resamples."""
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    mask = np.isfinite(cols)
    x = np.where(mask, cols, 0.0)
    counts = mask.astype(float)
    patterns, which = np.unique(counts, axis=1, return_inverse=True)
    which = np.asarray(which).reshape(-1)
    theta = x.sum(axis=0) / counts.sum(axis=0)
    dev = (x - counts * theta).astype(np.float32)
    c32 = patterns.astype(np.float32)
    n = cols.shape[0]
    block = max(1, min(resamples, 4_000_000 // n))
    boot = np.empty((resamples, cols.shape[1]))
    for start in range(0, resamples, block):
        rows = min(block, resamples - start)
        idx = rng.integers(0, n, size=(rows, n))
        idx += (np.arange(rows, dtype=np.int64) * n)[:, None]
        w = np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float32)
        boot[start : start + rows] = theta + (w @ dev) / (w @ c32)[:, which]
    np.quantile(boot, [0.025, 0.975], axis=0)
    return time.perf_counter() - t0


def numpy_per_resample(cols: np.ndarray, resamples: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    n = cols.shape[0]
    t0 = time.perf_counter()
    for _ in range(resamples):
        idx = rng.integers(0, n, n)
        np.nanmean(cols[idx], axis=0)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--resamples", type=int, default=10_000)
    args = ap.parse_args()
    n, r = args.items, args.resamples
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        write_run(Path(tmp) / "base", n, 0.55, 1, "no-memory")
        write_run(Path(tmp) / "cand", n, 0.60, 2, "hybrid")
        print(f"wrote 2 runs x {n} items in {time.perf_counter() - t0:.2f} s")
        t0 = time.perf_counter()
        for side in ("base", "cand"):
            read_log(Path(tmp) / side)
        reading = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        c = compare([Path(tmp) / "base"], [Path(tmp) / "cand"], resamples=r)
        ours, cpu = time.perf_counter() - t0, time.process_time() - c0
    k = 1 + len(c.metrics) + sum(1 + len(g.metrics) for g in c.groups)
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f} (others' jobs slow wall time)")
    print(
        f"compare: {c.pairs} pairs, {k} bootstrapped columns, {r} resamples: {ours:.2f} s wall, "
        f"{cpu:.2f} s CPU (target <= 5 s: {'PASS' if ours <= 5 else 'FAIL'}); of which "
        f"reading both run logs ~{reading:.2f} s"
    )
    h = c.headline
    iv = h.intervals[-1] if h.intervals else None
    span = f"{iv.low:+.4f}..{iv.high:+.4f} ({iv.method})" if iv and iv.low is not None else "n/a"
    print(
        f"  {c.headline_spec.label} {h.baseline:.3f} -> {h.candidate:.3f}, "
        f"{h.test} p={h.p_value:.3g}, 95% {span}"
    )
    cols = columns(n, 3)
    t0, c0 = time.perf_counter(), time.process_time()
    stats.bootstrap_columns(cols, resamples=r, seed=6)
    after, after_cpu = time.perf_counter() - t0, time.process_time() - c0
    c0 = time.process_time()
    before = float32_deviations(cols, r, 6)
    before_cpu = time.process_time() - c0
    print(
        f"bootstrap alone, {cols.shape[1]} columns: float64 (now) {after:.2f} s wall "
        f"{after_cpu:.2f} s CPU; reference float32-deviations (before) {before:.2f} s wall "
        f"{before_cpu:.2f} s CPU -> now/before {after_cpu / before_cpu:.2f} in CPU"
    )
    t0, c0 = time.perf_counter(), time.process_time()
    stats.permutation_columns(cols, resamples=r, seed=7)
    print(
        f"metric test (sign-flip permutation, {r} random patterns) on the same "
        f"{cols.shape[1]} columns: {time.perf_counter() - t0:.2f} s wall "
        f"{time.process_time() - c0:.2f} s CPU (what compare adds when it switches from t)"
    )
    sub = 3
    naive = naive_python(cols, sub, 4) * r / sub
    print(
        f"reference naive-python (per-resample, per-column loop; {sub} resamples "
        f"extrapolated to {r}): {naive:.0f} s -> ours is {naive / ours:.0f}x faster"
    )
    sub = 200
    npl = numpy_per_resample(cols, sub, 5) * r / sub
    print(
        f"reference numpy-per-resample ({sub} resamples extrapolated to {r}): {npl:.1f} s "
        f"-> ours is {npl / ours:.1f}x faster"
    )


if __name__ == "__main__":
    main()
