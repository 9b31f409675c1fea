"""The side-by-side table of docs/systems.md: memory systems on conversations, with their cost.

    .venv/bin/python benchmarks/systems_table.py --locomo 1         # every store installed here
    .venv/bin/python benchmarks/systems_table.py --stores letta --letta-url URL --locomo 1
    ~/.cache/mnemometer/cognee-1.6.5/venv/bin/python benchmarks/systems_table.py --stores cognee

Each row is one retrieval run through the ordinary runner (one store per conversation,
evidence turns as the relevant memories) on the given datasets (default: the 4-conversation
LongMemEval sample in tests/data and the built-in demo set). Stores that ask an LLM while they store
get :func:`mnemometer.testing` 's extraction stand-in, a deterministic server on 127.0.0.1
that extracts one fact per text: their LLM calls, tokens and seconds per memory are the
real pipeline's cost, their recall measures plumbing, not a model's extraction quality.
Stores whose extras are missing are left out and named on stderr, where each run's wall
times are written too (filling the stores, how much their fills overlapped, the whole run).

``--concurrency N`` fills N conversations' stores at once (the LLM-backed stores wait on
their LLM most of the time); searches then run N at once too, so compare search latencies
of rows measured at the same concurrency. ``--locomo N`` adds LoCoMo evidence retrieval on
its first N conversations (the file from
``../shared/seed-data/locomo/``, or ``--locomo-file``): hit@5 is recall_any@5 over the
questions with evidence, its interval cluster-robust by conversation (one conversation is
one cluster: the interval is then the whole range), elsewhere Wilson. The install column
is measured in the running environment (``_install_size.py`` says how).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import importlib.util
import json
import sys
import tempfile
from pathlib import Path

from _install_size import CORE, EMBEDDINGS, own_mb

import mnemometer
from mnemometer.embeddings import load_embedder
from mnemometer.llm import LLMSettings
from mnemometer.log import read_items
from mnemometer.stats import cluster_robust_interval, wilson
from mnemometer.testing._extraction import extraction_llm

REPO = Path(__file__).resolve().parents[1]
LOCOMO = REPO.parent / "shared" / "seed-data" / "locomo" / "locomo10.json"

#: (row label, store, options, module it needs, LLM: "" none, "stand-in" extraction, "–")
STORES: list[tuple[str, str, dict, str | None, str]] = [
    ("bm25", "bm25", {}, None, ""),
    ("dense (MiniLM)", "dense", {}, "sentence_transformers", ""),
    ("chroma (MiniLM)", "chroma", {}, "chromadb", ""),
    ("qdrant (MiniLM)", "qdrant", {}, "qdrant_client", ""),
    ("lancedb (MiniLM, hybrid)", "lancedb", {"mode": "hybrid"}, "lancedb", ""),
    ("mem0 (infer=false)", "mem0", {}, "mem0", ""),
    ("Letta archival", "letta", {}, "letta_client", "embeddings"),
    ("graphiti (Kuzu)", "graphiti", {}, "graphiti_core", "stand-in"),
    ("langmem", "langmem", {}, "langmem", "stand-in"),
    ("cognee (chunks)", "cognee", {"mode": "chunks"}, "cognee", "stand-in"),
    ("cognee (graph completion)", "cognee", {"mode": "graph_completion"}, "cognee", "stand-in"),
]
#: store -> (distributions whose versions are "tested", top distributions of its install)
PACKAGES: dict[str, tuple[list[str], list[str]]] = {
    "bm25": (["bm25s"], ["bm25s"]),
    "dense": (["sentence-transformers", "torch"], EMBEDDINGS),
    "chroma": (["chromadb"], ["chromadb"]),
    "qdrant": (["qdrant-client"], ["qdrant-client"]),
    "lancedb": (["lancedb"], ["lancedb"]),
    "mem0": (["mem0ai"], ["mem0ai"]),
    "letta": (["letta-client"], ["letta-client"]),
    "graphiti": (["graphiti-core", "kuzu"], ["graphiti-core", "kuzu"]),
    "langmem": (["langmem", "langgraph"], ["langmem", "langgraph", "langchain-openai"]),
    "cognee": (["cognee"], ["cognee"]),
}
DATASETS = {
    "longmemeval-mini": str(REPO / "tests" / "data" / "longmemeval_mini.json"),
    "demo-en": "demo-en",
}


def _metric(summary, name: str, k: int | None = None, p: float | None = None):
    return next(
        (m for m in summary.overall if m.name == name and m.k == k and m.percentile == p), None
    )


def _hit_interval(run_dir: Path, n: int, value: float) -> str:
    """recall_any@5's interval: cluster-robust by conversation where there are any."""
    items = [i for i in read_items(run_dir) if i.success is not None]
    hits = [next((m.value for m in i.metrics if m.name == "hit" and m.k == 5), None) for i in items]
    convs = [i.groups.get("conversation") for i in items]
    pairs = [(h, c) for h, c in zip(hits, convs, strict=True) if h is not None]
    clusters = [c for _, c in pairs]
    # Questions cluster in conversations (LoCoMo); one question per conversation
    # (LongMemEval's haystacks) or none: independent, Wilson.
    if pairs and None not in clusters and len(set(clusters)) < len(clusters):
        iv = cluster_robust_interval([h for h, _ in pairs], clusters, bounds=(0.0, 1.0))
        return f" [{iv.low:.2f}, {iv.high:.2f}] (n={n}, {len(set(clusters))} conv.)"
    iv = wilson(round(value * n), n)
    return f" [{iv.low:.2f}, {iv.high:.2f}] (n={n})"


def _versions(store: str) -> str:
    out = []
    for name in PACKAGES.get(store, ([], []))[0]:
        try:
            out.append(f"{name} {md.version(name)}")
        except md.PackageNotFoundError:
            continue
    return ", ".join(out) or "–"


def _install(store: str) -> str:
    if store == "bm25":
        return "core"
    top = PACKAGES.get(store, ([], []))[1]
    shared = CORE if store == "dense" else CORE + EMBEDDINGS
    mb = own_mb(top, shared)
    return "–" if mb is None else f"{mb:,.0f}"


def _row(label: str, store: str, llm: str, dataset: str, res) -> str:
    summary = res.summary
    hit = _metric(summary, "hit", 5)
    ci = ""
    if hit is not None and hit.value is not None and hit.n:
        ci = _hit_interval(res.path, hit.n, hit.value)
    ingest = summary.table("ingest").data[0]
    p50, p95 = _metric(summary, "latency", p=50), _metric(summary, "latency", p=95)

    def num(v, fmt: str) -> str:
        return "–" if v is None else format(v, fmt)

    return (
        f"| {label} | {_versions(store)} | {dataset} | {num(hit and hit.value, '.2f')}{ci} "
        f"| {ingest['seconds_per_memory']:.3f} | {num(ingest['llm_calls_per_memory'], '.2f')} "
        f"| {num(ingest['tokens_per_memory'], '.0f')} "
        f"| {num(p50 and p50.value, '.0f')} / {num(p95 and p95.value, '.0f')} "
        f"| {_install(store)} | {llm or 'none'} |"
    )


def _times(label: str, dataset: str, res) -> str:
    """A run's wall times, for the prose: filling, how much fills overlapped, every timing."""
    t = res.header.timings
    fill = t.get("index", 0.0)
    costs = res.path / "ingest.jsonl"
    line = f"{label} on {dataset}: fill {fill:.0f} s wall"
    if costs.exists():  # each store's own seconds, summed: over the wall time, the overlap
        own = sum(json.loads(c)["seconds"] for c in costs.read_text("utf-8").splitlines())
        line += f", {own:.0f} s of store time ({own / max(fill, 1e-9):.2f}x)"
    return line + "; timings: " + ", ".join(f"{k} {v:.0f} s" for k, v in t.items())


def _locomo(path: Path, n: int):
    """LoCoMo's first ``n`` conversations and their questions, one memory per turn."""
    ds = mnemometer.load_dataset(path)
    keep = {c.id for c in ds.conversations[:n]}
    return ds.model_copy(
        update={
            "conversations": ds.conversations[:n],
            "queries": [q for q in ds.queries if q.conversation_id in keep],
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stores", help="comma-separated store names (default: all installed)")
    ap.add_argument("--datasets", default=",".join(DATASETS), help="names or paths")
    ap.add_argument("--locomo", type=int, default=0, help="also LoCoMo's first N conversations")
    ap.add_argument("--locomo-file", type=Path, default=LOCOMO)
    ap.add_argument(
        "--locomo-stores",
        default="bm25,dense,chroma,qdrant,lancedb,mem0,letta",
        help="stores that run LoCoMo (the LLM-backed ones take minutes per turn's worth)",
    )
    ap.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="--concurrency of each run: conversations filled at once, and searches in "
        "flight (search latencies are then measured under that load)",
    )
    ap.add_argument("--letta-url", help="a Letta server (`mnemometer serve letta`)")
    args = ap.parse_args()
    wanted = set(args.stores.split(",")) if args.stores else None
    datasets: dict[str, object] = {d: DATASETS.get(d, d) for d in args.datasets.split(",") if d}
    if args.locomo:
        datasets[f"locomo (first {args.locomo} conv.)"] = _locomo(args.locomo_file, args.locomo)
    print(
        "| system | versions tested | dataset | hit@5 [95% CI] | ingest s / memory "
        "| LLM calls / memory | tokens / memory | search p50 / p95 ms | install MB | LLM |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    if importlib.util.find_spec("sentence_transformers") is not None:
        load_embedder().enable_cache()  # every MiniLM store embeds a text once per process
    with extraction_llm() as llm, tempfile.TemporaryDirectory() as tmp:
        settings = mnemometer.RunSettings(
            llm=LLMSettings(base_url=llm.base_url, model=llm.model), concurrency=args.concurrency
        )
        for label, store, opts, module, uses_llm in STORES:
            if wanted is not None and store not in wanted:
                continue
            if module is not None and importlib.util.find_spec(module) is None:
                print(f"skipped {store}: {module} is not installed", file=sys.stderr)
                continue
            if store == "letta":
                if not args.letta_url:
                    print("skipped letta: no --letta-url", file=sys.stderr)
                    continue
                opts = {**opts, "base_url": args.letta_url}
            for name, ds in datasets.items():
                if name.startswith("locomo") and store not in args.locomo_stores.split(","):
                    continue
                res = mnemometer.run(
                    "retrieval",
                    mnemometer.SystemSpec.store(store, **opts),
                    dataset=ds,
                    out=Path(tmp) / f"{label}-{len(name)}-{abs(hash(name))}",
                    settings=settings,
                )
                print(_row(label, store, uses_llm, name, res), flush=True)
                print(_times(label, name, res), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
