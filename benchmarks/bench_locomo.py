"""All of LoCoMo (10 conversations, 1,986 questions) through bm25, with the deterministic test
server (``mnemometer.testing``) as reader and two judges.

Targets: the harness's own time is at most 2 ms per question beyond the system's own time,
and the whole run takes at most 60 s. Reference, measured in the same run: the system's own
time (bm25's ingest and search calls) and the LLM calls' wall time (reader and judges over
HTTP on 127.0.0.1); the harness overhead is the run's wall time minus both, per question.

Run: .venv/bin/python benchmarks/bench_locomo.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mnemometer
from mnemometer.llm import resolve_settings
from mnemometer.local_llm import free_port
from mnemometer.log import read_log
from mnemometer.runner import RunSettings

DATA = Path(__file__).resolve().parents[1].parent / "shared/seed-data/locomo/locomo10.json"
OVERHEAD_MS, WHOLE_S = 2.0, 60.0


def main() -> int:
    port = free_port()
    # The server in its own process, as `python -m mnemometer.testing` runs for a user.
    cmd = [sys.executable, "-m", "mnemometer.testing", "--port", str(port)]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and "serving" in server.stdout.readline()
        llm = resolve_settings(f"http://127.0.0.1:{port}/v1", "fake-llm")
        with tempfile.TemporaryDirectory() as tmp:
            opts = {"dataset": str(DATA), "judges": ["lenient", "strict"]}
            t0 = time.perf_counter()
            res = mnemometer.run(
                "locomo",
                "bm25",
                suite_options=opts,
                out=Path(tmp) / "r",
                settings=RunSettings(llm=llm, timeout=0),
            )
            wall = time.perf_counter() - t0
            log = read_log(res.path)
            rows, timings = log.items, log.header.timings
    finally:
        server.terminate()
        server.wait()
    n = len(rows)
    ingest = {r.item_id: r.extra.get("ingest_ms") or 0.0 for r in rows}
    system_ms = sum(ingest.values()) + sum(r.extra.get("search_ms") or 0.0 for r in rows)
    llm_ms = sum((r.extra.get("answer_ms") or 0.0) + (r.extra.get("judge_ms") or 0.0) for r in rows)
    overhead = (wall * 1000 - system_ms - llm_ms) / n
    # Per question, in the items phase: what the harness adds to each question's calls.
    steady = (timings["items"] * 1000 - system_ms - llm_ms) / n
    startup = wall - timings["items"]
    print(f"questions: {n} in {len(ingest)} conversations; wall {wall:.1f} s")
    print(
        f"system (bm25 ingest + search): {system_ms / 1000:.1f} s; LLM calls (reader + 2 judges): {llm_ms / 1000:.1f} s"
    )
    print(
        f"harness overhead per question, items phase: {steady:.2f} ms (target <= {OVERHEAD_MS} ms)"
    )
    print(
        f"harness overhead per question, whole run: {overhead:.2f} ms (startup, load, summary: {startup:.1f} s)"
    )
    print(f"whole run: {wall:.1f} s (target <= {WHOLE_S:.0f} s)")
    for m in res.summary.overall:
        if m.name in ("f1", "adversarial", "evidence_recall") or m.name.startswith("accuracy"):
            iv = m.interval
            span = f" [{iv.low:.3f}, {iv.high:.3f}]" if iv and iv.low is not None else ""
            print(f"  {m.name}: {m.value:.3f}{span} (n={m.n})")
    ok = steady <= OVERHEAD_MS and wall <= WHOLE_S
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
