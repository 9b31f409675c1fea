"""Descriptive statistics of a dataset's records (the golden figures tests compare)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any


class Stats:
    """Accumulates statistics record by record (so it works on a stream)."""

    def __init__(self) -> None:
        self.n_mem = 0
        self.chars: dict[str, list[int]] = defaultdict(lambda: [0, 0, 1 << 30, 0])
        self.people: set[str] = set()
        self.places: set[tuple[str, str]] = set()
        self.topics: Counter[str] = Counter()
        self.chains: dict[str, int] = {}
        self.clusters: Counter[str] = Counter()
        self.frequency: Counter[str] = Counter()
        self.deep = 0
        self.n_q = 0
        self.rel: dict[str, list[int]] = defaultdict(lambda: [0, 0, 1 << 30, 0])
        self.difficulty: Counter[str] = Counter()
        self.distance: Counter[str] = Counter()

    def memory(self, m: dict[str, Any]) -> None:
        """Count one memory record (returns None, so it chains in generator expressions)."""
        self.n_mem += 1
        for v in m["versions"]:
            _tally(self.chars[v["style"]], len(v["text"]))
        meta = m["metadata"]
        self.people.add(meta["person"])
        if "place" in meta:
            self.places.add((meta["city"], meta["place"]))
        self.topics[meta["topic"]] += 1
        if "chain" in meta:
            self.chains[meta["chain"]] = meta["chain_length"]
        self.clusters[meta["cluster"]] += 1
        if "frequency" in meta:
            self.frequency[meta["frequency"]] += 1
        if meta["age_days"] >= 365:
            self.deep += 1

    def query(self, q: dict[str, Any]) -> None:
        """Count one query record."""
        self.n_q += 1
        _tally(self.rel[q["type"]], len(q["relevant_ids"]))
        self.difficulty[q.get("difficulty") or "none"] += 1
        if "semantic_distance" in q["metadata"]:
            self.distance[q["metadata"]["semantic_distance"]] += 1

    def result(self) -> dict[str, Any]:
        """The statistics as plain JSON-ready values, keys sorted."""

        def span(c: list[int], key: str) -> dict[str, Any]:
            return {
                "count": c[0],
                f"{key}_mean": round(c[1] / c[0], 3) if c[0] else None,
                f"{key}_min": c[2] if c[0] else None,
                f"{key}_max": c[3] if c[0] else None,
                f"{key}_total": c[1],
            }

        return {
            "memories": self.n_mem,
            "versions": {s: span(c, "chars") for s, c in sorted(self.chars.items())},
            "people": len(self.people),
            "places": len(self.places),
            "topics": dict(sorted(self.topics.items())),
            "chains": len(self.chains),
            "chain_lengths": {str(k): v for k, v in sorted(Counter(self.chains.values()).items())},
            "clusters_3plus": sum(1 for v in self.clusters.values() if v >= 3),
            "frequency": dict(sorted(self.frequency.items())),
            "deep_memories": self.deep,
            "queries": self.n_q,
            "query_types": {t: span(c, "relevant") for t, c in sorted(self.rel.items())},
            "difficulty": dict(sorted(self.difficulty.items())),
            "semantic_distance": dict(sorted(self.distance.items())),
        }


def describe(
    memories: Iterable[dict[str, Any]], queries: Iterable[dict[str, Any]]
) -> dict[str, Any]:
    """Descriptive statistics of memory and query records (counts, lengths, relevant sets)."""
    s = Stats()
    for m in memories:
        s.memory(m)
    for q in queries:
        s.query(q)
    return s.result()


def _tally(c: list[int], n: int) -> None:
    """Add one value to a running ``[count, total, min, max]``."""
    c[0] += 1
    c[1] += n
    c[2] = min(c[2], n)
    c[3] = max(c[3], n)
