"""Pair two sets of runs item by item and compute the comparison's statistics."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from mnemometer import stats
from mnemometer.comparison._model import (
    Comparison,
    CostStats,
    GroupStats,
    IntervalOut,
    MetricDelta,
    SideInfo,
    SuccessStats,
)
from mnemometer.errors import MnemometerError
from mnemometer.log._reader import RunLog, read_log
from mnemometer.log._schema import HEADER_FILE, ItemResult, RunHeader

CLUSTER_FIELDS = ("conversation", "fixture")
"""Item group fields whose items share state and so are clustered."""


class PairingError(MnemometerError):
    """Runs that cannot be paired (the message says why)."""


def condition_of(header: RunHeader) -> str:
    """The run's condition: recorded on the system side, else the system's name."""
    return header.system.condition or header.system.name


def expand_runs(paths: Iterable[str | Path]) -> list[Path]:
    """Run directories named by ``paths``: a run directory, or a directory of them.

    Raises:
        MnemometerError: a path is neither.
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / HEADER_FILE).is_file():
            out.append(p)
        elif p.is_dir():
            children = sorted(c for c in p.iterdir() if (c / HEADER_FILE).is_file())
            if not children:
                raise MnemometerError(f"{p}: not a run directory and holds none")
            out.extend(children)
        else:
            raise MnemometerError(f"{p}: no such run directory")
    return list(dict.fromkeys(out))


@dataclass
class _Pair:
    item_id: str
    cluster: str
    groups: dict[str, str]
    base_ok: bool | None
    cand_ok: bool | None
    base_m: dict[str, float | None]
    cand_m: dict[str, float | None]
    base_tokens: int | None
    cand_tokens: int | None
    base_ms: float | None
    cand_ms: float | None


@dataclass
class _MetricInfo:
    name: str
    k: int | None
    higher_is_better: bool
    keys: set[str] = field(default_factory=set)


def _tokens(r: ItemResult) -> int | None:
    if not r.tokens:
        return None
    return int(r.tokens["total"]) if "total" in r.tokens else int(sum(r.tokens.values()))


def _identity(h: RunHeader) -> dict[str, Any]:
    return {
        "suite": h.suite,
        "suite_version": h.suite_version,
        "dataset content hash": h.dataset.content_hash,
        "suite options": h.suite_options,
    }


def _mismatches(runs: Sequence[RunLog]) -> list[str]:
    first = runs[0]
    ref = _identity(first.header)
    out: list[str] = []
    for r in runs[1:]:
        ident = _identity(r.header)
        for what, value in ident.items():
            if value != ref[what]:
                if what == "suite options":
                    diff = sorted(
                        k for k in set(value) | set(ref[what]) if value.get(k) != ref[what].get(k)
                    )
                    shown = ", ".join(f"{k}={ref[what].get(k)!r} vs {value.get(k)!r}" for k in diff)
                    out.append(f"{first.path} and {r.path} differ in suite options: {shown}")
                else:
                    out.append(
                        f"{first.path} and {r.path} differ in {what}: {ref[what]!r} vs {value!r}"
                    )
    return out


def _match_runs(base: list[RunLog], cand: list[RunLog]) -> list[tuple[RunLog, RunLog]]:
    """Pair runs by (run group, repeat); never let two runs claim one slot."""
    for side, runs in (("baseline", base), ("candidate", cand)):
        seen: dict[tuple[str, int], Path] = {}
        for r in runs:
            slot = (r.header.run_group, r.header.repeat)
            if slot in seen:
                raise PairingError(
                    f"{side} runs {seen[slot]} and {r.path} are both repeat {slot[1]} of run "
                    f"group {slot[0]}: pass only one of them"
                )
            seen[slot] = r.path
    b_groups = {r.header.run_group for r in base}
    c_groups = {r.header.run_group for r in cand}
    if b_groups & c_groups:
        b = {(r.header.run_group, r.header.repeat): r for r in base}
        c = {(r.header.run_group, r.header.repeat): r for r in cand}
        lonely = sorted(set(b) ^ set(c))
        if lonely:
            shown = ", ".join(f"group {g} repeat {i}" for g, i in lonely)
            raise PairingError(
                f"runs share run groups but these (group, repeat) slots exist on one side "
                f"only: {shown}"
            )
        return [(b[k], c[k]) for k in sorted(b)]

    # Different invocations: pair the i-th group of each side, then repeat by repeat.
    def ordered(runs: list[RunLog]) -> list[list[RunLog]]:
        by: dict[str, list[RunLog]] = defaultdict(list)
        for r in runs:
            by[r.header.run_group].append(r)
        groups = sorted(by.values(), key=lambda rs: min(r.header.created_at for r in rs))
        return [sorted(rs, key=lambda r: r.header.repeat) for rs in groups]

    bo, co = ordered(base), ordered(cand)
    if len(bo) != len(co):
        raise PairingError(
            f"cannot pair {len(bo)} baseline run group(s) with {len(co)} candidate run "
            "group(s); pass runs from the same number of invocations"
        )
    out: list[tuple[RunLog, RunLog]] = []
    for bg, cg in zip(bo, co, strict=True):
        br = [r.header.repeat for r in bg]
        cr = [r.header.repeat for r in cg]
        if br != cr:
            raise PairingError(
                f"run group {bg[0].header.run_group} has repeats {br} but run group "
                f"{cg[0].header.run_group} has repeats {cr}; pass matching repeats"
            )
        out.extend(zip(bg, cg, strict=True))
    return out


def _pairs(
    matched: list[tuple[RunLog, RunLog]], metrics: dict[str, _MetricInfo], notes: list[str]
) -> tuple[list[_Pair], int]:
    pairs: list[_Pair] = []
    unpaired = 0
    for b_run, c_run in matched:
        b_items = {(r.item_id, r.step or ""): r for r in b_run.items}
        c_items = {(r.item_id, r.step or ""): r for r in c_run.items}
        lonely = sorted(set(b_items) ^ set(c_items))
        if lonely:
            unpaired += len(lonely)
            shown = ", ".join(i for i, _ in lonely[:5]) + (" ..." if len(lonely) > 5 else "")
            notes.append(
                f"{len(lonely)} item result(s) of {b_run.path} / {c_run.path} have "
                f"no partner and are not compared: {shown}"
            )
        for key in sorted(set(b_items) & set(c_items), key=lambda k: b_items[k].index):
            b, c = b_items[key], c_items[key]
            groups = {**b.groups, **c.groups}
            cluster = next((f"{f}:{groups[f]}" for f in CLUSTER_FIELDS if f in groups), key[0])
            base_m, base_ok = _metric_values(b, metrics)
            cand_m, cand_ok = _metric_values(c, metrics)
            pairs.append(
                _Pair(
                    item_id=key[0],
                    cluster=cluster,
                    groups=groups,
                    base_ok=base_ok,
                    cand_ok=cand_ok,
                    base_m=base_m,
                    cand_m=cand_m,
                    base_tokens=_tokens(b),
                    cand_tokens=_tokens(c),
                    base_ms=b.latency_ms,
                    cand_ms=c.latency_ms,
                )
            )
    return pairs, unpaired


def _metric_values(
    r: ItemResult, metrics: dict[str, _MetricInfo]
) -> tuple[dict[str, float | None], bool | None]:
    """The item's metric values by key, and its success as the suite recorded it."""
    out: dict[str, float | None] = {}
    for m in r.metrics:
        if m.name == "success" and m.k is None:
            continue  # the item's success is its own field
        key = m.key
        if key not in metrics:
            metrics[key] = _MetricInfo(m.name, m.k, m.higher_is_better)
        out[key] = m.value
    return out, (False if r.status != "ok" else r.success)


def _interval(iv: stats.Interval) -> IntervalOut:
    def clean(x: float) -> float | None:
        # float32 resampling leaves ~1e-8 dust; -0.0 would print as "-0.000"
        return round(x, 9) + 0.0 if math.isfinite(x) else None

    return IntervalOut(
        method=iv.method, low=clean(iv.low), high=clean(iv.high), confidence=iv.confidence
    )


def _mean(xs: Sequence[float]) -> float | None:
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


def _success_column(
    pairs: list[_Pair], mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    base = np.array([p.base_ok if p.base_ok is not None else np.nan for p in pairs], float)
    cand = np.array([p.cand_ok if p.cand_ok is not None else np.nan for p in pairs], float)
    col = np.where(mask, cand - base, np.nan)
    return col, base, cand


def compare(
    baseline: Sequence[str | Path],
    candidate: Sequence[str | Path],
    *,
    force: bool = False,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    confidence: float = 0.95,
) -> Comparison:
    """Pair ``baseline`` and ``candidate`` runs item by item and compute the statistics.

    Runs pair by run group and repeat (see the guide), and items by item id and step.
    Runs over a different suite, suite version, suite options or dataset content hash are
    refused unless ``force``.

    Args:
        baseline: run directories (or directories of run directories).
        candidate: the same for the candidate side.
        force: pair mismatched runs anyway (recorded in the comparison).
        resamples: bootstrap resamples.
        seed: bootstrap seed.
        confidence: interval coverage.

    Raises:
        PairingError: the runs cannot be paired (the message says why).
        MnemometerError: unreadable runs or bad settings.
    """
    b_runs = [read_log(p) for p in expand_runs(baseline)]
    c_runs = [read_log(p) for p in expand_runs(candidate)]
    if not b_runs or not c_runs:
        raise MnemometerError("compare needs at least one baseline and one candidate run")
    overlap = {r.path.resolve() for r in b_runs} & {r.path.resolve() for r in c_runs}
    if overlap:
        raise PairingError(f"{sorted(map(str, overlap))[0]} is on both sides")
    mismatches = _mismatches(b_runs + c_runs)
    if mismatches and not force:
        raise PairingError(
            "refusing to pair runs that measured different things: "
            + "; ".join(mismatches[:3])
            + ("; ..." if len(mismatches) > 3 else "")
            + " (pass --force to pair them anyway)"
        )
    notes: list[str] = []
    for r in b_runs + c_runs:
        if r.header.status != "finished":
            notes.append(
                f"{r.path} did not finish ({len(r.items)} of {r.header.item_count} "
                "items); continue it with `mnemometer run --resume`"
            )
    matched = _match_runs(b_runs, c_runs)
    metric_info: dict[str, _MetricInfo] = {}
    pairs, unpaired = _pairs(matched, metric_info, notes)
    if not pairs:
        raise PairingError("the runs share no item ids: nothing to compare")
    return _statistics(
        b_runs,
        c_runs,
        pairs,
        unpaired,
        metric_info,
        notes,
        mismatches if force else [],
        resamples,
        seed,
        confidence,
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


def _statistics(
    b_runs: list[RunLog],
    c_runs: list[RunLog],
    pairs: list[_Pair],
    unpaired: int,
    metric_info: dict[str, _MetricInfo],
    notes: list[str],
    mismatches: list[str],
    resamples: int,
    seed: int,
    confidence: float,
) -> Comparison:
    n = len(pairs)
    everyone = np.ones(n, dtype=bool)
    metric_keys = sorted(metric_info)
    base_m = _metric_arrays(pairs, metric_keys, "base_m")
    cand_m = _metric_arrays(pairs, metric_keys, "cand_m")
    cols: list[np.ndarray] = []

    def add(col: np.ndarray) -> int:
        cols.append(col)
        return len(cols) - 1

    # Plan every column: (overall | group) x (success | metric).
    group_keys = sorted({f"{f}:{v}" for p in pairs for f, v in p.groups.items()})
    masks = {"": everyone}
    by_field: dict[str, np.ndarray] = {}
    for gk in group_keys:
        f, _, v = gk.partition(":")
        if f not in by_field:
            by_field[f] = np.array([p.groups.get(f, "") for p in pairs], dtype=object)
        masks[gk] = by_field[f] == v
    succ_col, succ_base, succ_cand = _success_column(pairs, everyone)
    plan: dict[tuple[str, str], int] = {}
    for gk, mask in masks.items():
        plan[(gk, "")] = add(np.where(mask, succ_col, np.nan))
        for k in metric_keys:
            plan[(gk, k)] = add(np.where(mask, cand_m[k] - base_m[k], np.nan))
    boot = stats.bootstrap_columns(
        np.column_stack(cols), resamples=resamples, seed=seed, confidence=confidence
    )

    # Clustering: repeats of an item, or items sharing a conversation or fixture.
    labels = np.array([p.cluster for p in pairs])
    n_clusters = len(set(labels.tolist()))
    cluster_by: str | None = None
    cluster_boot: dict[int, stats.BootstrapResult | None] = {}
    if n_clusters < n:
        fields = {lab.partition(":")[0] for lab in labels if ":" in lab}
        cluster_by = "/".join(sorted(fields & set(CLUSTER_FIELDS))) or "item"
        overall = [plan[("", "")]] + [plan[("", k)] for k in metric_keys]
        res = stats.bootstrap_columns(
            np.column_stack([cols[i] for i in overall]),
            resamples=resamples,
            seed=seed,
            confidence=confidence,
            clusters=labels,
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
            out.append(
                _interval(
                    stats.cluster_robust_interval(col[fin], labels[fin], confidence=confidence)
                )
            )
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
        return MetricDelta(
            key=key,
            name=info.name,
            k=info.k,
            higher_is_better=info.higher_is_better,
            pairs=int(both.sum()),
            baseline_mean=_mean(bv[np.isfinite(bv)]),
            candidate_mean=_mean(cv[np.isfinite(cv)]),
            mean_delta=_mean(d),
            p_value=stats.paired_t_p(d) if d.size else 1.0,
            intervals=intervals(idx),
            mde=_mde(d, worst_sd=None),
        )

    overall_success = success(everyone, plan[("", "")])
    overall_metrics = [m for k in metric_keys if (m := metric(everyone, k, plan[("", k)]))]
    groups: list[GroupStats] = []
    for gk in group_keys:
        mask = masks[gk]
        groups.append(
            GroupStats(
                key=gk,
                success=success(mask, plan[(gk, "")]),
                metrics=[m for k in metric_keys if (m := metric(mask, k, plan[(gk, k)]))],
                baseline_tokens=sum(
                    p.base_tokens or 0 for p, on in zip(pairs, mask, strict=True) if on
                ),
                candidate_tokens=sum(
                    p.cand_tokens or 0 for p, on in zip(pairs, mask, strict=True) if on
                ),
            )
        )

    # Holm across every test reported: success and each metric, overall and per group.
    tests: list[SuccessStats | MetricDelta] = [overall_success, *overall_metrics]
    for g in groups:
        tests += [g.success, *g.metrics]
    tests = [t for t in tests if t.pairs > 0]  # nothing paired, nothing tested
    adjusted = stats.holm([t.p_value for t in tests])
    for t, p in zip(tests, adjusted, strict=True):
        t.p_holm = float(p)

    by_item = _by_item(pairs)
    if (
        overall_success.mde is not None
        and overall_success.mcnemar_b + overall_success.mcnemar_c == 0
    ):
        notes.append("no pair changed outcome: the success MDE assumes the worst-case sd of 1")
    cost = _cost(pairs, overall_success.delta)
    b_tok = sum(p.base_tokens or 0 for p in pairs)
    c_tok = sum(p.cand_tokens or 0 for p in pairs)
    first = b_runs[0].header
    return Comparison(
        created_at=datetime.now(UTC),
        suite=first.suite,
        suite_version=first.suite_version,
        dataset_hash=first.dataset.content_hash,
        forced=bool(mismatches),
        mismatches=mismatches,
        success_definition=first.success_definition,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        baseline=_side(b_runs, b_tok, _mean([p.base_ms for p in pairs if p.base_ms is not None])),
        candidate=_side(c_runs, c_tok, _mean([p.cand_ms for p in pairs if p.cand_ms is not None])),
        pairs=n,
        unpaired=unpaired,
        cluster_by=cluster_by,
        clusters=n_clusters if cluster_by else None,
        success=overall_success,
        success_by_item=by_item,
        metrics=overall_metrics,
        cost=cost,
        groups=groups,
        notes=notes,
    )


def _metric_arrays(pairs: list[_Pair], keys: list[str], side: str) -> dict[str, np.ndarray]:
    """One array per metric key over the pairs; NaN where the side has no value."""
    col = {k: j for j, k in enumerate(keys)}
    out = np.full((len(pairs), len(keys)), np.nan)
    for i, p in enumerate(pairs):
        for k, v in getattr(p, side).items():
            if v is not None:
                out[i, col[k]] = v
    return {k: out[:, j] for k, j in col.items()}


def _by_item(pairs: list[_Pair]) -> SuccessStats | None:
    """Majority vote per item across repeats, then exact McNemar over items."""
    votes: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for p in pairs:
        if p.base_ok is not None and p.cand_ok is not None:
            votes[p.item_id].append((p.base_ok, p.cand_ok))
    if not votes or all(len(v) == 1 for v in votes.values()):
        return None
    base = np.array([sum(b for b, _ in v) * 2 > len(v) for v in votes.values()])
    cand = np.array([sum(c for _, c in v) * 2 > len(v) for v in votes.values()])
    mc = stats.mcnemar_exact(base, cand)
    return SuccessStats(
        pairs=len(votes),
        baseline_rate=float(base.mean()),
        candidate_rate=float(cand.mean()),
        delta=float(cand.mean() - base.mean()),
        mcnemar_b=mc.b,
        mcnemar_c=mc.c,
        p_value=mc.p_value,
    )


def _cost(pairs: list[_Pair], success_delta: float | None) -> CostStats:
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
