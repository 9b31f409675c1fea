"""The statistics of a comparison, with the item as the unit.

Repeats of an item are not independent observations: three deterministic repeats of the
same comparison would otherwise triple the sample and shrink every p-value. So repeats are
aggregated per item first (success by majority vote, ties broken towards "unchanged";
metrics by their mean), and every test, interval, Holm adjustment and minimum detectable
effect works on items. Items that share state (a conversation, a fixture, the steps of one
build sequence) are clustered as well: cluster bootstrap and cluster-robust intervals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from mnemometer import stats
from mnemometer.comparison._claims import run_claim_warnings
from mnemometer.comparison._model import (
    Comparison,
    CostStats,
    GroupStats,
    IntervalOut,
    MetricDelta,
    PairedDelta,
    SideInfo,
    SuccessStats,
)
from mnemometer.comparison._pairs import CLUSTER_FIELDS, MetricInfo, Pair, condition_of
from mnemometer.log._reader import RunLog

AGGREGATION = (
    "repeats are aggregated per item before any test: success by majority vote (an item "
    "tied on one side takes the other side's vote, tied on both fails on both, so a tie "
    "never makes a discordant pair), metrics by their mean over repeats"
)


@dataclass
class _Unit:
    """One item (or build step) with its repeats aggregated."""

    key: tuple[str, str]
    cluster: str
    groups: dict[str, str]
    base_ok: float  # 1.0, 0.0, or NaN when unscorable
    cand_ok: float
    base_m: dict[str, float]
    cand_m: dict[str, float]
    repeats: int


def _aggregate(pairs: list[Pair], metric_keys: list[str]) -> tuple[list[_Unit], int]:
    """One unit per (item, step); returns the units and how many majority votes tied."""
    by: dict[tuple[str, str], list[Pair]] = {}
    for p in pairs:
        by.setdefault((p.item_id, p.step), []).append(p)
    units: list[_Unit] = []
    ties = 0
    for key, ps in by.items():
        votes = [
            (p.base_ok, p.cand_ok) for p in ps if p.base_ok is not None and p.cand_ok is not None
        ]
        b_ok = c_ok = math.nan
        if votes:
            agg = stats.paired_per_item(
                [float(b) for b, _ in votes],
                [float(c) for _, c in votes],
                [0] * len(votes),
                how="majority",
            )
            b_ok, c_ok, ties = float(agg.baseline[0]), float(agg.candidate[0]), ties + agg.ties
        units.append(
            _Unit(
                key=key,
                cluster=ps[0].cluster,
                groups=ps[0].groups,
                base_ok=b_ok,
                cand_ok=c_ok,
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


def _interval(iv: stats.Interval) -> IntervalOut:
    def clean(x: float) -> float | None:
        # -0.0 would print as "-0.000"; round away float noise in the last digits
        return round(x, 12) + 0.0 if math.isfinite(x) else None

    return IntervalOut(
        method=iv.method, low=clean(iv.low), high=clean(iv.high), confidence=iv.confidence
    )


def _mean(xs: Sequence[float] | np.ndarray) -> float | None:
    return float(np.mean(xs)) if len(xs) else None


def _mde(deltas: np.ndarray, worst_sd: float | None) -> float | None:
    if deltas.size < 2:
        return None
    sd = float(np.std(deltas, ddof=1))
    if sd == 0.0:
        if worst_sd is None:
            return None
        sd = worst_sd
    return stats.minimum_detectable_effect(int(deltas.size), sd)


def _bounds(base: np.ndarray, cand: np.ndarray) -> stats.Bounds | None:
    """The feasible range of a delta: (-1, 1) for a metric whose values all lie in [0, 1]."""
    vals = np.concatenate([base[np.isfinite(base)], cand[np.isfinite(cand)]])
    if vals.size and vals.min() >= 0.0 and vals.max() <= 1.0:
        return stats.delta_bounds(0.0, 1.0)
    return None


def statistics(
    b_runs: list[RunLog],
    c_runs: list[RunLog],
    pairs: list[Pair],
    unpaired: int,
    metric_info: dict[str, MetricInfo],
    notes: list[str],
    mismatches: list[str],
    resamples: int,
    seed: int,
    confidence: float,
) -> Comparison:
    """Every statistic of a comparison, items as the unit (see the module docstring)."""
    metric_keys = sorted(metric_info)
    units, ties = _aggregate(pairs, metric_keys)
    n = len(units)
    everyone = np.ones(n, dtype=bool)
    succ_base = np.array([u.base_ok for u in units], float)
    succ_cand = np.array([u.cand_ok for u in units], float)
    base_m = {k: np.array([u.base_m[k] for u in units], float) for k in metric_keys}
    cand_m = {k: np.array([u.cand_m[k] for u in units], float) for k in metric_keys}
    bounds = {k: _bounds(base_m[k], cand_m[k]) for k in metric_keys}

    # Plan every column: (overall | group) x (success | metric).
    group_keys = sorted({f"{f}:{v}" for u in units for f, v in u.groups.items()})
    masks = {"": everyone}
    for gk in group_keys:
        f, _, v = gk.partition(":")
        masks[gk] = np.array([u.groups.get(f) == v for u in units], dtype=bool)
    cols: list[np.ndarray] = []
    col_bounds: list[stats.Bounds | None] = []
    plan: dict[tuple[str, str], int] = {}
    for gk, mask in masks.items():
        plan[(gk, "")] = len(cols)
        cols.append(np.where(mask, succ_cand - succ_base, np.nan))
        col_bounds.append(stats.delta_bounds(0.0, 1.0))
        for k in metric_keys:
            plan[(gk, k)] = len(cols)
            cols.append(np.where(mask, cand_m[k] - base_m[k], np.nan))
            col_bounds.append(bounds[k])
    matrix = np.column_stack(cols) if cols else np.empty((n, 0))
    boot = stats.bootstrap_columns(
        matrix, resamples=resamples, seed=seed, confidence=confidence, bounds=col_bounds
    )
    tests = stats.permutation_columns(matrix, resamples=resamples, seed=seed)

    # Clustering: items sharing a conversation or fixture, or the steps of one sequence.
    labels = np.array([u.cluster for u in units])
    n_clusters = len(set(labels.tolist()))
    cluster_by: str | None = None
    cluster_boot: dict[int, stats.BootstrapResult | None] = {}
    if n_clusters < n:
        fields = {lab.partition(":")[0] for lab in labels if ":" in lab}
        cluster_by = "/".join(sorted(fields & set(CLUSTER_FIELDS))) or "item"
        overall = [plan[("", "")]] + [plan[("", k)] for k in metric_keys]
        res = stats.bootstrap_columns(
            matrix[:, overall],
            resamples=resamples,
            seed=seed,
            confidence=confidence,
            clusters=labels,
            bounds=[col_bounds[i] for i in overall],
        )
        cluster_boot = dict(zip(overall, res, strict=True))

    def intervals(idx: int) -> list[IntervalOut]:
        out: list[IntervalOut] = []
        b = boot[idx]
        if b is not None:
            out += [_interval(b.percentile), _interval(b.bca)]
        cb = cluster_boot.get(idx)
        if cb is not None:
            out += [_interval(cb.percentile), _interval(cb.bca)]
            col = cols[idx]
            fin = np.isfinite(col)
            robust = stats.cluster_robust_interval(
                col[fin], labels[fin], confidence=confidence, bounds=col_bounds[idx]
            )
            out.append(_interval(robust))
        return out

    def success(mask: np.ndarray, idx: int) -> SuccessStats:
        ok = mask & np.isfinite(succ_base) & np.isfinite(succ_cand)
        m = int(ok.sum())
        if m == 0:
            return SuccessStats(pairs=0, baseline_rate=None, candidate_rate=None, delta=None)
        mc = stats.mcnemar_exact(succ_base[ok] > 0.5, succ_cand[ok] > 0.5)
        br, cr = float(succ_base[ok].mean()), float(succ_cand[ok].mean())
        return SuccessStats(
            pairs=m,
            baseline_rate=br,
            candidate_rate=cr,
            delta=cr - br,
            mcnemar_b=mc.b,
            mcnemar_c=mc.c,
            p_value=mc.p_value,
            intervals=intervals(idx),
            mde=_mde(succ_cand[ok] - succ_base[ok], worst_sd=1.0),
        )

    def metric(mask: np.ndarray, key: str, idx: int) -> MetricDelta | None:
        info = metric_info[key]
        bv, cv = base_m[key][mask], cand_m[key][mask]
        both = np.isfinite(bv) & np.isfinite(cv)
        if not (np.isfinite(bv).any() or np.isfinite(cv).any()):
            return None
        d = cv[both] - bv[both]
        test = tests[idx]
        return MetricDelta(
            key=key,
            name=info.name,
            k=info.k,
            higher_is_better=info.higher_is_better,
            pairs=int(both.sum()),
            baseline_mean=_mean(bv[np.isfinite(bv)]),
            candidate_mean=_mean(cv[np.isfinite(cv)]),
            mean_delta=_mean(d),
            p_value=test.p_value if test is not None else 1.0,
            test=test.method if test is not None else None,
            intervals=intervals(idx),
            mde=_mde(d, worst_sd=None),
        )

    overall_success = success(everyone, plan[("", "")])
    overall_metrics = [m for k in metric_keys if (m := metric(everyone, k, plan[("", k)]))]
    groups: list[GroupStats] = []
    for gk in group_keys:
        mask = masks[gk]
        in_group = {u.key for u, on in zip(units, mask, strict=True) if on}
        gp = [p for p in pairs if (p.item_id, p.step) in in_group]
        groups.append(
            GroupStats(
                key=gk,
                success=success(mask, plan[(gk, "")]),
                metrics=[m for k in metric_keys if (m := metric(mask, k, plan[(gk, k)]))],
                baseline_tokens=sum(p.base_tokens or 0 for p in gp),
                candidate_tokens=sum(p.cand_tokens or 0 for p in gp),
            )
        )

    # Holm across every test reported: success and each metric, overall and per group.
    family: list[PairedDelta] = [overall_success, *overall_metrics]
    for g in groups:
        family += [g.success, *g.metrics]
    family = [t for t in family if t.pairs > 0]  # nothing paired, nothing tested
    for t, p in zip(family, stats.holm([t.p_value for t in family]), strict=True):
        t.p_holm = float(p)

    repeats = max((u.repeats for u in units), default=1)
    if repeats > 1:
        notes.append(f"{AGGREGATION}; up to {repeats} repeats per item")
    if ties:
        notes.append(f"{ties} item(s) had a tied majority vote on a side (counted unchanged)")
    if (
        overall_success.mde is not None
        and overall_success.mcnemar_b + overall_success.mcnemar_c == 0
    ):
        notes.append("no item changed outcome: the success MDE assumes the worst-case sd of 1")
    first = b_runs[0].header
    b_tok = sum(p.base_tokens or 0 for p in pairs)
    c_tok = sum(p.cand_tokens or 0 for p in pairs)
    return Comparison(
        created_at=datetime.now(UTC),
        suite=first.suite,
        suite_version=first.suite_version,
        dataset_hash=first.dataset.content_hash,
        forced=bool(mismatches),
        mismatches=mismatches,
        success_definition=first.success_definition,
        aggregation=AGGREGATION,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        baseline=_side(b_runs, b_tok, _mean([p.base_ms for p in pairs if p.base_ms is not None])),
        candidate=_side(c_runs, c_tok, _mean([p.cand_ms for p in pairs if p.cand_ms is not None])),
        pairs=len(pairs),
        items=n,
        unpaired=unpaired,
        cluster_by=cluster_by,
        clusters=n_clusters if cluster_by else None,
        success=overall_success,
        metrics=overall_metrics,
        cost=_cost(pairs, overall_success.delta),
        groups=groups,
        notes=notes,
        claim_warnings=run_claim_warnings([r.header for r in b_runs + c_runs], n),
    )


def _side(runs: list[RunLog], tokens: int, latency: float | None) -> SideInfo:
    return SideInfo(
        runs=[str(r.path) for r in runs],
        conditions=list(dict.fromkeys(condition_of(r.header) for r in runs)),
        run_groups=list(dict.fromkeys(r.header.run_group for r in runs)),
        repeats=len(runs),
        total_tokens=tokens,
        mean_latency_ms=latency,
    )


def _cost(pairs: list[Pair], success_delta: float | None) -> CostStats:
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
    if success_delta is not None:
        adj = success_delta if added == 0 else success_delta / (added / 1000.0)
    return CostStats(
        token_delta=c_tok - b_tok,
        mean_token_delta=_mean(both),
        latency_delta_ms=lat,
        cost_adjusted_success_delta_per_1k_tokens=adj,
    )


__all__ = ["AGGREGATION", "statistics"]
