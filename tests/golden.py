"""Golden numbers: what a set of real runs scores, captured so a refactor can be held to it.

``capture(run_dir)`` reads a run directory as plain JSON (no mnemometer model, so the same
code reads logs of any version) and keeps every number that does not depend on the
machine: each item's status, success and metric values, and the summary's metrics, counts
and table data. Wall-clock figures (milliseconds, seconds, timings) are left out. No
dataset text is kept (LoCoMo is CC BY-NC): ids and numbers only.

``python tests/golden.py OUT_DIR [--bin .venv/bin]`` runs the golden set with a given
installation and writes one gzipped JSON file per run into ``OUT_DIR``; ``tests/test_golden.py``
runs the same set with this checkout and compares.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SEED = Path(__file__).resolve().parents[2] / "shared" / "seed-data"

# Fields whose values are wall-clock measurements or machine facts.
_CLOCK_WORDS = ("_ms", "seconds", "secs", "timings", "latency", "elapsed", "per_second")


def _clocked(key: str) -> bool:
    k = key.lower()
    return any(w in k for w in _CLOCK_WORDS) or k in ("ms", "s", "wall", "cpu")


def _number(x: Any) -> Any:
    if isinstance(x, float):
        return None if not math.isfinite(x) else round(x, 9)
    return x


def _scrub(obj: Any) -> Any:
    """Numbers, booleans and short ids; clock fields and long text dropped."""
    if isinstance(obj, dict):
        return {k: _scrub(v) for k, v in sorted(obj.items()) if not _clocked(str(k))}
    if isinstance(obj, list):
        return [_scrub(v) for v in obj]
    if isinstance(obj, str):
        return obj if len(obj) <= 40 else f"<text {len(obj)}>"
    return _number(obj)


def _metric(m: dict[str, Any]) -> dict[str, Any] | None:
    if m.get("unit") == "ms" or "latency" in m.get("name", ""):
        return None
    out = {k: m.get(k) for k in ("name", "k", "percentile", "unit") if m.get(k) is not None}
    out["value"] = _number(m.get("value"))
    if m.get("n") is not None:
        out["n"] = m["n"]
    iv = m.get("interval")
    if iv:
        out["interval"] = [_number(iv.get("low")), _number(iv.get("high")), iv.get("method")]
    return out


def _metrics(ms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [x for m in ms if (x := _metric(m)) is not None]


def capture(run_dir: str | Path) -> dict[str, Any]:
    """The machine-independent numbers of one run directory."""
    run = Path(run_dir)
    items = []
    for line in (run / "items.jsonl").read_text("utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        items.append(
            {
                "id": r["item_id"] + ("#" + r["step"] if r.get("step") else ""),
                "status": r.get("status", "ok"),
                "success": r.get("success"),
                "retrieved": [h["id"] for h in r.get("retrieved", [])],
                "metrics": _metrics(r.get("metrics", [])),
            }
        )
    items.sort(key=lambda x: x["id"])
    s = json.loads((run / "summary.json").read_text("utf-8"))
    summary = {
        "overall": _metrics(s.get("overall", [])),
        "groups": {
            key: {v: _metrics(ms) for v, ms in sorted(values.items())}
            for key, values in sorted(s.get("groups", {}).items())
        },
        "counts": {k: v for k, v in sorted(s.get("counts", {}).items()) if not _clocked(k)},
        "tables": {
            t["name"]: _scrub(t.get("data", []))
            for t in s.get("tables", [])
            if t["name"] != "ingest"
        },
    }
    return {"items": items, "summary": summary}


def diff(expected: Any, actual: Any, where: str = "", out: list[str] | None = None) -> list[str]:
    """Where ``actual`` differs from ``expected`` (paths and both values), at most 20."""
    out = [] if out is None else out
    if len(out) >= 20:
        return out
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k in sorted(set(expected) | set(actual)):
            if k not in actual:
                out.append(f"{where}/{k}: missing (expected {str(expected[k])[:80]})")
            elif k not in expected:
                out.append(f"{where}/{k}: unexpected {str(actual[k])[:80]}")
            else:
                diff(expected[k], actual[k], f"{where}/{k}", out)
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            out.append(f"{where}: {len(expected)} entries expected, {len(actual)} found")
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            diff(e, a, f"{where}[{i}]", out)
    elif isinstance(expected, float) and isinstance(actual, float):
        if not math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-12):
            out.append(f"{where}: {expected!r} expected, {actual!r} found")
    elif expected != actual:
        out.append(f"{where}: {expected!r} expected, {actual!r} found")
    return out


def runs(llm: tuple[str, str] | None) -> dict[str, list[str]]:
    """The golden set: run name -> ``mnemometer`` arguments (without ``--out``)."""
    hp = str(SEED / "memtest" / "hp_benchmark_db.json")
    out: dict[str, list[str]] = {}
    for ds in ("demo-en", "demo-zh"):
        for store in ("keyword", "bm25"):
            out[f"{ds}-{store}"] = ["run", "retrieval", "-d", ds, "-s", store]
    out["hp-bm25"] = ["run", "retrieval", "-d", hp, "-s", "bm25"]
    out["memtest-hp-bm25"] = ["run", "memtest", "-d", hp, "-s", "bm25"]
    sample = str(SEED / "memtest" / "sample_db_100.json")
    out["memtest-sample100-bm25"] = ["run", "memtest", "-d", sample, "-s", "bm25"]
    if llm is not None:
        flags = ["--llm-base-url", llm[0], "--llm-model", llm[1]]
        locomo = str(SEED / "locomo" / "locomo10.json")
        judges = ["--judge", "lenient", "--judge", "strict"]
        out["locomo-2-bm25"] = ["run", "locomo", "-d", locomo, "-s", "bm25", "--limit", "2"]
        out["locomo-2-bm25"] += [*judges, *flags]
        scenarios = ["run", "scenarios", "--agent", "rag", "-s", "bm25", "-O", "similarity=none"]
        out["scenarios-rag-bm25"] = [*scenarios, *flags]
    return out


def server() -> Any:
    """The test LLM server as ``python -m mnemometer.testing`` serves it (not started)."""
    from mnemometer.testing import FakeLLMServer
    from mnemometer.testing._bench import benchmark_reply, is_judge_request

    return FakeLLMServer(rules=[(is_judge_request, benchmark_reply)], default=benchmark_reply)


def produce(out_dir: Path, work: Path, bin_dir: Path, llm: tuple[str, str] | None) -> None:
    """Run the golden set with the ``mnemometer`` in ``bin_dir``; one capture per run."""
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    for name, argv in runs(llm).items():
        run_dir = work / name
        subprocess.run(
            [str(bin_dir / "mnemometer"), *argv, "--out", str(run_dir), "--format", "none"],
            check=False,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if not (run_dir / "summary.json").is_file():
            raise SystemExit(f"{name}: the run wrote no summary ({' '.join(argv)})")
        write(out_dir / f"{name}.json.gz", capture(run_dir))


def write(path: Path, doc: dict[str, Any]) -> None:
    """``doc`` as compact JSON, gzipped with no timestamp (the same bytes every time)."""
    raw = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
    path.write_bytes(gzip.compress(raw, 9, mtime=0))


def read(path: Path) -> dict[str, Any]:
    """A golden file written by :func:`write`."""
    return json.loads(gzip.decompress(path.read_bytes()))


if __name__ == "__main__":
    import argparse
    import tempfile

    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--bin", type=Path, default=Path(sys.executable).parent)
    args = ap.parse_args()
    sys.path.insert(0, str(args.bin.parent))
    with server() as srv, tempfile.TemporaryDirectory() as tmp:
        produce(args.out, Path(tmp), args.bin, (srv.base_url, srv.model))
