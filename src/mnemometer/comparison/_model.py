"""The comparison JSON written by ``mnemometer compare`` and read by ``mnemometer gate``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from mnemometer.config import StrictModel
from mnemometer.log._schema import HeadlineSpec

COMPARISON_SCHEMA_VERSION = 3


class IntervalOut(StrictModel):
    """A confidence interval of a mean paired delta."""

    method: str
    """``percentile`` or ``bca`` (independent items), ``cluster-robust CR2 (Bell-McCaffrey
    df)`` (clustered items) or ``grouped jackknife`` (a composite headline)."""
    low: float | None
    """Lower bound (``None`` when undefined, e.g. one cluster)."""
    high: float | None
    """Upper bound."""
    confidence: float
    """Nominal coverage."""


class PairedDelta(StrictModel):
    """A paired delta and its test: what every test in a comparison reports."""

    pairs: int
    """Items (the statistical unit, repeats aggregated) where both sides have a value."""
    p_value: float | None = 1.0
    """Two-sided p of the paired test named in ``test`` (1 when every delta is 0; ``None``
    when no test is valid, see ``no_claim``)."""
    p_holm: float | None = None
    """Holm-adjusted p over every test in the comparison (the headline and every metric,
    overall and per group)."""
    test: str | None = None
    """The paired test behind ``p_value``: McNemar's exact test (independent 0/1 items), an
    exact or Monte Carlo sign-flip permutation test (independent items), the cluster-robust
    CR2 t test on Bell-McCaffrey df (clustered items), a grouped-jackknife t test (a
    composite headline)."""
    intervals: list[IntervalOut] = Field(default_factory=list)
    """Intervals of the (mean) delta: bootstrap percentile and BCa for independent items,
    CR2 for clustered ones; none when no claim is possible."""
    clusters: int | None = None
    """Clusters among the pairs, when items cluster."""
    no_claim: str | None = None
    """Why no interval or test is given (too few clusters); a gate fails with it."""
    mde: float | None = None
    """Minimum detectable effect (two-sided alpha 0.05, power 0.8) at this many pairs."""


class HeadlineStats(PairedDelta):
    """The declared headline compared pair by pair: both sides, the delta, its test."""

    baseline: float | None
    """The baseline's headline over the paired items (a composite: over its items)."""
    candidate: float | None
    """The candidate's headline over the paired items."""
    delta: float | None
    """Candidate minus baseline."""
    mcnemar_b: int | None = None
    """0/1 headline, independent items: pairs the baseline failed and the candidate passed."""
    mcnemar_c: int | None = None
    """0/1 headline, independent items: pairs the baseline passed and the candidate failed."""


class MetricDelta(PairedDelta):
    """One metric compared pair by pair (``p_value`` from the paired test named in ``test``)."""

    key: str
    """Display key, e.g. ``recall@10`` or ``recall_at_k``."""
    name: str
    """Metric name."""
    k: int | None = None
    """Cut-off, for metrics at k."""
    higher_is_better: bool = True
    """Direction of improvement."""
    baseline_mean: float | None
    """Mean over the baseline's values."""
    candidate_mean: float | None
    """Mean over the candidate's values."""
    mean_delta: float | None
    """Mean of the paired deltas (candidate minus baseline)."""


class GroupStats(StrictModel):
    """The comparison restricted to items with one breakdown value."""

    key: str
    """``field:value``, e.g. ``eval_type:grounded_answer``."""
    headline: HeadlineStats
    """The headline inside the group (items the headline counts)."""
    metrics: list[MetricDelta] = Field(default_factory=list)
    """Metric deltas inside the group."""
    baseline_tokens: int = 0
    """Baseline tokens inside the group."""
    candidate_tokens: int = 0
    """Candidate tokens inside the group."""


class SideInfo(StrictModel):
    """One side of the comparison."""

    runs: list[str]
    """Run directories."""
    conditions: list[str]
    """Distinct conditions (or store names) of those runs."""
    run_groups: list[str]
    """Distinct run groups."""
    repeats: int
    """Number of runs."""
    total_tokens: int = 0
    """Tokens over paired items."""
    mean_latency_ms: float | None = None
    """Mean latency over paired items that recorded one."""
    failed: int = 0
    """Paired items that errored or timed out on this side (they score as failures)."""
    unfinished: list[str] = Field(default_factory=list)
    """Runs of this side that did not finish (their missing items are unpaired)."""
    judge_false_positive_rates: dict[str, float | None] = Field(default_factory=dict)
    """Each judge's false-positive rate on answers known to be wrong (the highest over this
    side's runs; from their summaries)."""


class CostStats(StrictModel):
    """Tokens and latency, candidate minus baseline."""

    token_delta: int = 0
    """Candidate total tokens minus baseline total tokens (paired items)."""
    mean_token_delta: float | None = None
    """Mean paired token delta per pair."""
    latency_delta_ms: float | None = None
    """Candidate mean latency minus baseline mean latency."""
    cost_adjusted_delta_per_1k_tokens: float | None = None
    """Headline delta per 1,000 added tokens (the plain delta when no tokens were added)."""


class Comparison(StrictModel):
    """Two sets of runs paired item by item, with statistics."""

    schema_version: int = COMPARISON_SCHEMA_VERSION
    """Comparison schema version (always first)."""
    kind: Literal["mnemometer-comparison"] = "mnemometer-comparison"
    """File kind."""
    created_at: datetime
    """When the comparison was made (UTC)."""
    suite: str
    """Suite name."""
    suite_version: str
    """Suite version."""
    dataset_hash: str
    """Dataset content hash shared by every run (the first run's when forced)."""
    forced: bool = False
    """True when runs that do not match were paired anyway with ``--force``."""
    mismatches: list[str] = Field(default_factory=list)
    """Why the runs would not pair without ``--force``."""
    varies: list[str] = Field(default_factory=list)
    """What the user declared the experiment varies beyond the system (``--vary judge``)."""
    differs: list[str] = Field(default_factory=list)
    """Everything that differs between the sides, one line each (``system: bm25 -> dense``)."""
    aggregation: str = ""
    """How repeats were aggregated per item before the tests."""
    headline_spec: HeadlineSpec
    """The headline both sides are judged by (the baseline's, under ``--vary``)."""
    candidate_headline_spec: HeadlineSpec | None = None
    """The candidate's headline, when ``--vary`` lets it differ from the baseline's."""
    resamples: int
    """Bootstrap resamples."""
    seed: int
    """Bootstrap seed."""
    confidence: float
    """Interval coverage."""
    baseline: SideInfo
    """The baseline runs."""
    candidate: SideInfo
    """The candidate runs."""
    pairs: int
    """Paired observations (item × repeat × step), before aggregation."""
    items: int = 0
    """Statistical units: items (and build steps) with their repeats aggregated."""
    unpaired: int = 0
    """Item results present on one side only (listed in notes, never dropped silently)."""
    cluster_by: str | None = None
    """What groups dependent pairs (``item`` across repeats, ``conversation``, ``fixture``)."""
    clusters: int | None = None
    """Number of clusters, when clustering applies."""
    headline: HeadlineStats
    """The headline over every pair: what ``gate`` decides on."""
    metrics: list[MetricDelta] = Field(default_factory=list)
    """Per-metric paired deltas."""
    cost: CostStats
    """Token and latency deltas."""
    groups: list[GroupStats] = Field(default_factory=list)
    """Breakdowns by item type and item metadata."""
    notes: list[str] = Field(default_factory=list)
    """Caveats the reader should see."""
    claim_warnings: list[str] = Field(default_factory=list)
    """Why the comparison cannot yet support an external claim (not held-out, fewer than
    100 reviewed items); ``gate`` repeats them as warnings."""

    def to_pandas(self) -> Any:
        """One row per (group, metric): means, delta, p, Holm p and the preferred interval.

        The headline is the metric ``headline``; the overall rows have group ``""``.
        Needs ``pip install 'mnemometer[analysis]'``.
        """
        from mnemometer.log._frame import pandas

        def row(group: str, key: str, t: HeadlineStats | MetricDelta) -> dict[str, Any]:
            base = t.baseline if isinstance(t, HeadlineStats) else t.baseline_mean
            cand = t.candidate if isinstance(t, HeadlineStats) else t.candidate_mean
            delta = t.delta if isinstance(t, HeadlineStats) else t.mean_delta
            iv = preferred(t.intervals)
            return {
                "group": group,
                "metric": key,
                "items": t.pairs,
                "baseline": base,
                "candidate": cand,
                "delta": delta,
                "p": t.p_value,
                "p_holm": t.p_holm,
                "ci_low": iv.low if iv else None,
                "ci_high": iv.high if iv else None,
                "ci_method": iv.method if iv else None,
            }

        rows = [row("", "headline", self.headline)] + [row("", m.key, m) for m in self.metrics]
        for g in self.groups:
            rows += [row(g.key, "headline", g.headline)]
            rows += [row(g.key, m.key, m) for m in g.metrics]
        return pandas().DataFrame(rows)

    def __repr__(self) -> str:
        """One line: the sides, the headline both ways, its delta, interval and test."""
        h = self.headline
        sides = f"{', '.join(self.candidate.conditions)} vs {', '.join(self.baseline.conditions)}"
        if h.delta is None or h.baseline is None or h.candidate is None:
            return f"Comparison({self.suite}: {sides}, no paired headline values)"
        iv = preferred(h.intervals)
        ci = (
            f", 95% CI [{100 * iv.low:+.1f}, {100 * iv.high:+.1f}]"
            if iv is not None and iv.low is not None and iv.high is not None
            else ""
        )
        test = f", {h.test} p={h.p_value:.3g}" if h.p_value is not None else f", {h.no_claim}"
        return (
            f"Comparison({self.suite}: {sides}, {self.headline_spec.label} "
            f"{100 * h.baseline:.1f}% -> {100 * h.candidate:.1f}% ({100 * h.delta:+.1f} pp{ci}"
            f"{test}), {self.items} items)"
        )

    def __str__(self) -> str:
        """``print(comparison)``: the one line of :meth:`__repr__` (pydantic prints every field)."""
        return repr(self)

    def group(self, key: str) -> GroupStats | None:
        """The group with ``key``, if any."""
        return next((g for g in self.groups if g.key == key), None)

    def metric(self, key: str) -> MetricDelta | None:
        """The metric with display key or name ``key``, if any.

        ``NAME_at_k`` (Memory Layer's spelling) also finds ``NAME@k`` at the largest k, so
        its gate files work on runs of the retrieval suite.
        """
        found = next((m for m in self.metrics if key in (m.key, m.name)), None)
        if found is None and key.endswith("_at_k"):
            at_k = [m for m in self.metrics if m.name == key[:-5] and m.k is not None]
            found = max(at_k, key=lambda m: m.k or 0, default=None)
        return found


PREFERRED = ("cluster-robust CR2 (Bell-McCaffrey df)", "grouped jackknife", "bca", "percentile")
"""Which interval a report shows first, when a test has several."""


def preferred(intervals: list[IntervalOut]) -> IntervalOut | None:
    """The interval to show: the design's own (clustered, jackknife), else BCa."""
    return next((i for m in PREFERRED for i in intervals if i.method == m), None)
