"""The README's LoCoMo table: every system through the CLI, one row each, with intervals.

Starts ``python -m mnemometer.testing`` (the deterministic reader and judges) unless
``--llm-base-url`` names a real endpoint, then runs, through the CLI exactly as a user
would::

    mnemometer run locomo --dataset locomo10.json --store STORE \\
        --llm-base-url URL --llm-model M --judge lenient --judge strict --timeout 0

for bm25, dense and hybrid, ``--store none --baseline full-context``, and mem0 on the first
conversation (``--limit 1``: mem0 adds one LLM-free memory per turn, slowly). A row whose
run was interrupted resumes (``mnemometer run --resume``); a finished one is read. Prints a
Markdown table from each run's ``summary.json`` alone: F1 over categories 1-4, each judge's
accuracy, evidence recall (all 95% cluster-robust intervals) and category 5's rule.

Run: .venv/bin/python benchmarks/locomo_table.py [--out runs/locomo-table] [--only bm25]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from mnemometer.local_llm import free_port
from mnemometer.log import read_summary

DATA = Path(__file__).resolve().parents[1].parent / "shared/seed-data/locomo/locomo10.json"
MNEMOMETER = str(Path(sys.executable).with_name("mnemometer"))
SYSTEMS: dict[str, list[str]] = {
    "bm25": ["--store", "bm25"],
    "dense": ["--store", "dense"],
    "hybrid": ["--store", "hybrid"],
    "full-context (4,000 tokens)": ["--store", "none", "--baseline", "full-context"],
    "mem0 (first conversation)": ["--store", "mem0", "--limit", "1"],
}
JUDGES = ("lenient", "strict")


def _cell(m: dict | None, scale: float = 100.0) -> str:
    if not m or m.get("value") is None:
        return "-"
    iv = m.get("interval") or {}
    text = f"{m['value'] * scale:.1f}"
    if iv.get("low") is not None and iv.get("high") is not None:
        text += f" [{iv['low'] * scale:.1f}, {iv['high'] * scale:.1f}]"
    return text


def row(name: str, run_dir: Path) -> str:
    """One Markdown row from a run directory's ``summary.json``."""
    s = read_summary(run_dir)
    assert s is not None, f"{run_dir}: no summary.json"
    overall = {m.name: m.model_dump() for m in s.overall if m.k is None}
    f1 = s.sections["f1"]
    cells = [
        name,
        str(f1["categories_1_4"]["n"]),
        _cell(f1["categories_1_4"]),
        *(_cell(overall.get(f"accuracy:{j}")) for j in JUDGES),
        _cell(overall.get("evidence_recall")),
        _cell(f1["category_5"]),
    ]
    return "| " + " | ".join(cells) + " |"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="runs/locomo-table", type=Path)
    p.add_argument("--only", action="append", default=[], help="run only these rows")
    p.add_argument("--llm-base-url")
    p.add_argument("--llm-model", default="fake-llm")
    p.add_argument("--limit", type=int, help="only the first N conversations, every row")
    args = p.parse_args()
    server = None
    url = args.llm_base_url
    if url is None:
        port = free_port()
        cmd = [sys.executable, "-m", "mnemometer.testing", "--port", str(port)]
        server = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert server.stdout is not None and "serving" in server.stdout.readline()
        url = f"http://127.0.0.1:{port}/v1"
    rows = []
    try:
        for name, flags in SYSTEMS.items():
            if args.only and not any(o in name for o in args.only):
                continue
            out = args.out / name.split()[0]
            cmd = [MNEMOMETER, "run", "locomo", "--dataset", str(DATA), *flags]
            cmd += ["--llm-base-url", url, "--llm-model", args.llm_model, "--timeout", "0"]
            cmd += [a for j in JUDGES for a in ("--judge", j)]
            cmd += ["--out", str(out), "--format", "none"]
            if args.limit is not None and "--limit" not in flags:
                cmd += ["--limit", str(args.limit)]
            if (out / "header.json").exists() and not (out / "summary.json").exists():
                cmd = [
                    MNEMOMETER,
                    "run",
                    "--resume",
                    str(out),
                    "--timeout",
                    "0",
                    "--format",
                    "none",
                ]
                cmd += ["--llm-base-url", url, "--llm-model", args.llm_model]
            if not (out / "summary.json").exists():
                print("$", " ".join(cmd[1:]), file=sys.stderr, flush=True)
                subprocess.run(cmd, check=True)
            rows.append(row(name, out))
    finally:
        if server is not None:
            server.terminate()
            server.wait()
    judges = " | ".join(f"{j} judge % [95% CI]" for j in JUDGES)
    print(
        f"| system | questions (cat. 1-4) | F1 % [95% CI] | {judges} | evidence recall % | cat. 5 rule % |"
    )
    print("|---|---|---|" + "---|" * len(JUDGES) + "---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
