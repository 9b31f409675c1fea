"""What resuming a killed memtest run costs, with and without the replay checkpoint.

A memtest/bm25 run over the generated 10,000-memory English set is SIGKILLed once its log
holds half its items (the kill lands by polling ``items.jsonl``, not by a timer). The
killed directory is copied twice and resumed both ways:

* **checkpoint**: as shipped; ``memtest-replay.json`` holds the access-schedule replay's
  outcomes, so the resume stores the data once and runs what is left;
* **no checkpoint**: the file deleted first, so the resume replays the schedule and
  indexes again, which is what every resume did before the checkpoint existed.

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
        for name, keep in (("checkpoint", True), ("no checkpoint", False)):
            copy = tmp / name.replace(" ", "-")
            shutil.copytree(killed, copy)
            if not keep:
                (copy / "memtest-replay.json").unlink()
            wall = _timed([CLI, "run", "--resume", str(copy), "--format", "none"])
            timings = json.loads((copy / "header.json").read_text())["timings"]
            rows.append((name, wall, timings))
    print(f"uninterrupted run: {total:,} items, {full:.1f} s")
    print(f"killed after {done:,} items; resumed (phases summed over both sessions):")
    for name, wall, t in rows:
        phases = ", ".join(
            f"{k} {t[k]:.1f} s" for k in ("index", "forgetting_replay", "index_again") if k in t
        )
        print(f"  {name:<14} {wall:>6.1f} s  {wall / full:.2f}x the full run  ({phases})")
    print(f"checkpoint vs none: {rows[1][1] / rows[0][1]:.2f}x faster")


if __name__ == "__main__":
    main()
