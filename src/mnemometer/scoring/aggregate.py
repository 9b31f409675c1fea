"""Aggregates over item results: means by metric, latency distributions, a generic summary.

A metric is identified by its name and parameters (``k``, ``percentile``, ``unit``), never by
a key string; means skip not-applicable values (``None``) and say how many values they used.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from mnemometer.log._reader import read_header, read_items, read_summary, summary_is_current
from mnemometer.log._schema import ItemResult, Metric, RunHeader, Summary

_Key = tuple[str, int | None, float | None, str | None]


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (linear interpolation), or None for no values."""
    if not values:
        return None
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def distribution(
    name: str, values: Sequence[float], unit: str = "ms", percentiles: Sequence[float] = (50, 95)
) -> list[Metric]:
    """Mean and percentiles of a distribution (latency, tokens), lower is better."""
    n = len(values)
    out = [
        Metric(
            name=name, unit=unit, value=sum(values) / n if n else None, higher_is_better=False, n=n
        )
    ]
    out += [
        Metric(
            name=name,
            percentile=float(q),
            unit=unit,
            value=percentile(values, q),
            higher_is_better=False,
            n=n,
        )
        for q in percentiles
    ]
    return out


def latency_metrics(latencies_ms: Sequence[float]) -> list[Metric]:
    """Mean, p50 and p95 latency in milliseconds."""
    return distribution("latency", latencies_ms, "ms")


def mean_metrics(per_item: Iterable[list[Metric]]) -> list[Metric]:
    """Average metrics by name and parameters over items, skipping not-applicable values."""
    sums: dict[_Key, list[float]] = {}
    direction: dict[_Key, bool] = {}
    for metrics in per_item:
        for m in metrics:
            key = (m.name, m.k, m.percentile, m.unit)
            direction[key] = m.higher_is_better
            bucket = sums.setdefault(key, [])
            if m.value is not None:
                bucket.append(m.value)
    return [
        Metric(
            name=name,
            k=k,
            percentile=pct,
            unit=unit,
            value=(sum(v) / len(v)) if v else None,
            higher_is_better=direction[(name, k, pct, unit)],
            n=len(v),
        )
        for (name, k, pct, unit), v in sums.items()
    ]


def group_means(
    items: Sequence[ItemResult], keys: Iterable[str]
) -> dict[str, dict[str, list[Metric]]]:
    """Metric means by the value of each group key, for the keys some item has."""
    groups: dict[str, dict[str, list[Metric]]] = {}
    for key in keys:
        buckets: dict[str, list[ItemResult]] = defaultdict(list)
        for r in items:
            if key in r.groups:
                buckets[r.groups[key]].append(r)
        if buckets:
            groups[key] = {
                v: mean_metrics(r.metrics for r in rs) for v, rs in sorted(buckets.items())
            }
    return groups


def counts(items: Sequence[ItemResult], planned: int) -> dict[str, int]:
    """Items, planned, errors, timeouts and successes of a list of results."""
    return {
        "items": len({(r.item_id) for r in items}),
        "results": len(items),
        "planned": planned,
        "errors": sum(r.status == "error" for r in items),
        "timeouts": sum(r.status == "timeout" for r in items),
        "succeeded": sum(r.success is True for r in items),
    }


def generic_summary(header: RunHeader, items: list[ItemResult], note: str = "") -> Summary:
    """A summary from the items alone: means by metric, overall and by every group key.

    Used for runs without a current ``summary.json`` (unfinished runs, older logs), so a
    report never needs the suite that produced the run.
    """
    overall = mean_metrics(r.metrics for r in items if r.status == "ok" or r.metrics)
    overall += latency_metrics([r.latency_ms for r in items if r.latency_ms is not None])
    succ = [r.success for r in items if r.success is not None]
    if succ:
        overall.insert(0, Metric(name="success", value=sum(succ) / len(succ), n=len(succ)))
    buckets: dict[str, dict[str, list[ItemResult]]] = defaultdict(lambda: defaultdict(list))
    for r in items:
        for key, value in r.groups.items():
            buckets[key][value].append(r)
    groups = {
        key: {v: mean_metrics(r.metrics for r in rs) for v, rs in sorted(values.items())}
        for key, values in buckets.items()
        if len(values) < len(items) or len(items) < 2  # skip per-item ids as "groups"
    }
    notes = list(header.dataset.notes) + list(header.notes)
    if note:
        notes.append(note)
    return Summary(
        run_id=header.run_id,
        results=len(items),
        source="generic",
        overall=overall,
        groups=groups,
        counts=counts(items, header.item_count),
        notes=notes,
    )


def run_summary(run_dir: str | Path) -> Summary:
    """A run's summary: ``summary.json`` when current, else one from its items alone.

    The fallback is :func:`generic_summary` (means by group), for unfinished runs and logs
    of older versions. Never needs the suite, its inputs or any optional extra.
    """
    stored = read_summary(run_dir)
    if stored is not None and summary_is_current(run_dir, stored):
        return stored  # the log has not changed since: no item needs reading
    header = read_header(run_dir)
    items = read_items(run_dir)
    if stored is not None and stored.results == len(items):
        return stored
    why = (
        "summary.json is older than the item results (the run was resumed or is unfinished)"
        if stored is not None
        else "no summary.json (an unfinished run, or one from an older mnemometer)"
    )
    note = f"{why}; `mnemometer log summarize {run_dir}` recomputes the suite's own summary"
    return generic_summary(header, items, note=note)
