"""All of LoCoMo (10 conversations, 1,986 questions) through bm25, with the deterministic test
server (``mnemometer.testing``) as reader and two judges.

Targets: the harness's own time is at most 2 ms per question beyond the system's own time,
and the whole run takes at most 60 s.

The reference, measured in the same process just before and just after the run (the mean): a **bare loop** doing the
work the harness cannot avoid, as a hand-written script would: for each conversation a fresh
bm25 store given every turn, then per question the same search (depth 50), the same reader
prompt over the top 10 turns, and the same three chat requests (reader, two judges) through the same LLM
client to the same server, with no cache, no scoring, no log. The harness overhead is the
run's items phase minus the bare loop, per question, and the ratio of the two; on a loaded
machine both slow down together, so the ratio is the figure to compare across runs.

Run: .venv/bin/python benchmarks/bench_locomo.py [--profile FILE]
(``--profile`` writes cProfile statistics of the run alone, sorted by cumulative time.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mnemometer
from mnemometer.datasets import load_dataset
from mnemometer.llm import LLMClient, resolve_settings
from mnemometer.local_llm import free_port
from mnemometer.log import read_log
from mnemometer.runner import RunSettings
from mnemometer.scoring.judges import builtin_judges
from mnemometer.stores import create_store
from mnemometer.suites.benchmarks import _pipeline as P

DATA = Path(__file__).resolve().parents[1].parent / "shared/seed-data/locomo/locomo10.json"
OVERHEAD_MS, WHOLE_S = 2.0, 60.0


def bare_loop(base_url: str) -> tuple[float, float, dict[str, str]]:
    """The reference: wall and CPU seconds of the unavoidable work, and its answers."""
    data = load_dataset(DATA)
    by_conv: dict[str, list] = {}
    for q in data.queries:
        by_conv.setdefault(q.conversation_id or "", []).append(q)
    judges = [builtin_judges()[n] for n in ("lenient", "strict")]
    llm = LLMClient.from_settings(resolve_settings(base_url, "fake-llm"))
    answers: dict[str, str] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    for conv in data.conversations:
        store = create_store("bm25")
        store.reset()
        turns = P.turn_index(conv)
        store.store_many([(r.turn.memory_text(), {"memory_id": i}) for i, r in turns.items()])
        store.flush()
        for q in by_conv.get(conv.id, []):
            hits = store.search(q.text, 50)
            context, _ = P.select_context(
                [turns[h.memory_id] for h in hits[:10]], 4000, llm.counter
            )
            prompt = P.reader_prompt(q.text, context, q.asked_at)
            reply = llm.chat([{"role": "user", "content": prompt}], max_tokens=64)
            answers[q.id] = answer = reply.text.strip()
            if q.answer is not None and q.type != "adversarial":
                for j in judges:
                    text = j.prompts["default"].format(
                        question=q.text, gold=q.answer, response=answer
                    )
                    llm.chat(
                        [{"role": "user", "content": text}],
                        max_tokens=j.max_tokens,
                        response_format={"type": "json_object", "schema": j.schema},
                    )
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    llm.close()
    return seconds, cpu, answers


def harness_run(base_url: str, out: Path, profile: str | None) -> tuple[float, float, object]:
    """The run through ``mnemometer.run``: its wall and CPU seconds and its result."""
    opts = {"dataset": str(DATA), "judges": ["lenient", "strict"]}
    settings = RunSettings(llm=resolve_settings(base_url, "fake-llm"), timeout=0)
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    t0, c0 = time.perf_counter(), time.process_time()
    res = mnemometer.run("locomo", "bm25", suite_options=opts, out=out, settings=settings)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if prof is not None:
        import pstats

        prof.disable()
        with open(profile, "w") as f:
            pstats.Stats(prof, stream=f).sort_stats("cumulative").print_stats(60)
    return wall, cpu, res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", help="write cProfile statistics of the run to this file")
    args = ap.parse_args()
    port = free_port()
    # The server in its own process, as `python -m mnemometer.testing` runs for a user.
    cmd = [sys.executable, "-m", "mnemometer.testing", "--port", str(port)]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    load_before = os.getloadavg()[0]
    try:
        assert server.stdout is not None and "serving" in server.stdout.readline()
        base_url = f"http://127.0.0.1:{port}/v1"
        # Reference before and after the run: the load drifts within a minute.
        bare_1, cpu_1, answers = bare_loop(base_url)
        with tempfile.TemporaryDirectory() as tmp:
            wall, cpu, res = harness_run(base_url, Path(tmp) / "r", args.profile)
            log = read_log(res.path)
            rows, timings = log.items, log.header.timings
        bare_2, cpu_2, _ = bare_loop(base_url)
    finally:
        server.terminate()
        server.wait()
    n = len(rows)
    # The reference did the same work: the same questions, the same answers from the server.
    assert answers == {r.step: r.output for r in rows}, "the bare loop asked something else"
    items_s = timings["items"]
    bare_s = (bare_1 + bare_2) / 2
    ingest = {r.item_id: r.extra.get("ingest_ms") or 0.0 for r in rows}
    system_ms = sum(ingest.values()) + sum(r.extra.get("search_ms") or 0.0 for r in rows)
    llm_ms = sum((r.extra.get("answer_ms") or 0.0) + (r.extra.get("judge_ms") or 0.0) for r in rows)
    over_bare = (items_s - bare_s) * 1000 / n
    # The run's own accounting, as before: items phase minus the timed calls.
    steady = (items_s * 1000 - system_ms - llm_ms) / n
    print(f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"questions: {n} in {len(ingest)} conversations; whole run {wall:.1f} s")
    print(f"  items phase {items_s:.1f} s; startup, load and summary {wall - items_s:.1f} s")
    print(f"  bm25 ingest + search {system_ms / 1000:.1f} s; LLM calls {llm_ms / 1000:.1f} s")
    print(
        f"reference (bare loop, same work, no harness): {bare_s:.1f} s "
        f"(before the run {bare_1:.1f} s, after it {bare_2:.1f} s)"
    )
    print(
        f"harness overhead per question: {over_bare:.2f} ms over the bare loop "
        f"(items phase / bare loop = {items_s / bare_s:.2f}x; target <= {OVERHEAD_MS} ms)"
    )
    print(f"  by the run's own timings (items minus timed calls): {steady:.2f} ms")
    # CPU time of this process: what the harness computes, far less sensitive to load.
    bare_cpu = (cpu_1 + cpu_2) / 2
    print(
        f"CPU of this process: whole run {cpu:.1f} s (load and summary included), bare loop "
        f"{bare_cpu:.1f} s -> {(cpu - bare_cpu) * 1000 / n:.2f} ms per question, "
        f"{cpu / bare_cpu:.2f}x"
    )
    print(f"whole run: {wall:.1f} s (target <= {WHOLE_S:.0f} s)")
    for m in res.summary.overall:
        if m.name in ("f1", "adversarial", "evidence_recall") or m.name.startswith("accuracy"):
            iv = m.interval
            span = f" [{iv.low:.3f}, {iv.high:.3f}]" if iv and iv.low is not None else ""
            print(f"  {m.name}: {m.value:.3f}{span} (n={m.n})")
    ok = over_bare <= OVERHEAD_MS and wall <= WHOLE_S
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
