"""Memory scalability as the Letta-vs-Mem0 benchmark meant it: latency against facts stored.

The seed's ``memory_scalability`` scenario asked "does the system slow down as it stores
50+ facts?" but only graded the answers. Here every turn of every scenario is a point:
x is the number of facts the agent had been told before the turn (the earlier turns of
that scenario play), y its latency (total, and memory operations where the agent reports
them). Points are binned into at most ten bins of a round width; the least-squares slope
(milliseconds per stored fact) summarises the trend.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mnemometer.log._schema import ItemResult
from mnemometer.scoring.aggregate import percentile

_WIDTHS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def points(items: list[ItemResult]) -> list[tuple[int, float, float | None]]:
    """``(facts stored before the turn, turn latency ms, memory ms or None)`` per turn."""
    out = []
    for r in items:
        for k, t in enumerate(r.extra.get("turns", [])):
            ms = t.get("latency_ms")
            if isinstance(ms, int | float) and math.isfinite(ms):
                mem = t.get("memory_ms")
                out.append((k, float(ms), float(mem) if isinstance(mem, int | float) else None))
    return out


def slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of ``ys`` on ``xs`` (``None`` with fewer than two distinct xs)."""
    if len(set(xs)) < 2:
        return None
    return float(np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)[0])


def latency_by_facts(items: list[ItemResult]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Latency binned by facts stored, and the trend.

    Returns:
        rows (``facts_from``, ``facts_to``, ``turns``, mean and p95 latency, mean memory
        ms) and the slopes (``ms_per_fact``, ``memory_ms_per_fact``).
    """
    pts = points(items)
    if not pts:
        return [], {"ms_per_fact": None, "memory_ms_per_fact": None}
    top = max(k for k, _, _ in pts)
    width = next((w for w in _WIDTHS if (top // w) + 1 <= 10), _WIDTHS[-1])
    bins: dict[int, list[tuple[int, float, float | None]]] = {}
    for p in pts:
        bins.setdefault(p[0] // width, []).append(p)
    rows = []
    for b in sorted(bins):
        ps = bins[b]
        lat = [p[1] for p in ps]
        mem = [p[2] for p in ps if p[2] is not None]
        rows.append(
            {
                "facts_from": b * width,
                "facts_to": b * width + width - 1,
                "turns": len(ps),
                "mean_latency_ms": sum(lat) / len(lat),
                "p95_latency_ms": percentile(lat, 95),
                "mean_memory_ms": sum(mem) / len(mem) if mem else None,
            }
        )
    mem_pts = [(k, m) for k, _, m in pts if m is not None]
    slopes = {
        "ms_per_fact": slope([p[0] for p in pts], [p[1] for p in pts]),
        "memory_ms_per_fact": slope([k for k, _ in mem_pts], [m for _, m in mem_pts])
        if mem_pts
        else None,
    }
    return rows, slopes
