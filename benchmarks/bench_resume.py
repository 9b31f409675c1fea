"""What resuming a killed memtest run costs, with and without its checkpoints.

A memtest/bm25 run over the generated 10,000-memory English set is SIGKILLed once its log
holds half its items (the kill lands by polling ``items.jsonl``, not by a timer). The
killed directory is copied three times and resumed three ways:

* **index + replay**: as shipped; ``store-index/`` holds bm25's saved index and
  ``memtest-replay.json`` the access-schedule replay's outcomes, so the resume loads the
  index and runs what is left;
* **replay only**: ``store-index/`` deleted first, so the resume indexes the data again
  (what a resume did before stores could persist);
* **neither**: both deleted, so the resume also replays the schedule (what every resume
  did before either checkpoint existed).

An uninterrupted run in the same process batch is the reference. Each figure is a fresh
``mnemometer`` process timed from outside.

    .venv/bin/python benchmarks/bench_resume.py
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from _procs import CLI, generate, load_line, run_once


def _timed(args: list[str]) -> float:
    return run_once(args).wall[0]


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def main() -> None:
    print(f"machine: {load_line()}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        data = generate(tmp / "en10k.jsonl", 10_000)
        run = [CLI, "run", "memtest", "--dataset", str(data), "--store", "bm25"]
        full = _timed([*run, "--out", str(tmp / "full"), "--format", "none"])
        total = json.loads((tmp / "full" / "header.json").read_text())["item_count"]
        killed = tmp / "killed"
        proc = subprocess.Popen(
            [*run, "--out", str(killed), "--format", "none"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while _lines(killed / "items.jsonl") < total // 2 and proc.poll() is None:
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done = _lines(killed / "items.jsonl")
        rows = []
        index_mb = sum(p.stat().st_size for p in (killed / "store-index").rglob("*")) / 1e6
        drops = {
            "index + replay": (),
            "replay only": ("store-index",),
            "neither": ("store-index", "memtest-replay.json"),
        }
        for name, drop in drops.items():
            copy = tmp / name.replace(" ", "-").replace("+", "and")
            shutil.copytree(killed, copy)
            for gone in drop:
                if (copy / gone).is_dir():
                    shutil.rmtree(copy / gone)
                else:
                    (copy / gone).unlink()
            wall = _timed([CLI, "run", "--resume", str(copy), "--format", "none"])
            timings = json.loads((copy / "header.json").read_text())["timings"]
            rows.append((name, wall, timings))
    print(f"uninterrupted run: {total:,} items, {full:.1f} s; saved index {index_mb:.1f} MB")
    print(f"killed after {done:,} items; resumed (the phases of the resume):")
    for name, wall, t in rows:
        phases = ", ".join(
            f"{k} {t[k]:.1f} s"
            for k in ("index", "index_save", "index_load", "forgetting_replay", "index_again")
            if k in t
        )
        print(f"  {name:<15} {wall:>6.1f} s  {wall / full:.2f}x the full run  ({phases})")
    print(f"index + replay vs replay only: {rows[1][1] / rows[0][1]:.2f}x faster")
    print(f"index + replay vs neither: {rows[2][1] / rows[0][1]:.2f}x faster")


if __name__ == "__main__":
    main()
