"""What the bubblewrap sandbox costs per command, against the same command unsandboxed.

Target: <= 200 ms more per command than ``--sandbox none`` (an agent step takes minutes).
Reference, timed in the same run, interleaved: the same ``true`` through the same executor
with a private HOME but no bubblewrap. Prints the medians, their ratio and the load.

Run: .venv/bin/python benchmarks/bench_sandbox.py
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mnemometer.sandbox import Sandbox, bwrap_problem, run_command

RUNS = 30
TARGET_MS = 200.0


def main() -> int:
    """Time both ways; exit 1 when the sandbox costs more than the target."""
    if (problem := bwrap_problem()) is not None:
        print(f"skipped: {problem}")
        return 0
    work = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    times: dict[str, list[float]] = {"bwrap": [], "none": []}
    for i in range(RUNS):
        for mode in times:
            t0 = time.perf_counter()
            sandbox = Sandbox(mode, agent_home="codex")
            with sandbox.command(["true"], work, [work]) as argv:
                res = run_command(
                    argv, cwd=work, env=dict(os.environ), timeout=30, out_prefix=work / f"{i}{mode}"
                )
            if not res.ok:
                print(f"{mode}: the command failed: {res}")
                return 1
            times[mode].append((time.perf_counter() - t0) * 1000)
    med = {mode: statistics.median(t) for mode, t in times.items()}
    extra = med["bwrap"] - med["none"]
    print(
        f"per command, median of {RUNS}: bwrap {med['bwrap']:.1f} ms, none {med['none']:.1f} ms "
        f"(x{med['bwrap'] / med['none']:.2f}, +{extra:.1f} ms; target +{TARGET_MS:.0f} ms); "
        f"load {os.getloadavg()[0]:.1f}"
    )
    return 0 if extra <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
