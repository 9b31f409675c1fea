"""Scale: the retrieval suite from 10k to 1M generated memories, and a load run.

Every measurement is a whole ``mnemometer run retrieval`` process (wall, CPU, peak RSS from
``os.wait4``) on a generated dataset (``mnemometer generate``, 3 stylistic versions per
memory), asking a seeded sample of one query per ten memories (at 1M that would be 100,000;
the generator makes 80,376 there, and all are asked). Reference in the same run, on the
same file: a process that only parses it
(``json.loads`` line by line, keeping every record), so the ratios say what the run costs
beyond reading its input, whatever the machine's load. The growth exponent is the slope of
log(figure) against log(memories) over the sizes measured (1.0 = linear).

After each run the log is checked: one line per sampled query, no id twice, every id one
of the dataset's queries, and ``summary.json`` counting the same items with no errors.

    .venv/bin/python benchmarks/bench_scale.py                      # bm25: 10k, 100k, 1M
    .venv/bin/python benchmarks/bench_scale.py --sizes 10000,100000 --store hybrid
    .venv/bin/python benchmarks/bench_scale.py --load               # 200k/50k, and 16 in flight

``--load`` is issue 20 §7: bm25 over 200,000 memories and 50,000 queries within a stated
peak memory with a consistent log; then the 13 scenarios x 3 epochs against a local server
that answers every request 50 ms late, at ``--concurrency 16`` against one at a time (every
item kept, the same replies, no extra requests; the test is tests/reliability/test_load.py).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _procs import CLI, Sample, generate, load_line, run_once  # noqa: E402

PARSE = r"""
import json, sys
with open(sys.argv[1], "rb") as f:
    records = [json.loads(line) for line in f]
print(len(records))
"""

# What issue 20 §7 asks a bm25 run over 200k memories / 50k queries to stay within.
LOAD_CEILING_MB = 4096


def dataset(size: int, tmp: Path) -> Path:
    """The seed-0 English dataset of ``size`` memories (made once, reused from ``tmp``)."""
    out = tmp / f"gen-{size}.jsonl"
    if not out.exists():  # a killed generation leaves only the .part file
        generate(out.with_name(out.name + ".part.jsonl"), size, seed=0).rename(out)
    return out


def query_ids(path: Path) -> set[str]:
    """Ids of the dataset's queries (records of kind ``query``)."""
    ids = set()
    with path.open("rb") as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("kind") == "query":
                ids.add(rec["id"])
    return ids


def check_log(run_dir: Path, known: set[str], queries: int) -> str:
    """Check the run log is whole and consistent; return a one-line verdict (raise if not)."""
    seen: list[str] = []
    with (run_dir / "items.jsonl").open("rb") as f:
        for line in f:
            seen.append(json.loads(line)["item_id"])
    summary = json.loads((run_dir / "summary.json").read_text())["counts"]
    problems = []
    if len(seen) != queries:
        problems.append(f"{len(seen)} lines for {queries} queries")
    if len(set(seen)) != len(seen):
        problems.append(f"{len(seen) - len(set(seen))} ids twice")
    if not set(seen) <= known:
        problems.append(f"{len(set(seen) - known)} ids not in the dataset")
    if summary["items"] != queries or summary["errors"] or summary["timeouts"]:
        problems.append(f"summary counts {summary}")
    if problems:
        raise SystemExit(f"{run_dir}: inconsistent log: {'; '.join(problems)}")
    return f"{len(seen):,} items, unique, summary agrees"


def exponent(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) on log(x)."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum(
        (a - mx) ** 2 for a in lx
    )


def scenarios_in_flight(concurrency: int, delay: float = 0.05) -> tuple[float, int, int]:
    """Wall seconds, items and chat requests of 13 scenarios x 3 epochs against a slow server."""

    from mnemometer import RunSettings, SystemSpec
    from mnemometer.llm import LLMSettings
    from mnemometer.runner import run
    from mnemometer.testing import FakeLLMServer
    from mnemometer.testing.llm_server import echo_memories

    with FakeLLMServer(default=echo_memories) as srv, tempfile.TemporaryDirectory() as d:
        srv.fail_next(100_000, kind="slow", delay=delay)
        t0 = time.perf_counter()
        result = run(
            "scenarios",
            SystemSpec.agent("rag").options_with_store("bm25", None),
            out=Path(d) / "run",
            suite_options={"similarity": "none", "epochs": 3},
            settings=RunSettings(concurrency=concurrency, llm=LLMSettings(srv.base_url, srv.model)),
        )
        wall = time.perf_counter() - t0
        counts = result.summary.counts
        if counts["errors"] or counts["timeouts"]:
            raise SystemExit(f"scenarios at concurrency {concurrency}: {counts}")
        return wall, counts["items"], len(srv.chat_requests())


def measure(store: str, size: int, queries: int, tmp: Path) -> tuple[Sample, Sample, str, int]:
    """One run and its parse reference on the same file, plus the log verdict.

    ``queries`` is capped at what the dataset has (the generator makes 80,376 queries for
    a million memories, not 100,000).
    """
    data = dataset(size, tmp)
    known = query_ids(data)  # read once: the 1M file is 840 MB
    queries = min(queries, len(known))
    ref = run_once([sys.executable, "-c", PARSE, str(data)])
    out = tmp / f"run-{store}-{size}"
    shutil.rmtree(out, ignore_errors=True)
    argv = [CLI, "run", "retrieval", "-d", str(data), "-s", store]
    argv += ["--sample", str(queries), "--seed", "0", "-o", str(out)]
    run = run_once(argv)
    verdict = check_log(out, known, queries)
    shutil.rmtree(out)
    return run, ref, verdict, queries


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--store", default="bm25")
    ap.add_argument("--load", action="store_true", help="the 200k/50k load run instead")
    ap.add_argument(
        "--data", help="keep the generated files in this directory and reuse them next time"
    )
    args = ap.parse_args()
    print(f"machine: {load_line()}")
    tmp_ctx = tempfile.TemporaryDirectory()
    tmp = Path(args.data) if args.data else Path(tmp_ctx.name)
    tmp.mkdir(parents=True, exist_ok=True)
    if args.load:
        run, ref, verdict, _ = measure(args.store, 200_000, 50_000, tmp)
        ok = run.peak_mb <= LOAD_CEILING_MB
        print(
            f"load: {args.store}, 200,000 memories / 50,000 queries: {run.wall_s:.0f} s wall, "
            f"{run.cpu_s:.0f} s CPU, peak {run.peak_mb:,.0f} MiB (ceiling {LOAD_CEILING_MB:,}: "
            f"{'met' if ok else 'MISSED'}); parsing the file alone: {ref.wall_s:.0f} s, "
            f"{ref.peak_mb:,.0f} MiB; log: {verdict}"
        )
        tmp_ctx.cleanup()
        one = scenarios_in_flight(1)
        many = scenarios_in_flight(16)
        print(
            f"scenarios, every request 50 ms late: concurrency 1: {one[0]:.1f} s, {one[1]} "
            f"items, {one[2]} requests; concurrency 16: {many[0]:.1f} s, {many[1]} items, "
            f"{many[2]} requests ({one[0] / many[0]:.1f}x faster, "
            f"{'same items and requests' if one[1:] == many[1:] else 'ITEMS OR REQUESTS DIFFER'})"
        )
        sys.exit(0 if ok and one[1:] == many[1:] else 1)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    print(
        f"{'memories':>10} {'queries':>8} {'wall s':>8} {'CPU s':>8} {'peak MiB':>9} "
        f"{'parse s':>8} {'parse MiB':>9} {'wall/parse':>10} {'peak/parse':>10}  log"
    )
    for size in sizes:
        run, ref, verdict, queries = measure(args.store, size, max(1, size // 10), tmp)
        rows.append((size, run, ref))
        print(
            f"{size:>10,} {queries:>8,} {run.wall_s:>8.1f} {run.cpu_s:>8.1f} "
            f"{run.peak_mb:>9,.0f} {ref.wall_s:>8.1f} {ref.peak_mb:>9,.0f} "
            f"{run.wall_s / ref.wall_s:>10.1f} {run.peak_mb / ref.peak_mb:>10.2f}  {verdict}",
            flush=True,
        )
    tmp_ctx.cleanup()
    if len(rows) > 1:
        xs = [float(s) for s, _, _ in rows]
        print(
            f"growth exponent over {sizes[0]:,}..{sizes[-1]:,} memories ({args.store}): "
            f"wall {exponent(xs, [r.wall_s for _, r, _ in rows]):.2f}, "
            f"CPU {exponent(xs, [r.cpu_s for _, r, _ in rows]):.2f}, "
            f"peak memory {exponent(xs, [r.peak_mb for _, r, _ in rows]):.2f}; "
            f"parsing alone: wall {exponent(xs, [f.wall_s for _, _, f in rows]):.2f}, "
            f"peak {exponent(xs, [f.peak_mb for _, _, f in rows]):.2f}"
        )


if __name__ == "__main__":
    main()
