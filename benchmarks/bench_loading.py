"""Loading and reporting against plain JSON parsing of the same files, in one run.

1. a generated 10,000-memory native JSONL dataset (``mnemometer generate --size 10000``):
   ``load_dataset`` (parse, validate, check ids; the content hash is deferred) against ``json.loads`` of
   every line of the same file (named reference; target: within 1.5x), in this process
   (best of ``--repeat``) and as the first call of a fresh process (each side in its own
   process, timed after its imports, medians of ``--repeat`` alternating pairs);
2. the run log of the memtest suite with bm25 on that dataset (8,746 items): ``read_log``
   (every item validated into typed results) against ``json.loads`` of every line, and
   ``mnemometer report RUN`` as a whole process against ``python -c`` reading
   ``summary.json`` (target: report under 1 s).

In-process figures are CPU seconds, the best of ``--repeat`` alternating tries (a loaded
shared machine inflates wall time, and CPU time less); the whole-process row uses
``_procs.py`` (medians of alternating runs).

Run: ``.venv/bin/python benchmarks/bench_loading.py [--repeat 5] [--run RUN_DIR]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _procs import CLI, ENV, alternate, generate, load_line


def best(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best CPU seconds of each function over ``repeat`` alternating tries."""
    out = {name: float("inf") for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.process_time()
            fn()
            out[name] = min(out[name], time.process_time() - t0)
    return out


FRESH_JSON = """
import json, sys, time
t = time.process_time()
with open(sys.argv[1], encoding="utf-8") as f:
    x = [json.loads(line) for line in f if line.strip()]
print(time.process_time() - t)
"""
FRESH_LOAD = """
import sys, time
from mnemometer.datasets import load_dataset
t = time.process_time()
x = load_dataset(sys.argv[1])
print(time.process_time() - t)
"""


def fresh(path: Path, repeat: int) -> dict[str, float]:
    """Median CPU seconds of each side as a fresh process's first call, alternating."""
    py = str(Path(CLI).with_name("python"))
    out: dict[str, list[float]] = {"json": [], "load": []}
    for _ in range(repeat):
        for name, code in (("json", FRESH_JSON), ("load", FRESH_LOAD)):
            done = subprocess.run(
                [py, "-c", code, str(path)], check=True, capture_output=True, text=True, env=ENV
            )
            out[name].append(float(done.stdout))
    return {name: statistics.median(v) for name, v in out.items()}


def json_lines(path: Path) -> list[object]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--run", type=Path, help="an existing memtest run directory to reuse")
    args = ap.parse_args()
    from mnemometer.datasets import load_dataset
    from mnemometer.log import read_log

    print(f"machine: {load_line()}; CPU seconds, best of {args.repeat} alternating tries")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        data = generate(tmp / "en10k.jsonl", 10_000)
        print("1. 10,000-memory native JSONL dataset (plus its queries)")
        t = best(
            {"json": lambda: json_lines(data), "load": lambda: load_dataset(data)}, args.repeat
        )
        ratio = t["load"] / t["json"]
        print(f"  json.loads of every line (reference) {t['json']:6.3f} s")
        print(f"  load_dataset                         {t['load']:6.3f} s")
        verdict = "OK" if ratio <= 1.5 else "MISSED"
        print(f"  load_dataset / json.loads: {ratio:.2f}x; target <= 1.5x: {verdict}")
        f = fresh(data, args.repeat)
        ratio = f["load"] / f["json"]
        print(
            f"  as a fresh process's first call (medians): json.loads {f['json']:.3f} s, "
            f"load_dataset {f['load']:.3f} s = {ratio:.2f}x; target <= 1.5x: "
            f"{'OK' if ratio <= 1.5 else 'MISSED'}"
        )
        ds = load_dataset(data)
        h = best({"hash": ds.compute_hash}, args.repeat)["hash"]
        print(
            f"  content hash (canonical JSON, sorted keys; computed when a run first reads "
            f"it, not by load_dataset) {h:6.3f} s = {h / t['json']:.2f}x json.loads"
        )

        run = args.run
        if run is None:
            run = tmp / "mt"
            subprocess.run(
                [CLI, "run", "memtest", "-d", str(data), "-s", "bm25", "-o", str(run)]
                + ["--format", "none"],
                check=True,
                capture_output=True,
            )
        items = run / "items.jsonl"
        n = sum(1 for _ in open(items, "rb"))
        print(f"2. run log of {n:,} items ({items.stat().st_size / 1e6:.1f} MB)")
        t = best({"json": lambda: json_lines(items), "read": lambda: read_log(run)}, args.repeat)
        print(f"  json.loads of every line (reference) {t['json']:6.3f} s")
        print(f"  read_log (every item validated)      {t['read']:6.3f} s")
        print(f"  read_log / json.loads: {t['read'] / t['json']:.2f}x")
        py = str(Path(CLI).with_name("python"))
        summary = str(run / "summary.json")
        s = alternate(
            {
                "read summary.json (reference)": [
                    py,
                    "-c",
                    f"import json;json.load(open({summary!r}))",
                ],
                "mnemometer report RUN": [CLI, "report", str(run)],
            },
            args.repeat,
        )
        ref, rep = s["read summary.json (reference)"], s["mnemometer report RUN"]
        print(f"  {'whole process':36} {'wall s':>7} {'CPU s':>7}")
        for label, x in s.items():
            print(f"  {label:36} {x.wall_s:7.3f} {x.cpu_s:7.3f}")
        verdict = "OK" if rep.wall_s < 1.0 else "MISSED"
        print(
            f"  report / reading summary.json: wall {rep.wall_s / ref.wall_s:.2f}x, "
            f"CPU {rep.cpu_s / ref.cpu_s:.2f}x; target report < 1 s: {verdict}"
        )


if __name__ == "__main__":
    main()
