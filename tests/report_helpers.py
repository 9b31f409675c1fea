"""Synthetic run directories for the report tests: any size, every item shape a page shows."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

from mnemometer.log._schema import (
    DatasetRef,
    ItemResult,
    Metric,
    RetrievedHit,
    RunHeader,
    SystemRef,
)
from mnemometer.log._writer import ItemWriter, write_header

TYPES = ("person", "event", "location", "composite")
LEVELS = ("easy", "medium", "hard")


def synthetic_run(
    path: Path,
    n: int,
    *,
    seed: int = 0,
    system: str = "bm25",
    condition: str | None = None,
    dataset_hash: str = "d" * 64,
    dataset: str = "synthetic",
    hit_rate: float = 0.7,
    errors: int = 3,
) -> Path:
    """A finished retrieval-shaped run of ``n`` items: hits, misses, errors, answers, turns."""
    rng = random.Random(seed)
    path.mkdir(parents=True)
    header = RunHeader(
        run_id=f"{system}-{seed}-{n}",
        run_group=f"g-{system}-{seed}",
        suite="retrieval",
        suite_version="1",
        suite_options={"top_k": 10, "ks": [1, 10]},
        success_definition="a relevant memory in the top 10",
        dataset=DatasetRef(
            name=dataset,
            version="1",
            content_hash=dataset_hash,
            language="en",
            notes=["query q3 relabelled (erratum 2)"],
        ),
        system=SystemRef(name=system, condition=condition, implementation="x:Y", version="1"),
        config_fingerprint="f",
        package_version="0.1.0",
        python_version="3.11",
        platform="linux",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        status="finished",
        item_count=n,
        timings={"index": 1.5, "items": 3.25, "total": 4.75},
    )
    write_header(path, header)
    w = ItemWriter(path)
    for i in range(n):
        expected = [f"m{i}", f"m{i + 1}"]
        hit = rng.random() < hit_rate
        pool = [f"m{rng.randrange(n + 2)}" for _ in range(9)]
        retrieved = ([expected[0]] if hit else []) + pool
        rng.shuffle(retrieved)
        failed = i < errors
        metrics = []
        for k in (1, 10):
            top = retrieved[:k]
            got = len(set(top) & set(expected))
            metrics += [
                Metric(name="hit", k=k, value=float(got > 0)),
                Metric(name="recall", k=k, value=got / len(expected)),
            ]
        w.write(
            ItemResult(
                item_id=f"q{i:05d}",
                index=i,
                status="error" if failed else "ok",
                error="TimeoutError: store did not answer in 5 s" if failed else None,
                success=False if failed else hit,
                input=f"Where did person {i} travel in week {i % 52}?",
                groups={"type": TYPES[i % len(TYPES)], "difficulty": LEVELS[i % len(LEVELS)]},
                expected=expected,
                retrieved=[]
                if failed
                else [RetrievedHit(id=h, score=1.0 / (1 + j)) for j, h in enumerate(retrieved)],
                output=None if failed else f"Person {i} went to city {rng.randrange(100)}.",
                metrics=[] if failed else metrics,
                latency_ms=None if failed else rng.lognormvariate(0.0, 0.8),
                tokens={} if failed else {"prompt": 40 + i % 7, "completion": 5},
                extra={} if failed else {"judge": {"verdict": "correct" if hit else "wrong"}},
            )
        )
    w.close()
    return path
