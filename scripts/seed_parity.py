"""Reproduce MemTest's published retrieval tables beside our default scoring.

Prints the Markdown tables of ``docs/seed-parity.md``. Needs MemTest's files beside the
clone (``../shared/seed-data/memtest/``, or a directory given as the first argument); run
from the repository root: ``python scripts/seed_parity.py [MEMTEST_DIR]``.

Two seed tables:

* Harry Potter, BM25 (README): P@20, Hit@20 and MRR@20 on the raw (5,925) and cleaned
  (1,626) files. The seed scored ids (its HP queries carry no target entity).
* Four Novels (README, NOESIS-II store): P@20, R@20 and MRR@20 with entity-in-text
  relevance, on a random query sample. We have the seed's cleaned 4,058-memory file, not the
  11,794-memory store, so the data differ; both relevance rules are shown.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from mnemometer import run
from mnemometer.runner import RunSettings

SEED_HP = {  # README "BM25 baseline results": P@20, Hit@20, MRR@20
    "hp_benchmark_db_raw.json": (0.048, 0.625, 0.261),
    "hp_benchmark_db.json": (0.057, 0.765, 0.332),
}
SEED_FN_TFIDF = (0.496, 0.832, 0.862)  # README: TF-IDF + jieba, P@20, R@20, MRR@20
SAMPLE, SEED = 500, 0


def _at20(result, name: str) -> float:
    m = next(m for m in result.summary.overall if m.name == name and m.k == 20)
    return float(m.value)


def _run(tmp: Path, data: Path, store: str, **options) -> object:
    out = tmp / f"{data.stem}-{store}-{'-'.join(map(str, options.values())) or 'ids'}"
    return run(
        "retrieval",
        store,
        dataset=data,
        suite_options={"top_k": 20, **options},
        out=out,
        settings=RunSettings(seed=SEED),
        sample=SAMPLE,
    )


def main(root: Path) -> None:
    """Print both tables."""
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        print("| file | queries | P@20 seed / ours | Hit@20 seed / ours | MRR@20 seed / ours |")
        print("|---|---|---|---|---|")
        for name, (p, h, mrr) in SEED_HP.items():
            r = _run(tmp, root / name, "bm25")
            ours = (_at20(r, "precision"), _at20(r, "hit"), _at20(r, "mrr"))
            print(
                f"| {name} | {r.header.item_count} | {p:.1%} / {ours[0]:.1%} "
                f"| {h:.1%} / {ours[1]:.1%} | {mrr:.3f} / {ours[2]:.3f} |"
            )
        print()
        print("| store | relevance | queries | P@20 | R@20 | Hit@20 | MRR@20 |")
        print("|---|---|---|---|---|---|---|")
        p, rec, mrr = SEED_FN_TFIDF
        seed_row = f"| {p:.1%} | {rec:.1%} | - | {mrr:.3f} |"
        print("| seed's TF-IDF (NOESIS-II store, 11,794 memories) | entity | 500 " + seed_row)
        for store in ("tfidf", "bm25"):
            for relevance in ("entity", "ids"):
                r = _run(tmp, root / "four_novels_db.json", store, relevance=relevance)
                vals = [_at20(r, m) for m in ("precision", "recall", "hit", "mrr")]
                print(
                    f"| {store} | {relevance} | {r.header.item_count} | {vals[0]:.1%} "
                    f"| {vals[1]:.1%} | {vals[2]:.1%} | {vals[3]:.3f} |"
                )


if __name__ == "__main__":
    default = Path(__file__).resolve().parents[1].parent / "shared" / "seed-data" / "memtest"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
