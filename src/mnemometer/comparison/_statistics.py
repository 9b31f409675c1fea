"""The statistics of a comparison, with the item (or the cluster of items) as the unit.

Repeats of an item are not independent observations: three deterministic repeats of the
same comparison would otherwise triple the sample and shrink every p-value. So repeats are
aggregated per item first (a 0/1 headline by majority vote, ties broken towards
"unchanged"; every other value by its mean), and every test, interval, Holm adjustment and
minimum detectable effect works on items.

Which test a column gets depends on the design, decided here only:

* items that cluster (the questions of a conversation, a haystack, a scenario's epochs, a
  build sequence's steps): the cluster-robust CR2 t test on Bell-McCaffrey degrees of
  freedom and its interval (:func:`mnemometer.stats.cluster_robust_test`); with fewer
  than :data:`~mnemometer.stats.MIN_CLUSTERS` clusters no interval or test at all, and
  the reason instead;
* independent items: McNemar's exact test for a 0/1 headline, an exact or Monte Carlo
  sign-flip permutation test otherwise, with bootstrap percentile and BCa intervals;
* a composite headline (MemTest's weighted overall): a grouped jackknife over the items.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from mnemometer import stats
from mnemometer.comparison._claims import run_claim_warnings
from mnemometer.comparison._composite import composite_headline
from mnemometer.comparison._model import (
    Comparison,
    CostStats,
    GroupStats,
    HeadlineStats,
    IntervalOut,
    MetricDelta,
    PairedDelta,
    SideInfo,
)
from mnemometer.comparison._pairs import MetricInfo, Pair, condition_of
from mnemometer.log._reader import RunLog
from mnemometer.log._schema import HeadlineSpec

AGGREGATION = (
    "repeats are aggregated per item before any test: a 0/1 headline by majority vote (an "
    "item tied on one side takes the other side's vote, tied on both fails on both, so a "
    "tie never makes a discordant pair), every other value by its mean over repeats"
)


@dataclass
class _Unit:
    """One item (or build step) with its repeats aggregated."""

    key: tuple[str, str]
    cluster: str
    groups: dict[str, str]
    base_h: float  # NaN when the item does not count toward the headline
    cand_h: float
    base_m: dict[str, float]
    cand_m: dict[str, float]
    repeats: int


def _aggregate(pairs: list[Pair], metric_keys: list[str], binary: bool) -> tuple[list[_Unit], int]:
    """One unit per (item, step); returns the units and how many majority votes tied."""
    by: dict[tuple[str, str], list[Pair]] = {}
    for p in pairs:
        by.setdefault((p.item_id, p.step), []).append(p)
    units: list[_Unit] = []
    ties = 0
    for key, ps in by.items():
        votes = [(p.base_h, p.cand_h) for p in ps if p.base_h is not None and p.cand_h is not None]
        b_h = c_h = math.nan
        if votes and binary:
            agg = stats.paired_per_item(
                [float(b) for b, _ in votes],
                [float(c) for _, c in votes],
                [0] * len(votes),
                how="majority",
            )
            b_h, c_h, ties = float(agg.baseline[0]), float(agg.candidate[0]), ties + agg.ties
        elif votes:
            b_h = float(np.mean([b for b, _ in votes]))
            c_h = float(np.mean([c for _, c in votes]))
        units.append(
            _Unit(
                key=key,
                cluster=ps[0].cluster,
                groups=ps[0].groups,
                base_h=b_h,
                cand_h=c_h,
                base_m=_means(ps, metric_keys, "base_m"),
                cand_m=_means(ps, metric_keys, "cand_m"),
                repeats=len(ps),
            )
        )
    return units, ties


def _means(ps: list[Pair], keys: list[str], side: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in keys:
        vals = [v for p in ps if (v := getattr(p, side).get(k)) is not None]
        out[k] = float(np.mean(vals)) if vals else math.nan
    return out


def interval_out(iv: stats.Interval) -> IntervalOut:
    """A stats interval as the comparison file records it."""

    def clean(x: float) -> float | None:
        # -0.0 would print as "-0.000"; round away float noise in the last digits
        return round(x, 12) + 0.0 if math.isfinite(x) else None

    return IntervalOut(
        method=iv.method, low=clean(iv.low), high=clean(iv.high), confidence=iv.confidence
    )


def _mean(xs: Sequence[float] | np.ndarray) -> float | None:
    return float(np.mean(xs)) if len(xs) else None


def _bounds(base: np.ndarray, cand: np.ndarray) -> stats.Bounds | None:
    """The feasible range of a delta: (-1, 1) for a metric whose values all lie in [0, 1]."""
    vals = np.concatenate([base[np.isfinite(base)], cand[np.isfinite(cand)]])
    if vals.size and vals.min() >= 0.0 and vals.max() <= 1.0:
        return stats.delta_bounds(0.0, 1.0)
    return None


@dataclass
class _Column:
    """One tested quantity: a delta per unit (NaN where a side has no value)."""

    deltas: np.ndarray
    bounds: stats.Bounds | None


class _Design:
    """How every column is tested, for one set of units (see the module docstring)."""

    def __init__(
        self,
        units: list[_Unit],
        columns: list[_Column],
        resamples: int,
        seed: int,
        confidence: float,
    ) -> None:
        self.labels = np.array([u.cluster for u in units])
        self.n = len(units)
        self.clustered = len(set(self.labels.tolist())) < self.n
        self.confidence = confidence
        self.columns = columns
        matrix = np.column_stack([c.deltas for c in columns]) if columns else np.empty((0, 0))
        self.boot: list[stats.BootstrapResult | None] = []
        self.perm: list[stats.PairedTest | None] = []
        if not self.clustered and columns:
            bounds = [c.bounds for c in columns]
            self.boot = stats.bootstrap_columns(
                matrix, resamples=resamples, seed=seed, confidence=confidence, bounds=bounds
            )
            self.perm = stats.permutation_columns(matrix, resamples=resamples, seed=seed)

    def fill(self, out: PairedDelta, idx: int) -> None:
        """Set ``out``'s test, p, intervals, clusters and MDE for column ``idx``."""
        col = self.columns[idx]
        fin = np.isfinite(col.deltas)
        d = col.deltas[fin]
        if d.size == 0:
            out.p_value = None
            return
        if self.clustered:
            labels = self.labels[fin]
            g = len(set(labels.tolist()))
            out.clusters = g
            why = stats.too_few_clusters(g)
            if why is not None:
                out.p_value, out.test, out.no_claim = None, None, why
                return
            t = stats.cluster_robust_test(d, labels, confidence=self.confidence, bounds=col.bounds)
            out.p_value, out.test = t.p_value, t.interval.method
            out.intervals = [interval_out(t.interval)]
            out.mde = _mde_t(t.se, t.df)
            return
        b = self.boot[idx] if self.boot else None
        if b is not None:
            out.intervals = [interval_out(b.percentile), interval_out(b.bca)]
        test = self.perm[idx] if self.perm else None
        out.p_value = test.p_value if test is not None else 1.0
        out.test = test.method if test is not None else None
        out.mde = _mde(d, worst_sd=None)


def _mde(deltas: np.ndarray, worst_sd: float | None) -> float | None:
    if deltas.size < 2:
        return None
    sd = float(np.std(deltas, ddof=1))
    if sd == 0.0:
        if worst_sd is None:
            return None
        sd = worst_sd
    return stats.minimum_detectable_effect(int(deltas.size), sd)


def _mde_t(se: float, df: float) -> float | None:
    """Minimum detectable effect of a t test with this standard error (alpha 0.05, power 0.8)."""
    if se <= 0 or not math.isfinite(df):
        return None
    from scipy import stats as st

    return float((st.t.ppf(0.975, df) + st.t.ppf(0.8, df)) * se)


def statistics(
    b_runs: list[RunLog],
    c_runs: list[RunLog],
    pairs: list[Pair],
    unpaired: int,
    metric_info: dict[str, MetricInfo],
    notes: list[str],
    context: dict[str, list[str]],
    specs: tuple[HeadlineSpec, HeadlineSpec],
    resamples: int,
    seed: int,
    confidence: float,
) -> Comparison:
    """Every statistic of a comparison, items as the unit (see the module docstring).

    ``context`` holds ``mismatches`` (forced), ``varies`` (declared) and ``differs`` (every
    component that differs, one line each).
    """
    spec = specs[0]
    binary = spec.binary and specs[1].binary
    metric_keys = sorted(metric_info)
    units, ties = _aggregate(pairs, metric_keys, binary)
    everyone = np.ones(len(units), dtype=bool)
    head_b = np.array([u.base_h for u in units], float)
    head_c = np.array([u.cand_h for u in units], float)
    base_m = {k: np.array([u.base_m[k] for u in units], float) for k in metric_keys}
    cand_m = {k: np.array([u.cand_m[k] for u in units], float) for k in metric_keys}
    bounds = {k: _bounds(base_m[k], cand_m[k]) for k in metric_keys}
    head_bounds = _bounds(head_b, head_c)

    # Plan every column: (overall | group) x (headline | metric).
    group_keys = sorted({f"{f}:{v}" for u in units for f, v in u.groups.items()})
    masks = {"": everyone}
    for gk in group_keys:
        f, _, v = gk.partition(":")
        masks[gk] = np.array([u.groups.get(f) == v for u in units], dtype=bool)
    columns: list[_Column] = []
    plan: dict[tuple[str, str], int] = {}
    for gk, mask in masks.items():
        plan[(gk, "")] = len(columns)
        columns.append(_Column(np.where(mask, head_c - head_b, np.nan), head_bounds))
        for k in metric_keys:
            plan[(gk, k)] = len(columns)
            columns.append(_Column(np.where(mask, cand_m[k] - base_m[k], np.nan), bounds[k]))
    design = _Design(units, columns, resamples, seed, confidence)

    def headline(mask: np.ndarray, idx: int) -> HeadlineStats:
        ok = mask & np.isfinite(head_b) & np.isfinite(head_c)
        m = int(ok.sum())
        if m == 0:
            return HeadlineStats(pairs=0, baseline=None, candidate=None, delta=None, p_value=None)
        br, cr = float(head_b[ok].mean()), float(head_c[ok].mean())
        out = HeadlineStats(pairs=m, baseline=br, candidate=cr, delta=cr - br)
        design.fill(out, idx)
        if binary and not design.clustered:  # McNemar's exact test: independent 0/1 pairs
            mc = stats.mcnemar_exact(head_b[ok] > 0.5, head_c[ok] > 0.5)
            out.mcnemar_b, out.mcnemar_c, out.p_value = mc.b, mc.c, mc.p_value
            out.test = "McNemar exact"
            out.mde = _mde(head_c[ok] - head_b[ok], worst_sd=1.0)
        return out

    def metric(mask: np.ndarray, key: str, idx: int) -> MetricDelta | None:
        info = metric_info[key]
        bv, cv = base_m[key][mask], cand_m[key][mask]
        both = np.isfinite(bv) & np.isfinite(cv)
        if not (np.isfinite(bv).any() or np.isfinite(cv).any()):
            return None
        out = MetricDelta(
            key=key,
            name=info.name,
            k=info.k,
            higher_is_better=info.higher_is_better,
            pairs=int(both.sum()),
            baseline_mean=_mean(bv[np.isfinite(bv)]),
            candidate_mean=_mean(cv[np.isfinite(cv)]),
            mean_delta=_mean(cv[both] - bv[both]),
        )
        design.fill(out, idx)
        return out

    overall = headline(everyone, plan[("", "")])
    if spec.composite:
        overall = composite_headline(b_runs, c_runs, pairs, specs, confidence)
    overall_metrics = [m for k in metric_keys if (m := metric(everyone, k, plan[("", k)]))]
    groups: list[GroupStats] = []
    for gk in group_keys:
        mask = masks[gk]
        in_group = {u.key for u, on in zip(units, mask, strict=True) if on}
        gp = [p for p in pairs if (p.item_id, p.step) in in_group]
        groups.append(
            GroupStats(
                key=gk,
                headline=headline(mask, plan[(gk, "")]),
                metrics=[m for k in metric_keys if (m := metric(mask, k, plan[(gk, k)]))],
                baseline_tokens=sum(p.base_tokens or 0 for p in gp),
                candidate_tokens=sum(p.cand_tokens or 0 for p in gp),
            )
        )

    # Holm across every test reported: the headline and each metric, overall and per group.
    family: list[PairedDelta] = [overall, *overall_metrics]
    for g in groups:
        family += [g.headline, *g.metrics]
    family = [t for t in family if t.pairs > 0 and t.p_value is not None]
    for t, p in zip(family, stats.holm([t.p_value for t in family]), strict=True):
        t.p_holm = float(p)

    repeats = max((u.repeats for u in units), default=1)
    if repeats > 1:
        notes.append(f"{AGGREGATION}; up to {repeats} repeats per item")
    if ties:
        notes.append(f"{ties} item(s) had a tied majority vote on a side (counted unchanged)")
    if overall.no_claim:
        notes.append(f"no claim: {overall.no_claim}")
    if overall.mcnemar_b is not None and overall.mcnemar_b + (overall.mcnemar_c or 0) == 0:
        notes.append("no item changed outcome: the headline MDE assumes the worst-case sd of 1")
    first = b_runs[0].header
    clusters = len({u.cluster for u in units})
    return Comparison(
        created_at=datetime.now(UTC),
        suite=first.suite,
        suite_version=first.suite_version,
        dataset_hash=first.dataset.content_hash,
        forced=bool(context["mismatches"]),
        mismatches=context["mismatches"],
        varies=context["varies"],
        differs=context["differs"],
        aggregation=AGGREGATION,
        headline_spec=spec,
        candidate_headline_spec=specs[1] if specs[1] != spec else None,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        baseline=_side(b_runs, pairs, "base"),
        candidate=_side(c_runs, pairs, "cand"),
        pairs=len(pairs),
        items=len(units),
        unpaired=unpaired,
        cluster_by=_cluster_by(units, spec) if design.clustered else None,
        clusters=clusters if design.clustered else None,
        headline=overall,
        metrics=overall_metrics,
        cost=_cost(pairs, overall.delta),
        groups=groups,
        notes=notes,
        claim_warnings=run_claim_warnings([r.header for r in b_runs + c_runs], len(units)),
    )


def _cluster_by(units: list[_Unit], spec: HeadlineSpec) -> str:
    kinds = {u.cluster.partition(":")[0] for u in units}
    return "/".join(sorted(kinds)) if kinds else (spec.cluster or "item")


def _side(runs: list[RunLog], pairs: list[Pair], side: str) -> SideInfo:
    ms: Callable[[Pair], float | None] = lambda p: getattr(p, f"{side}_ms")  # noqa: E731
    lat = [v for p in pairs if (v := ms(p)) is not None]
    return SideInfo(
        runs=[str(r.path) for r in runs],
        conditions=list(dict.fromkeys(condition_of(r.header) for r in runs)),
        run_groups=list(dict.fromkeys(r.header.run_group for r in runs)),
        repeats=len(runs),
        total_tokens=sum(getattr(p, f"{side}_tokens") or 0 for p in pairs),
        mean_latency_ms=_mean(lat),
        failed=sum(bool(getattr(p, f"{side}_failed")) for p in pairs),
        unfinished=[str(r.path) for r in runs if r.header.status != "finished"],
        judge_false_positive_rates=_judge_fpr(runs),
    )


def _judge_fpr(runs: list[RunLog]) -> dict[str, float | None]:
    """The highest false-positive rate each judge showed over ``runs`` (their summaries)."""
    from mnemometer.log._reader import read_summary

    out: dict[str, float | None] = {}
    for r in runs:
        if not r.header.scoring or not any(s.name == "judge" for s in r.header.scoring.scorers):
            continue  # no judge: nothing to read
        summary = read_summary(r.path)
        probes = summary.sections.get("judge_probes") if summary is not None else None
        for judge, probe in (probes or {}).items():
            rate = probe.get("rate")
            if rate is not None:
                out[judge] = max(rate, out.get(judge) or 0.0)
            else:
                out.setdefault(judge, None)
    return out


def _cost(pairs: list[Pair], delta: float | None) -> CostStats:
    b_tok = sum(p.base_tokens or 0 for p in pairs)
    c_tok = sum(p.cand_tokens or 0 for p in pairs)
    both = [
        p.cand_tokens - p.base_tokens
        for p in pairs
        if p.base_tokens is not None and p.cand_tokens is not None
    ]
    b_ms = [p.base_ms for p in pairs if p.base_ms is not None]
    c_ms = [p.cand_ms for p in pairs if p.cand_ms is not None]
    lat = (float(np.mean(c_ms)) - float(np.mean(b_ms))) if b_ms and c_ms else None
    added = max(0, c_tok - b_tok)
    adj = None
    if delta is not None:
        adj = delta if added == 0 else delta / (added / 1000.0)
    return CostStats(
        token_delta=c_tok - b_tok,
        mean_token_delta=_mean(both),
        latency_delta_ms=lat,
        cost_adjusted_delta_per_1k_tokens=adj,
    )


__all__ = ["AGGREGATION", "interval_out", "statistics"]
