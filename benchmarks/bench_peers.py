"""LoCoMo conv-26 retrieval, whole process: mnemometer against three peer harnesses.

Each harness runs its own LoCoMo retrieval procedure through its own entry point, with the
**same** Okapi BM25 plugged in (``peers/shared_bm25.py``, pure standard library) through
the smallest shim its API allows (``peers/*_run.py``; ours is a store plug-in,
``peers/mnemometer_store.py``). So the ranking is identical by construction, and the
benchmark checks it from each harness's own output; what differs is each harness's work
around it (start-up, loading, ingest, scoring, writing results):

* mnemometer: ``mnemometer run retrieval --store peer-bm25``: stores the 419 turns once,
  asks all 199 questions, scores them, writes the run log item by item (the CLI's path);
* infolang-bench 0.1.0: ``run_benchmark`` with a native backend: stores the turns once,
  one ``recall`` per question (k = 50), scores, writes ``summary.json`` and ``per_q.json``;
* memory-core-eval 0.2.0: ``mceval run --dataset locomo``: for each question (it drops
  those without session evidence) a fresh namespace, the whole conversation stored again,
  one search (k = 10), 4 worker threads, a JSONL trace and a results JSON;
* benchd-harness 0.2.0: ``benchd run -b locomo-v1``: for each question but category 5,
  reset, the whole conversation ingested again, one recall, deterministic scoring, a
  signed manifest with every trace (each holding the conversation).

Every harness reads the same file: LoCoMo with conv-26 alone (written under the cache
directory from the seed file; nothing of it enters the repository). Whole process: wall,
CPU (user + system of the child, from ``wait4``) and peak RSS, interleaved, medians of
``--runs``, each process in a fresh directory with its outputs removed first. Ratios are
ours / theirs (target <= 1.0 for each).

Peer environments are cached: ``--cache`` (default ``$MNEMOMETER_CACHE/peers``, i.e.
``~/.cache/mnemometer/peers``) holds one virtual environment per peer, made once with pip
from the registry; later runs reuse them.

Run: ``.venv/bin/python benchmarks/bench_peers.py [--runs 5] [--mnemometer PATH]
[--instructions infolang-bench]``. ``--instructions PEER`` also runs ours and that peer
once each under valgrind's callgrind and prints the instructions each executed: on a
shared machine CPU seconds move with the load, instruction counts do not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _procs import ENV, Sample, load_line, run_once

from mnemometer._env import cache_root

HERE = Path(__file__).resolve().parent
SHIMS = HERE / "peers"
LOCOMO = HERE.parents[1] / "shared" / "seed-data" / "locomo" / "locomo10.json"
COMPARED = 10
"""Ranks compared by the check (the deepest every harness asks for)."""


@dataclass
class Harness:
    """One harness: how to run it on the conv-26 file, and how to read its rankings."""

    name: str
    version: str
    argv: list[str]
    env: dict[str, str]
    out: Path
    read: Callable[[Path], tuple[dict[str, list[list[str]]], int]]
    """Its output -> (question text -> rankings of dia_ids, turns it stored)."""
    sample: Sample = field(init=False)

    def __post_init__(self) -> None:
        self.sample = Sample(self.name, self.argv)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=cache_root() / "peers")
    ap.add_argument("--dataset", type=Path, default=LOCOMO)
    ap.add_argument("--conversation", default="conv-26")
    ap.add_argument("--mnemometer", default=str(Path(sys.executable).with_name("mnemometer")))
    ap.add_argument(
        "--sources",
        type=Path,
        help="run mnemometer from these sources (a src/ directory put first on PYTHONPATH): "
        "another commit's, for a before/after",
    )
    ap.add_argument(
        "--instructions",
        metavar="PEER",
        action="append",
        default=[],
        help="also count each process's instructions under valgrind (callgrind), ours and "
        "this peer's, one run each: a figure load does not move (repeatable)",
    )
    args = ap.parse_args()
    if not args.dataset.exists():
        raise SystemExit(f"skipped: {args.dataset} not found")
    data = conversation_file(args.dataset, args.conversation, args.cache / "data")
    turns, questions = _counts(data)
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        harnesses = [ours(args.mnemometer, data, args.cache, work, args.sources)]
        harnesses += peers(args.cache, data, work)
        print(
            f"machine: {load_line()}; medians of {args.runs} interleaved runs; LoCoMo "
            f"{args.conversation} ({turns} turns, {questions} questions), retrieval only, "
            "one shared Okapi BM25 (benchmarks/peers/shared_bm25.py)"
        )
        measure(harnesses, args.runs, work)
        report(harnesses)
        if args.instructions:
            instructions(harnesses, args.instructions, work)


def measure(harnesses: list[Harness], runs: int, work: Path) -> None:
    """Run every harness ``runs`` + 1 times, interleaved; the first round is not timed."""
    for round_ in range(runs + 1):
        for h in harnesses:
            cwd = work / f"cwd-{h.name}"
            for p in (cwd, h.out):
                shutil.rmtree(p, ignore_errors=True)
            cwd.mkdir()
            run_once(h.argv, h.sample if round_ else None, env=h.env, cwd=cwd)


def report(harnesses: list[Harness]) -> None:
    """The table, our ratio against each peer, and the ranking check."""
    read = {h.name: h.read(h.out) for h in harnesses}
    print(
        f"  {'harness':<26} {'questions':>9} {'stores':>7} {'wall s':>7} {'CPU s':>7} "
        f"{'peak MB':>8}"
    )
    for h in harnesses:
        rankings, stores = read[h.name]
        s = h.sample
        n = sum(len(r) for r in rankings.values())
        print(
            f"  {h.name + ' ' + h.version:<26} {n:>9,} {stores:>7,} {s.wall_s:7.3f} "
            f"{s.cpu_s:7.3f} {s.peak_mb:8.1f}"
        )
    us = harnesses[0]
    print("ours / theirs (target <= 1.0 for each):")
    for h in harnesses[1:]:
        w, c = us.sample.wall_s / h.sample.wall_s, us.sample.cpu_s / h.sample.cpu_s
        verdict = "OK" if max(w, c) <= 1.0 else "MISSED"
        print(
            f"  mnemometer / {h.name}: wall {w:.2f}x, CPU {c:.2f}x, "
            f"peak RSS {us.sample.peak_mb / h.sample.peak_mb:.2f}x; target <= 1.0: {verdict}"
        )
    ours_rank = read[us.name][0]
    for h in harnesses[1:]:
        same, shared = _agree(ours_rank, read[h.name][0])
        verdict = "OK" if same == shared and shared else "DIFFERENT"
        print(
            f"check: {h.name}'s top-{COMPARED} ranking equals ours on {same} of the {shared} "
            f"questions both asked: {verdict}"
        )


def instructions(harnesses: list[Harness], names: list[str], work: Path) -> None:
    """Instructions of one run of ours and of each named peer (callgrind, hash seed 0)."""
    unknown = set(names) - {h.name for h in harnesses}
    if unknown:
        raise SystemExit(f"--instructions: no harness {', '.join(sorted(unknown))}")
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind")
    counts = {}
    for h in harnesses:
        if h is not harnesses[0] and h.name not in names:
            continue
        cwd = work / f"cwd-{h.name}"
        for p in (cwd, h.out):
            shutil.rmtree(p, ignore_errors=True)
        cwd.mkdir()
        grind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
        done = subprocess.run(
            [*grind, *h.argv],
            env={**h.env, "PYTHONHASHSEED": "0"},
            cwd=cwd,
            capture_output=True,
            text=True,
        )
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode or not found:
            raise SystemExit(f"{h.name} under callgrind failed:\n{done.stderr[-2000:]}")
        counts[h.name] = int(found.group(1))
    ours_n = counts.pop(harnesses[0].name)
    for name, n in counts.items():
        print(
            f"instructions (callgrind, one run each): mnemometer {ours_n / 1e9:.3f} G, "
            f"{name} {n / 1e9:.3f} G: {ours_n / n:.2f}x"
        )


def _agree(a: dict[str, list[list[str]]], b: dict[str, list[list[str]]]) -> tuple[int, int]:
    """(questions whose top-COMPARED agree, questions both asked); repeats pair in order."""
    same = shared = 0
    for text, ours_ in a.items():
        for x, y in zip(ours_, b.get(text, []), strict=False):
            shared += 1
            same += x[:COMPARED] == y[:COMPARED]
    return same, shared


def conversation_file(source: Path, conversation: str, out_dir: Path) -> Path:
    """``out_dir/<conversation>/locomo10.json``: the file with that conversation alone."""
    out = out_dir / conversation / "locomo10.json"
    picked = [c for c in json.loads(source.read_text("utf-8")) if c["sample_id"] == conversation]
    if not picked:
        raise SystemExit(f"{conversation} is not in {source}")
    text = json.dumps(picked)
    if not out.exists() or out.read_text("utf-8") != text:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, "utf-8")
    return out


def _counts(data: Path) -> tuple[int, int]:
    (conv,) = json.loads(data.read_text("utf-8"))
    c = conv["conversation"]
    turns = sum(len(v) for k, v in c.items() if k.startswith("session_") and isinstance(v, list))
    return turns, len(conv["qa"])


def _by_question(pairs: list[tuple[str, list[str]]]) -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {}
    for text, ids in pairs:
        out.setdefault(text, []).append(ids)
    return out


# --- mnemometer -------------------------------------------------------------------------


def ours(cli: str, data: Path, cache: Path, work: Path, sources: Path | None) -> Harness:
    """``mnemometer run retrieval`` with the shared BM25 registered as store ``peer-bm25``."""
    plugin = cache / "mnemometer-shim"
    info = plugin / "mnemometer_peer_bm25-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: mnemometer-peer-bm25\nVersion: 0\n"
    )
    (info / "entry_points.txt").write_text(
        "[mnemometer.stores]\npeer-bm25 = mnemometer_store:PeerBM25Store\n"
    )
    path = [str(sources.resolve())] if sources else []
    env = {**ENV, "PYTHONPATH": os.pathsep.join([*path, str(SHIMS), str(plugin)])}
    out = work / "out-mnemometer"
    argv = [cli, "run", "retrieval", "--dataset", str(data), "--store", "peer-bm25"]
    version = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout.split()
    return Harness(
        "mnemometer",
        version[-1] if version else "?",
        [*argv, "--out", str(out)],
        env,
        out,
        _read_ours,
    )


def _read_ours(out: Path) -> tuple[dict[str, list[list[str]]], int]:
    pairs = []
    with (out / "items.jsonl").open(encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            pairs.append((item["input"], [h["id"].rpartition("/")[2] for h in item["retrieved"]]))
    ingest = json.loads((out / "ingest.json").read_text("utf-8"))
    return _by_question(pairs), int(ingest["counts"]["memories_stored"])


# --- the peers --------------------------------------------------------------------------

PINS = {
    "infolang-bench": "infolang-bench==0.1.0",
    "memory-core-eval": "memory-core-eval==0.2.0",
    "benchd-harness": "benchd-harness==0.2.0",
}


def venv(cache: Path, name: str) -> Path:
    """The peer's cached virtual environment's ``python``, made (pip, registry) if missing."""
    pin = PINS[name]
    root = cache / pin.replace("==", "-")
    python = root / "bin" / "python"
    if not (root / ".installed").exists():
        print(f"installing {pin} into {root} (once)", flush=True)
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
        log = cache / f"{pin.replace('==', '-')}.pip.log"
        with log.open("w") as f:
            done = subprocess.run([str(python), "-m", "pip", "install", pin], stdout=f, stderr=f)
        if done.returncode:
            raise SystemExit(f"pip install {pin} failed: see {log}")
        (root / ".installed").touch()
    return python


def peers(cache: Path, data: Path, work: Path) -> list[Harness]:
    """The three peers, each in its own cached environment, reading ``data``."""
    env = {**ENV, "PYTHONPATH": str(SHIMS)}
    il, mc, bd = (work / f"out-{n}" for n in ("infolang", "mceval", "benchd"))
    return [
        Harness(
            "infolang-bench",
            "0.1.0",
            [
                str(venv(cache, "infolang-bench")),
                str(SHIMS / "infolang_bench_run.py"),
                str(data.parent),
                str(il),
            ],
            env,
            il,
            _read_infolang,
        ),
        Harness(
            "memory-core-eval",
            "0.2.0",
            [
                str(venv(cache, "memory-core-eval")),
                str(SHIMS / "mceval_run.py"),
                *("run", "--adapter", "shared-bm25", "--dataset", "locomo"),
                *("--trace", str(mc / "trace.jsonl"), "--out-dir", str(mc)),
            ],
            {**env, "MCEVAL_CACHE_DIR": str(data.parent)},
            mc,
            _read_mceval,
        ),
        Harness(
            "benchd-harness",
            "0.2.0",
            [
                str(venv(cache, "benchd-harness")),
                str(SHIMS / "benchd_run.py"),
                "run",
                "-a",
                "shared-bm25",
                "-b",
                "locomo-v1",
                "-o",
                str(bd),
            ],
            {**env, "BENCHD_LOCOMO": str(data)},
            bd,
            _read_benchd,
        ),
    ]


def _read_infolang(out: Path) -> tuple[dict[str, list[list[str]]], int]:
    rows = json.loads((out / "locomo.shared-bm25.per_q.json").read_text("utf-8"))
    summary = json.loads((out / "locomo.shared-bm25.summary.json").read_text("utf-8"))
    pairs = [(r["question"], [d for d in r["hit_dia_ids"] if d]) for r in rows]
    return _by_question(pairs), int(summary["meta"]["storage"]["items"])


def _read_mceval(out: Path) -> tuple[dict[str, list[list[str]]], int]:
    pairs, stores = [], 0
    with (out / "trace.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            pairs.append((row["question"], [m["id"] for m in row["retrieved"]]))
            stores += len(row["stored"])
    return _by_question(pairs), stores


def _read_benchd(out: Path) -> tuple[dict[str, list[list[str]]], int]:
    (path,) = out.glob("*/manifest.signed.json")
    traces = json.loads(path.read_text("utf-8"))["manifest"]["traces"]
    pairs = [(t["query"], re.findall(r"^\[(D\d+:\d+)\]", t["raw_recall"], re.M)) for t in traces]
    return _by_question(pairs), sum(len(t["ingest_history"]) for t in traces)


if __name__ == "__main__":
    main()
