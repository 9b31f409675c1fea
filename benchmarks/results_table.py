"""Regenerate docs/results.md: every store on the seed and generated datasets.

    .venv/bin/python benchmarks/results_table.py                  # everything -> docs/results.md
    .venv/bin/python benchmarks/results_table.py --stores bm25,dense --datasets hp --out -

Datasets: the seed's Harry Potter and Four Novels sets (from ../shared/seed-data, beside the
repository), the built-in demo sets, and generated English and Chinese sets (``mnemometer
generate --size 1000 --seed 1``). Each cell is one retrieval run through the ordinary runner
(``mnemometer.run``), kept in a temporary directory.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from _procs import generate

from mnemometer import RunSettings, SystemSpec

REPO = Path(__file__).resolve().parents[1]
SEED = REPO.parent / "shared" / "seed-data" / "memtest"

BEGIN = "<!-- results:begin (benchmarks/results_table.py) -->"
END = "<!-- results:end -->"

#: (row label, store name, options)
STORES: list[tuple[str, str, dict]] = [
    ("keyword", "keyword", {}),
    ("bm25", "bm25", {}),
    ("tfidf", "tfidf", {}),
    ("dense", "dense", {}),
    ("hybrid", "hybrid", {}),
    ("rerank (bm25 → dense)", "rerank", {"base": "bm25", "by": "dense"}),
    ("chroma", "chroma", {}),
    ("qdrant", "qdrant", {}),
    ("lancedb (vector)", "lancedb", {"mode": "vector"}),
    ("lancedb (fts)", "lancedb", {"mode": "fts"}),
    ("lancedb (hybrid)", "lancedb", {"mode": "hybrid"}),
    ("mem0 (infer=False)", "mem0", {}),
]
#: (dataset, store) pairs left out by default, with the reason shown in the table.
SLOW = {
    ("novels", "mem0"): "about 4,000 one-at-a-time adds; run with --all",
    ("gen-en", "mem0"): "3,000 one-at-a-time adds; run with --all",
    ("gen-zh", "mem0"): "3,000 one-at-a-time adds; run with --all",
}
DATASETS = {
    "hp": ("Harry Potter (seed)", SEED / "hp_benchmark_db.json"),
    "novels": ("Four Novels (seed)", SEED / "four_novels_db.json"),
    "gen-en": ("generated en, 1,000", ("en", 1000)),
    "gen-zh": ("generated zh, 1,000", ("zh", 1000)),
    "demo-en": ("demo-en (built-in)", "demo-en"),
    "demo-zh": ("demo-zh (built-in)", "demo-zh"),
}


def _generate(lang: str, size: int, tmp: Path) -> str:
    return str(generate(tmp / f"gen-{lang}-{size}.json", size, lang, seed=1))


def _metric(summary, key: str) -> float | None:
    return next((m.value for m in summary.overall if m.key == key), None)


def _fmt(v: float | None, spec: str = ".3f") -> str:
    return "–" if v is None else format(v, spec)


def _write(out_arg: str, sections: list[str], hp_types: dict, stores: list) -> None:
    """Write the tables so far (called after every dataset: a partial run leaves a table)."""
    sections = list(sections)
    if hp_types:
        labels = [s[0] for s in stores]
        lines = [
            "## Harry Potter by query type (hit@20 / MRR@20)\n",
            "| type | n | " + " | ".join(labels) + " |",
            "|---|---|" + "---|" * len(labels),
        ]
        for gval in sorted(hp_types):
            cells = hp_types[gval]
            n = next((v[2] for v in cells.values() if v[2] is not None), "")
            lines.append(
                f"| {gval} | {n} | "
                + " | ".join(
                    f"{_fmt(cells[lb][0], '.2f')} / {_fmt(cells[lb][1], '.2f')}"
                    if lb in cells
                    else "–"
                    for lb in labels
                )
                + " |"
            )
        sections.append("\n".join(lines) + "\n")
    text = "\n".join(sections)
    if out_arg == "-":
        print(text)
    else:
        # Only the generated block is replaced; the prose around the markers is kept.
        out = Path(out_arg)
        old = out.read_text(encoding="utf-8") if out.exists() else f"{BEGIN}\n{END}\n"
        if BEGIN not in old or END not in old:
            old = f"{old.rstrip()}\n\n{BEGIN}\n{END}\n"
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        out.write_text(f"{head}{BEGIN}\n\n{text}\n{END}{tail}", encoding="utf-8")
        print(f"wrote {out_arg}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stores", help="comma-separated row labels or store names (default: all)")
    ap.add_argument("--datasets", help=f"comma-separated keys of {', '.join(DATASETS)}")
    ap.add_argument(
        "--out", default=str(REPO / "docs" / "results.md"), help="file, or - for stdout"
    )
    ap.add_argument("--all", action="store_true", help="also run the slow combinations in SLOW")
    args = ap.parse_args()
    from mnemometer.embeddings import load_embedder
    from mnemometer.runner import run

    # Every embedding store in the table uses the packaged MiniLM: embed each text once.
    load_embedder().enable_cache()

    want_s = set(args.stores.split(",")) if args.stores else None
    want_d = args.datasets.split(",") if args.datasets else list(DATASETS)
    stores = [s for s in STORES if want_s is None or s[0] in want_s or s[1] in want_s]
    sections: list[str] = []
    hp_types: dict[str, dict[str, list[float | None]]] = {}
    with tempfile.TemporaryDirectory(prefix="mnemometer-results-") as tmp_s:
        tmp = Path(tmp_s)
        for key in want_d:
            title, src = DATASETS[key]
            if isinstance(src, Path) and not src.exists():
                sections.append(
                    f"## {title}\n\nskipped: {src.name} not found beside the repository\n"
                )
                continue
            dataset = _generate(*src, tmp) if isinstance(src, tuple) else str(src)
            rows = []
            for label, name, opts in stores:
                if (key, name) in SLOW and not args.all:
                    rows.append(f"| {label} | not run: {SLOW[(key, name)]} ||||||||")
                    continue
                t0 = time.perf_counter()
                res = run(
                    "retrieval",
                    SystemSpec.store(name, **opts),
                    dataset=dataset,
                    out=tmp / f"{key}-{name}-{len(rows)}",
                    settings=RunSettings(timeout=120),
                )
                s = res.summary
                rows.append(
                    f"| {label} | {_fmt(_metric(s, 'hit@20'))} | {_fmt(_metric(s, 'mrr@20'))} | "
                    f"{_fmt(_metric(s, 'recall@20'))} | {_fmt(_metric(s, 'tie_at_cutoff'), '.2f')} | "
                    f"{_fmt(_metric(s, 'latency.p50'), '.1f')} | "
                    f"{_fmt(_metric(s, 'latency.p95'), '.1f')} | "
                    f"{_fmt(res.header.timings.get('index'), '.1f')} | {res.failed_items} |"
                )
                print(
                    f"{key:8} {label:24} hit@20 {_fmt(_metric(s, 'hit@20'))} "
                    f"({time.perf_counter() - t0:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
                if key == "hp":
                    for gval, metrics in s.groups.get("type", {}).items():
                        hit = next((m.value for m in metrics if m.key == "hit@20"), None)
                        mrr = next((m.value for m in metrics if m.key == "mrr@20"), None)
                        n = next((m.n for m in metrics if m.key == "hit@20"), None)
                        hp_types.setdefault(gval, {})[label] = [hit, mrr, n]
                getattr(res, "close", lambda: None)()
            n_mem = res.header.dataset
            sections.append(
                f"## {title}\n\n{res.header.item_count} queries; language "
                f"`{n_mem.language}`; content hash `{n_mem.content_hash[:12]}`.\n\n"
                "| store | hit@20 | MRR@20 | recall@20 | ties at cut | p50 ms | p95 ms | index s "
                "| errors |\n"
                "|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
            )
            if args.out != "-":
                _write(args.out, sections, hp_types, stores)
    _write(args.out, sections, hp_types, stores)


if __name__ == "__main__":
    main()
