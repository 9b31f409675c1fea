"""A run's headline: one per-item value per item in scope, their mean, its interval.

A suite declares its headline once (:class:`~mnemometer.log._schema.HeadlineSpec`, recorded
in the run header). Everything that shows or decides on a run's number goes through here:
the summary (``summary.json``'s ``headline``), the reports, ``compare`` (the per-item
values, paired), ``gate`` (through the comparison) and ``leaderboard`` (the values pooled
over repeats). So a run's summary, its leaderboard cell and its side of a comparison are
the same number by construction.

Per item: out of scope (an excluded group, no ground truth where it is needed) is ``None``;
a failed item is 0; otherwise the item's metric. A metric a scorer could not give (a judge
whose call failed or whose reply could not be read: the record's ``unscored``) is left out
and counted apart: the judge failed, not the system, and a resume asks it again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mnemometer.log._schema import Headline, HeadlineSpec, ItemResult, RunHeader, Summary
from mnemometer.scoring.intervals import interval

LEGACY = HeadlineSpec(
    metric="success",
    label="success",
    scope="items the suite's success rule scores (a run from before headlines)",
    binary=True,
    cluster="conversation",
)
"""The headline of a run recorded before suites declared one: its items' ``success``."""


def spec_of(header: RunHeader) -> HeadlineSpec:
    """The headline a run declared, or :data:`LEGACY` for a run from before headlines."""
    return header.scoring.headline if header.scoring is not None else LEGACY


def in_scope(r: ItemResult, spec: HeadlineSpec) -> bool:
    """Whether item ``r`` counts toward the headline."""
    for key, values in spec.exclude.items():
        if r.groups.get(key) in values:
            return False
    if spec.needs_expected and not r.expected:
        return False
    return True


def item_value(r: ItemResult, spec: HeadlineSpec) -> float | None:
    """The item's contribution to the headline (``None``: it does not count)."""
    if spec.composite or not in_scope(r, spec):
        return None
    if spec.metric == "success":
        if r.status != "ok":
            return 0.0
        return None if r.success is None else float(r.success)
    if r.status != "ok":
        return 0.0
    for m in r.metrics:
        if m.name == spec.metric and m.k == spec.k and m.percentile is None:
            if m.value is not None:
                return float(m.value)
            break
    return None


def cluster_of(r: ItemResult, spec: HeadlineSpec) -> str:
    """The item's cluster: its ``spec.cluster`` group, else its item id.

    The item id makes every step of a multi-step item (a conversation's questions, a build
    sequence's steps) one cluster, and a single-step item a cluster of its own.
    """
    if spec.cluster is not None:
        value = r.groups.get(spec.cluster)
        if value:
            return f"{spec.cluster}:{value}"
    return f"item:{r.item_id}"


def values(
    items: Iterable[ItemResult], spec: HeadlineSpec
) -> tuple[list[float], list[str], list[tuple[str, str]]]:
    """Per-item headline values with their clusters and ``(item_id, step)`` keys."""
    vals: list[float] = []
    clusters: list[str] = []
    keys: list[tuple[str, str]] = []
    for r in items:
        v = item_value(r, spec)
        if v is not None:
            vals.append(v)
            clusters.append(cluster_of(r, spec))
            keys.append((r.item_id, r.step or ""))
    return vals, clusters, keys


def headline(
    spec: HeadlineSpec, items: Sequence[ItemResult], summary: Summary | None = None
) -> Headline:
    """The headline of a run's items: the mean of the values in scope and its interval.

    A composite headline (``spec.composite``) is read from ``summary``'s overall metric of
    that name; it has no per-item values and no interval here.
    """
    if spec.composite:
        found = None
        if summary is not None:
            found = next(
                (m for m in summary.overall if m.name == spec.metric and m.k == spec.k), None
            )
        return Headline(
            **spec.model_dump(),
            value=found.value if found is not None else None,
            n=len({r.item_id for r in items}),
        )
    vals, clusters, _ = values(items, spec)
    if not vals:
        return Headline(**spec.model_dump(), value=None, n=0)
    distinct = len(set(clusters))
    return Headline(
        **spec.model_dump(),
        value=sum(vals) / len(vals),
        interval=interval(vals, clusters, binary=spec.binary),
        n=len(vals),
        clusters=distinct if distinct < len(vals) else None,
    )


def describe(h: HeadlineSpec | Mapping[str, Any]) -> str:
    """``hit@10 over queries with ground truth``: the label and its scope, for people."""
    spec = h if isinstance(h, HeadlineSpec) else HeadlineSpec.model_validate(h)
    return spec.label if spec.scope == "every item" else f"{spec.label} ({spec.scope})"


__all__ = [
    "LEGACY",
    "cluster_of",
    "describe",
    "headline",
    "in_scope",
    "item_value",
    "spec_of",
    "values",
]
