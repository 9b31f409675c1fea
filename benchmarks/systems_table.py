"""The side-by-side table of docs/systems.md: memory systems on conversations, with their cost.

    .venv/bin/python benchmarks/systems_table.py                    # every store installed here
    ~/.cache/mnemometer/cognee-1.6.5/venv/bin/python benchmarks/systems_table.py --stores cognee

Each row is one retrieval run through the ordinary runner (one store per conversation,
evidence turns as the relevant memories) on the given datasets (default: the 4-conversation
LongMemEval sample in tests/data and the built-in demo set). Stores that ask an LLM while they store
get :func:`mnemometer.testing` 's extraction stand-in, a deterministic server on 127.0.0.1
that extracts one fact per text: their LLM calls, tokens and seconds per memory are the
real pipeline's cost, their recall measures plumbing, not a model's extraction quality.
Stores whose extras are missing are left out and named on stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

import mnemometer
from mnemometer.llm import LLMSettings
from mnemometer.stats import wilson
from mnemometer.testing._extraction import extraction_llm

REPO = Path(__file__).resolve().parents[1]

#: (row label, store, options, module it needs, asks an LLM)
STORES: list[tuple[str, str, dict, str | None, bool]] = [
    ("bm25", "bm25", {}, None, False),
    ("dense (MiniLM)", "dense", {}, "sentence_transformers", False),
    ("mem0 (infer=false)", "mem0", {}, "mem0", False),
    ("graphiti (Kuzu)", "graphiti", {}, "graphiti_core", True),
    ("langmem", "langmem", {}, "langmem", True),
    ("cognee (chunks)", "cognee", {"mode": "chunks"}, "cognee", True),
    ("cognee (graph completion)", "cognee", {"mode": "graph_completion"}, "cognee", True),
]
DATASETS = {
    "longmemeval-mini": str(REPO / "tests" / "data" / "longmemeval_mini.json"),
    "demo-en": "demo-en",
}


def _metric(summary, name: str, k: int | None = None, p: float | None = None):
    return next(
        (m for m in summary.overall if m.name == name and m.k == k and m.percentile == p), None
    )


def _row(label: str, dataset: str, summary) -> str:
    hit = _metric(summary, "hit", 5)
    ci = ""
    if hit is not None and hit.value is not None and hit.n:
        iv = wilson(round(hit.value * hit.n), hit.n)
        ci = f" [{iv.low:.2f}, {iv.high:.2f}] (n={hit.n})"
    ingest = summary.table("ingest").data[0]
    p50, p95 = _metric(summary, "latency", p=50), _metric(summary, "latency", p=95)

    def num(v, fmt: str) -> str:
        return "–" if v is None else format(v, fmt)

    return (
        f"| {label} | {dataset} | {num(hit and hit.value, '.2f')}{ci} "
        f"| {ingest['seconds_per_memory']:.3f} | {num(ingest['llm_calls_per_memory'], '.2f')} "
        f"| {num(ingest['tokens_per_memory'], '.0f')} "
        f"| {num(p50 and p50.value, '.0f')} / {num(p95 and p95.value, '.0f')} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stores", help="comma-separated store names (default: all installed)")
    ap.add_argument("--datasets", default=",".join(DATASETS), help="names or paths")
    args = ap.parse_args()
    wanted = set(args.stores.split(",")) if args.stores else None
    print(
        "| system | dataset | hit@5 [95% CI] | ingest s / memory | LLM calls / memory "
        "| tokens / memory | search p50 / p95 ms |"
    )
    print("|---|---|---|---|---|---|---|")
    with extraction_llm() as llm, tempfile.TemporaryDirectory() as tmp:
        settings = mnemometer.RunSettings(llm=LLMSettings(base_url=llm.base_url, model=llm.model))
        for label, store, opts, module, _ in STORES:
            if wanted is not None and store not in wanted:
                continue
            if module is not None and importlib.util.find_spec(module) is None:
                print(f"skipped {store}: {module} is not installed", file=sys.stderr)
                continue
            for ds in args.datasets.split(","):
                res = mnemometer.run(
                    "retrieval",
                    mnemometer.SystemSpec.store(store, **opts),
                    dataset=DATASETS.get(ds, ds),
                    out=Path(tmp) / f"{label}-{Path(ds).stem}",
                    settings=settings,
                )
                print(_row(label, ds, res.summary), flush=True)


if __name__ == "__main__":
    main()
