"""Generator speed and peak memory: 10,000 and 1,000,000 memories, streamed to JSONL.

Each measurement runs in a fresh subprocess (wall time and that process's peak RSS from
``resource.getrusage``). Reference in the same run: the in-memory path (pydantic ``Dataset``
then ``save_dataset``) at 10,000, which is what streaming avoids; and the targets (10k <= 2 s,
1M <= 60 s and <= 2 GB). Named reference from the research notes: the MemTest seed's
generator made 10,000 memories in 1.15 s / 49 MB (8d87a22, fewer fields, one expected id).

    .venv/bin/python benchmarks/bench_generate.py [--skip-1m]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
mode, size, lang, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
t0 = time.perf_counter()
if mode == "stream":
    from mnemometer.datasets.generate import write_generated
    write_generated(out, size, lang, seed=0)
else:
    from mnemometer.datasets import save_dataset
    from mnemometer.datasets.generate import generate
    save_dataset(generate(size, lang, seed=0), out)
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024,
                  "bytes": Path(out).stat().st_size}))
"""


def measure(mode: str, size: int, lang: str, tmp: Path) -> dict[str, float]:
    out = tmp / f"{mode}-{lang}-{size}.jsonl"
    p = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(size), lang, str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    r = json.loads(p.stdout)
    out.unlink()
    return r


def main() -> None:
    skip_1m = "--skip-1m" in sys.argv
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for lang in ("en", "zh"):
            rows.append(("stream", 10_000, lang, measure("stream", 10_000, lang, tmp)))
        rows.append(("in-memory (reference)", 10_000, "en", measure("memory", 10_000, "en", tmp)))
        if not skip_1m:
            rows.append(("stream", 1_000_000, "en", measure("stream", 1_000_000, "en", tmp)))
    # On a shared machine wall time includes waiting for a core; CPU time does not.
    print(
        f"{'path':<22} {'size':>10} {'lang':<4} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} "
        f"{'file MB':>8}  target"
    )
    for mode, size, lang, r in rows:
        target = ""
        if mode == "stream":
            limit = 2.0 if size == 10_000 else 60.0
            mem_ok = size == 10_000 or r["rss_mb"] <= 2048
            verdict = {True: "OK", False: "MISSED"}
            target = (
                f"<= {limit:g} s"
                + ("" if size == 10_000 else ", <= 2048 MB")
                + f": wall {verdict[r['wall'] <= limit and mem_ok]},"
                + f" cpu {verdict[r['cpu'] <= limit and mem_ok]}"
            )
        print(
            f"{mode:<22} {size:>10,} {lang:<4} {r['wall']:>8.2f} {r['cpu']:>8.2f} {r['rss_mb']:>8.0f} "
            f"{r['bytes'] / 1e6:>8.1f}  {target}"
        )
    s10, m10 = rows[0][3], rows[2][3]
    print(
        f"streaming vs in-memory at 10,000: {m10['wall'] / s10['wall']:.2f}x faster, "
        f"{m10['rss_mb'] / s10['rss_mb']:.2f}x less memory"
    )
    print(
        f"vs MemTest seed generator (10,000 in 1.15 s / 49 MB, research notes): "
        f"{s10['wall'] / 1.15:.2f}x its time, {s10['rss_mb'] / 49:.2f}x its memory"
    )


if __name__ == "__main__":
    main()
