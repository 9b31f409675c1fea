"""The numbers report pages chart: means with 95% intervals, overall and by group.

A suite's summary carries ``Metric.interval`` where the suite computed one; everywhere else
the page computes intervals from the item results with :mod:`mnemometer.stats`: Wilson for
rates (every value 0 or 1), Student t for other means. Both come from the run directory
alone.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mnemometer import stats
from mnemometer.log._schema import ItemResult, Metric

HEADLINE = ("success", "accuracy", "hit", "recall", "mrr", "ndcg", "precision")
"""Metric names charted first, in this order."""
MAX_CHART_GROUPS = 40
"""Group keys with more values than this get a table, not a chart."""


@dataclass(frozen=True)
class Estimate:
    """A mean with its interval, over ``n`` values."""

    label: str
    """``success``, ``hit@10``, ``accuracy``."""
    value: float | None
    """The mean (``None``: no values)."""
    low: float | None
    """Lower bound of the 95% interval (``None``: undefined, e.g. one value)."""
    high: float | None
    """Upper bound."""
    n: int
    """How many values."""
    method: str = ""
    """``wilson``, ``t`` or the suite's own method."""
    higher_is_better: bool = True
    """Direction of improvement."""


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson score 95% interval of ``successes / n`` (``[0, 1]`` for ``n = 0``)."""
    iv = stats.wilson(successes, n)
    return iv.low, iv.high


def t_interval(
    values: Sequence[float], bounds: tuple[float, float] | None = None
) -> tuple[float | None, float | None]:
    """Student-t 95% interval of a mean; undefined (``None``) for fewer than two values.

    ``mnemometer.stats.mean_interval`` gives one value the whole feasible range; a report
    shows no interval there rather than one that says nothing.
    """
    if len(values) < 2:
        return None, None
    iv = stats.mean_interval(values, bounds=bounds)
    return iv.low, iv.high


def estimate(label: str, values: Sequence[float], higher_is_better: bool = True) -> Estimate:
    """Mean and 95% interval: Wilson when every value is 0 or 1, else Student t."""
    n = len(values)
    if n == 0:
        return Estimate(label, None, None, None, 0, "", higher_is_better)
    mean = sum(values) / n
    if all(v in (0.0, 1.0) for v in values):
        low, high = wilson(int(sum(values)), n)
        return Estimate(label, mean, low, high, n, "wilson", higher_is_better)
    unit = min(values) >= 0.0 and max(values) <= 1.0  # a mean of scores in [0, 1] stays there
    low, high = t_interval(values, (0.0, 1.0) if unit else None)
    return Estimate(label, mean, low, high, n, "t", higher_is_better)


def from_metric(m: Metric, label: str) -> Estimate:
    """A summary metric as an estimate (its own interval, when it has one)."""
    iv = m.interval
    low = iv.low if iv is not None else None
    high = iv.high if iv is not None else None
    method = iv.method if iv is not None else ""
    return Estimate(label, m.value, low, high, m.n or 0, method, m.higher_is_better)


def metric_label(m: Metric) -> str:
    """``hit@10``, ``accuracy``, ``latency p95 (ms)``."""
    label = m.name if m.k is None else f"{m.name}@{m.k}"
    if m.percentile is not None:
        label += f" p{m.percentile:g}"
    return label + (f" ({m.unit})" if m.unit else "")


def item_score(r: ItemResult) -> dict[tuple[str, int | None], float]:
    """The item's score metrics (no unit, no percentile) by ``(name, k)``; success too."""
    out: dict[tuple[str, int | None], float] = {}
    if r.success is not None or r.status != "ok":
        out[("success", None)] = 1.0 if (r.status == "ok" and r.success) else 0.0
    for m in r.metrics:
        if m.value is None or m.unit is not None or m.percentile is not None:
            continue
        if m.name == "success" and m.k is None:
            continue  # the item's own success field is the one that counts
        if math.isfinite(m.value):
            out[(m.name, m.k)] = float(m.value)
    return out


def label(name: str, k: int | None) -> str:
    """``name@k`` or ``name``."""
    return name if k is None else f"{name}@{k}"


def chart_metrics(scores: Iterable[dict[tuple[str, int | None], float]], limit: int = 6) -> list:
    """The metrics worth charting: success, then per name the k with the most values.

    Headline names come first (success, accuracy, hit, recall, mrr, ndcg, precision), then
    the rest by how many items have them; at most ``limit``.
    """
    counts: dict[tuple[str, int | None], int] = defaultdict(int)
    for s in scores:
        for key in s:
            counts[key] += 1
    best: dict[str, tuple[str, int | None]] = {}
    for (name, k), c in counts.items():
        cur = best.get(name)
        if cur is None or (c, k or 0) > (counts[cur], cur[1] or 0):
            best[name] = (name, k)

    def order(key: tuple[str, int | None]) -> tuple[int, int, str]:
        rank = HEADLINE.index(key[0]) if key[0] in HEADLINE else len(HEADLINE)
        return rank, -counts[key], key[0]

    return sorted(best.values(), key=order)[:limit]


@dataclass(frozen=True)
class GroupFigure:
    """One group key: an estimate per value and metric."""

    key: str
    """The group key (``type``, ``difficulty``, ``scenario``)."""
    values: list[str]
    """Its values, sorted."""
    rows: list[tuple[str, Estimate]]
    """``(value, estimate)`` for each value and charted metric."""


Scores = Sequence[dict[tuple[str, int | None], float]]


def group_figures(
    items: Sequence[ItemResult], metrics: Sequence, scores: Scores | None = None
) -> list[GroupFigure]:
    """Per group key with 2 to :data:`MAX_CHART_GROUPS` values, each metric's estimate.

    ``scores``: :func:`item_score` of each item, when the caller has them already.
    """
    scores = scores if scores is not None else [item_score(r) for r in items]
    hib = _directions(items)
    buckets: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, r in enumerate(items):
        for key, value in r.groups.items():
            buckets[key][value].append(i)
    out: list[GroupFigure] = []
    for key, by_value in buckets.items():
        if not 2 <= len(by_value) <= MAX_CHART_GROUPS:
            continue
        values = sorted(by_value)
        rows = []
        for value in values:
            idx = by_value[value]
            for name, k in metrics:
                vals = [scores[i][(name, k)] for i in idx if (name, k) in scores[i]]
                if vals:
                    rows.append((value, estimate(label(name, k), vals, hib.get((name, k), True))))
        out.append(GroupFigure(key, values, rows))
    return out


def overall_estimates(items: Sequence[ItemResult], scores: Scores | None = None) -> list[Estimate]:
    """Every score metric over all items (success first), with intervals."""
    scores = scores if scores is not None else [item_score(r) for r in items]
    hib = _directions(items)
    by: dict[tuple[str, int | None], list[float]] = defaultdict(list)
    for s in scores:
        for key, v in s.items():
            by[key].append(v)

    def order(key: tuple[str, int | None]) -> tuple[int, str, int]:
        rank = HEADLINE.index(key[0]) if key[0] in HEADLINE else len(HEADLINE)
        return rank, key[0], key[1] or 0

    return [estimate(label(*key), by[key], hib.get(key, True)) for key in sorted(by, key=order)]


def _directions(items: Sequence[ItemResult]) -> dict[tuple[str, int | None], bool]:
    out: dict[tuple[str, int | None], bool] = {}
    for r in items:
        for m in r.metrics:
            out.setdefault((m.name, m.k), m.higher_is_better)
    return out


def quantiles(values: Sequence[float], points: int = 200) -> list[tuple[float, float]]:
    """``(value, cumulative fraction)`` at up to ``points`` evenly spaced ranks (for ECDFs)."""
    s = sorted(values)
    n = len(s)
    if n == 0:
        return []
    if n <= points:
        return [(v, (i + 1) / n) for i, v in enumerate(s)]
    idx = sorted({round(j * (n - 1) / (points - 1)) for j in range(points)})
    return [(s[i], (i + 1) / n) for i in idx]
