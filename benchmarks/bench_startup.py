"""Small data, whole processes: start-up, and MemTest's own files against the seed's runner.

Every row is a fresh process, timed from outside (wall, CPU = user + system, peak RSS),
the compared commands run alternately and the figures are medians (see ``_procs.py``).
Named references, in the same run:

* start-up rows against ``python -c pass`` (the interpreter alone, same venv); target:
  ``import mnemometer`` and ``mnemometer --help`` under 0.3 s;
* the MemTest files against the seed's runner with its keyword adapter on the same file,
  re-implemented minimally in ``seed_memtest.py`` and run by the same interpreter; target:
  ratio <= 1.0 (never slower than the seed) for the retrieval and memtest suites with
  ``keyword`` on the Harry Potter set. On that set the seed stores the 1,626 memories,
  searches its 133 queries (top 20) and prints precision and recall per type (its reasoning
  pass finds none of its query types there). ``memtest -O storage=none`` does that work
  (130 queries: the reader drops 3 whose expected ids name no memory; the set has no
  cluster, deep or frequency labels, so no other probe) and, like every run, writes the item
  log, the summary and the report; the full suite also reads back 1,000 memories (1,000 more
  searches). The 100-memory sample and the Chinese Four Novels set are printed too, so the
  sizes where start-up or jieba still dominate are on the page.

Run: ``.venv/bin/python benchmarks/bench_startup.py [--runs 7] [--mnemometer PATH]``
(``--mnemometer`` times another install, e.g. a checkout of main, for before/after).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from _procs import alternate, load_line

HERE = Path(__file__).resolve().parent
MEMTEST = HERE.parents[1] / "shared" / "seed-data" / "memtest"
SEED = str(HERE / "seed_memtest.py")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--mnemometer", default=str(Path(sys.executable).with_name("mnemometer")))
    ap.add_argument("--only", choices=["startup", "seed"], help="run one half")
    args = ap.parse_args()
    cli = args.mnemometer
    py = str(Path(cli).with_name("python"))
    # Relative to the checkout, so the printed line can go in docs as it is.
    shown = os.path.relpath(cli) if Path(cli).resolve().is_relative_to(Path.cwd()) else cli
    print(f"machine: {load_line()}; medians of {args.runs} alternating runs; {shown}")
    print(f"{'':34} {'wall s':>7} {'CPU s':>7} {'peak MB':>8}")
    if args.only != "seed":
        startup(py, cli, args.runs)
    if args.only != "startup":
        seed(py, cli, args.runs)


def _row(label: str, s) -> None:
    print(f"  {label:32} {s.wall_s:7.3f} {s.cpu_s:7.3f} {s.peak_mb:8.0f}")


def startup(py: str, cli: str, runs: int) -> None:
    print("1. start-up (target: import mnemometer and mnemometer --help < 0.3 s)")
    samples = alternate(
        {
            "python -c pass (reference)": [py, "-c", "pass"],
            "python -c 'import mnemometer'": [py, "-c", "import mnemometer"],
            "mnemometer --help": [cli, "--help"],
            "mnemometer --version": [cli, "--version"],
            "mnemometer run --help": [cli, "run", "--help"],
            "mnemometer list stores": [cli, "list", "stores"],
        },
        runs,
    )
    floor = samples["python -c pass (reference)"]
    for label, s in samples.items():
        _row(label, s)
    for label in ("python -c 'import mnemometer'", "mnemometer --help"):
        s = samples[label]
        verdict = "OK" if s.wall_s < 0.3 else "MISSED"
        print(
            f"  {label}: {s.wall_s:.3f} s wall, {s.wall_s - floor.wall_s:+.3f} s over the "
            f"interpreter; target < 0.3 s: {verdict}"
        )


def seed(py: str, cli: str, runs: int) -> None:
    cases = [
        ("hp_benchmark_db.json", "Harry Potter, 1,626 memories", ["retrieval", "memtest"], True),
        ("sample_db_100.json", "sample_db_100, 100 memories x 3 versions", ["memtest"], False),
        ("four_novels_db.json", "Four Novels (Chinese), 4,058 memories", ["retrieval"], False),
    ]
    with tempfile.TemporaryDirectory() as d:
        out = Path(d)
        for n, (name, title, suites, gated) in enumerate(cases, 2):
            db = MEMTEST / name
            if not db.exists():
                print(f"{n}. skipped: {db} not found")
                continue
            print(f"{n}. {title}, keyword store, whole process, against the seed runner")
            commands = {"seed runner (reference)": [py, SEED, str(db)]}
            for suite in suites:
                run_dir = str(out / f"{name}-{suite}")
                commands[f"mnemometer run {suite}"] = [cli, "run", suite, "--dataset", str(db)]
                commands[f"mnemometer run {suite}"] += ["--store", "keyword", "--out", run_dir]
            if gated and "memtest" in suites:
                # The suite's storage read-back (one search per version of up to 1,000
                # memories) is work the seed runner never does: also time the suite without
                # it, the seed's work (store everything, search each query at top 20).
                label = "mnemometer run memtest -O storage=none"
                commands[label] = [*commands["mnemometer run memtest"], "-O", "storage=none"]
                commands[label][commands[label].index("--out") + 1] += "-none"

            def fresh(out: Path = out, name: str = name) -> None:
                for p in out.glob(f"{name}-*"):
                    _rmtree(p)

            samples = alternate(commands, runs, before=fresh)
            ref = samples["seed runner (reference)"]
            for label, s in samples.items():
                _row(label, s)
            for label, s in samples.items():
                if s is ref:
                    continue
                ratio = s.wall_s / ref.wall_s
                target = f"; target <= 1.0: {'OK' if ratio <= 1.0 else 'MISSED'}" if gated else ""
                print(
                    f"  {label} / seed runner: wall {ratio:.2f}x, "
                    f"CPU {s.cpu_s / ref.cpu_s:.2f}x{target}"
                )


def _rmtree(p: Path) -> None:
    import shutil

    shutil.rmtree(p, ignore_errors=True)


if __name__ == "__main__":
    main()
