"""Scoring the six dimensions from item results, and the overall weighted score.

Everything here is derived from the run log's items (and the header's options), so a
report recomputes exactly what the run printed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from mnemometer.log._schema import ItemResult, Metric, RunHeader, Summary, Table
from mnemometer.scoring.aggregate import latency_metrics

DIMENSIONS = ("storage", "retrieval", "organisation", "forgetting", "reasoning", "deep")
DEFAULT_WEIGHTS = {
    "storage": 0.15,
    "retrieval": 0.25,
    "organisation": 0.15,
    "forgetting": 0.10,
    "reasoning": 0.20,
    "deep": 0.15,
}
"""Weights of the overall score; dimensions without a score are left out and the rest
renormalised (so "not applicable" and "no forgetting" neither help nor hurt)."""
NOT_APPLICABLE = {
    "storage": "the dataset has no memories",
    "retrieval": "the dataset has no person/location/event/time/composite queries with ground truth",
    "organisation": "no cluster labels shared by two or more memories (and no cluster queries)",
    "forgetting": "no memories with both high- and low-frequency labels (no access schedule)",
    "reasoning": "the dataset has no composite or chain queries",
    "deep": "no deep queries and no memories with a semantic-distance label",
}
FORMULAS = {
    "storage": "sum(kept) / stored versions; kept = own id in the top 5 of a self-query by "
    "the version's exact text, or listed by list_ids()",
    "retrieval": "mean recall@k over person/location/event/time/composite (and other labelled) "
    "queries; composite precision = mean R-precision; negatives: abstention (empty result) "
    "for stores that declare abstains, else not applicable",
    "organisation": "mean cluster recall@k = |top-k(member) minus itself, intersected with its "
    "cluster-mates| / |cluster-mates|; chance = k / (N - 1)",
    "forgetting": "retention = found after the access replay and clock advance / found before, "
    "per frequency level; d = high - low with Newcombe's 95% interval; nothing lost = "
    "'no forgetting' (neutral, unscored); else score = clip(0.5 + d/2, 0, 1)",
    "reasoning": "mean(composite R-precision, chain recall); chains also report Kendall tau-a "
    "of retrieved hops vs true order and full-chain success",
    "deep": "mean over near/mid/far of recall@k; decay = near - far",
    "overall": "sum(w_d * s_d) / sum(w_d) over dimensions with a score",
}
"""One-line formulas, included in every summary (see docs/memtest.md for the procedure)."""
_Z95 = 1.959963984540054


def kendall_tau(ranked: Sequence[str], order: Sequence[str]) -> float | None:
    """Kendall tau-a between the rank of the retrieved hops and their true order.

    Only hops that were retrieved count; ``None`` with fewer than two of them.
    """
    true_pos = {x: i for i, x in enumerate(order)}
    seq = [true_pos[x] for x in ranked if x in true_pos]
    n = len(seq)
    if n < 2:
        return None
    s = 0
    for i in range(n):
        for j in range(i + 1, n):
            s += 1 if seq[i] < seq[j] else -1
    return s / (n * (n - 1) / 2)


def chain_metrics(
    ranked: Sequence[str], relevant: Sequence[str], order: Sequence[str] | None
) -> list[Metric]:
    """Chain recall, order agreement (Kendall tau) and full-chain success over ``ranked``."""
    rel = set(relevant)
    found = [x for x in ranked if x in rel]
    k = len(ranked) or None
    return [
        Metric(name="chain_recall", k=k, value=len(set(found)) / len(rel)),
        Metric(name="kendall_tau", value=kendall_tau(ranked, order) if order else None),
        Metric(name="chain_complete", value=1.0 if rel <= set(found) else 0.0),
    ]


def wilson(successes: int, n: int, z: float = _Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def newcombe(s1: int, n1: int, s2: int, n2: int) -> tuple[float, float]:
    """Newcombe's hybrid score interval (method 10) for p1 - p2, independent groups."""
    p1, p2 = s1 / n1, s2 / n2
    l1, u1 = wilson(s1, n1)
    l2, u2 = wilson(s2, n2)
    d = p1 - p2
    return (
        d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
        d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2),
    )


def _values(items: Iterable[ItemResult], name: str, k: int | None = None) -> list[float]:
    out = []
    for r in items:
        for m in r.metrics:
            if m.name == name and (k is None or m.k == k) and m.value is not None:
                out.append(m.value)
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(x, nd)


def summarize(
    header: RunHeader,
    items: list[ItemResult],
    k: int,
    weights: dict[str, float],
    abstains: bool = False,
    not_applicable: dict[str, str] | None = None,
) -> Summary:
    """Score every dimension, the overall weighted mean, and the retrieval breakdowns."""
    by_dim: dict[str, list[ItemResult]] = defaultdict(list)
    for r in items:
        by_dim[r.groups.get("dimension", "retrieval")].append(r)
    queries = [r for r in items if r.item_id.startswith("query/")]
    dims: dict[str, dict[str, Any]] = {
        "storage": _storage(by_dim["storage"]),
        "retrieval": _retrieval(by_dim["retrieval"], k),
        "organisation": _organisation(by_dim["organisation"], k),
        "forgetting": _forgetting(by_dim["forgetting"]),
        "reasoning": _reasoning(queries, k),
        "deep": _deep(by_dim["deep"], k),
    }
    na = dict(not_applicable or {})
    for name, d in dims.items():
        if d.get("status") == "not applicable":
            d["reason"] = na.get(name, NOT_APPLICABLE[name])
    used = {n: weights.get(n, 0.0) for n, d in dims.items() if d.get("score") is not None}
    total = sum(used.values())
    overall = sum(w * dims[n]["score"] for n, w in used.items()) / total if total else None
    rows = [_row(n, dims[n], weights.get(n, 0.0), n in used) for n in DIMENSIONS]
    groups: dict[str, dict[str, list[Metric]]] = {}
    by_type: dict[str, list[ItemResult]] = defaultdict(list)
    for r in queries:
        by_type[r.groups.get("type", "?")].append(r)
    groups["type"] = {t: _means(rs) for t, rs in sorted(by_type.items())}
    counts = {
        "items": len(items),
        "planned": header.item_count,
        "queries": len(queries),
        "errors": sum(r.status == "error" for r in items),
        "timeouts": sum(r.status == "timeout" for r in items),
    }
    notes = list(header.dataset.notes)
    for n in DIMENSIONS:
        if dims[n].get("status") == "not applicable":
            notes.append(f"{n}: not applicable: {dims[n]['reason']}")
    if dims["forgetting"].get("verdict") == "no forgetting":
        notes.append(
            "forgetting: the store forgot nothing (neutral; left out of the overall score)"
        )
    neg = dims["retrieval"].get("negative") or {}
    if neg.get("n") and neg.get("abstention") is None:
        notes.append(
            f"{neg['n']} negative queries not scored: the store does not declare "
            "that an empty result means 'nothing relevant' (abstains)"
        )
    if counts["errors"] or counts["timeouts"]:
        notes.append("failed and timed-out items score 0 on their dimension")
    overall_metrics = [Metric(name="overall", value=overall, n=len(used))]
    overall_metrics += latency_metrics([r.latency_ms for r in items if r.latency_ms is not None])
    table = Table(
        name="dimensions",
        title="MemTest dimensions",
        columns=["dimension", "score", "weight", "detail"],
        rows=rows
        + [["overall", _pct(overall), f"{total:.2f}", "weighted mean of scored dimensions"]],
        data=[{"dimension": n, **dims[n]} for n in DIMENSIONS],
    )
    section = {
        "overall": _r(overall),
        "weights": weights,
        "weights_used": used,
        "k": k,
        "dimensions": dims,
        "formulas": FORMULAS,
    }
    return Summary(
        overall=overall_metrics,
        groups=groups,
        counts=counts,
        notes=notes,
        tables=[table],
        sections={"memtest": section},
    )


def _means(rs: list[ItemResult]) -> list[Metric]:
    from mnemometer.scoring.aggregate import mean_metrics

    return mean_metrics(r.metrics for r in rs)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _row(name: str, d: dict[str, Any], weight: float, used: bool) -> list[str]:
    score = d.get("score")
    if d.get("status") == "not applicable":
        return [name, "n/a", f"{weight:.2f}", f"not applicable: {d['reason']}"]
    if d.get("verdict") == "no forgetting":
        return [name, "neutral", f"{weight:.2f}", d["detail"]]
    return [name, _pct(score), f"{weight:.2f}" if used else "-", d.get("detail", "")]


def _storage(rs: list[ItemResult]) -> dict[str, Any]:
    if not rs:
        return {"status": "not applicable", "score": None}
    listed = _values(rs, "listed")
    by_style: dict[str, dict[str, Any]] = {}
    styles: dict[str, list[ItemResult]] = defaultdict(list)
    for r in rs:
        styles[r.groups.get("style", "text")].append(r)
    for style, srs in styles.items():
        if listed:
            v = _values(srs, "listed")
            by_style[style] = {"kept": int(sum(v)), "stored": len(srs), "listed": _r(_mean(v))}
        else:
            v1, v5 = _values(srs, "kept", 1), _values(srs, "kept", 5)
            by_style[style] = {
                "kept": int(sum(v5)),
                "stored": len(srs),
                "top1": _r(_mean(v1)),
                "top5": _r(_mean(v5)),
            }
    values = listed or _values(rs, "kept", 5)
    # Failed items count as not kept: divide by every planned version.
    score = sum(values) / len(rs)
    mode = "list" if listed else "self-query"
    per = ", ".join(f"{s} {b['kept']}/{b['stored']}" for s, b in by_style.items())
    how = "listed by list_ids()" if listed else "found by self-query in the top 5"
    return {
        "score": score,
        "n": len(rs),
        "mode": mode,
        "kept": int(sum(values)),
        "stored": len(rs),
        "by_style": by_style,
        "detail": f"{how}: {per}",
    }


def _retrieval(rs: list[ItemResult], k: int) -> dict[str, Any]:
    pos = [r for r in rs if r.expected]
    neg = [r for r in rs if not r.expected]
    abst = _values(neg, "abstention")
    negative = {"n": len(neg), "abstention": _r(_mean(abst)) if abst else None}
    if not pos:
        return {"status": "not applicable", "score": None, "negative": negative}
    by_type: dict[str, dict[str, Any]] = {}
    types: dict[str, list[ItemResult]] = defaultdict(list)
    for r in pos:
        types[r.groups.get("type", "?")].append(r)
    for t, trs in sorted(types.items()):
        by_type[t] = {
            "n": len(trs),
            f"hit@{k}": _r(_mean(_values(trs, "hit", k))),
            f"recall@{k}": _r(_mean(_values(trs, "recall", k))),
            f"mrr@{k}": _r(_mean(_values(trs, "mrr", k))),
            f"precision@{k}": _r(_mean(_values(trs, "precision", k))),
        }
    score = _mean(_values(pos, "recall", k)) or 0.0
    comp = _values(pos, "r_precision")
    out = {
        "score": score,
        "n": len(pos),
        "by_type": by_type,
        "negative": negative,
        "composite_precision": _r(_mean(comp)),
    }
    detail = f"recall@{k} over {len(pos)} queries"
    if comp:
        detail += f"; composite R-precision {_pct(_mean(comp))}"
    if neg:
        detail += (
            ("; negatives: abstention " + _pct(_mean(abst)))
            if abst
            else (f"; {len(neg)} negatives n/a (store does not abstain)")
        )
    out["detail"] = detail
    return out


def _organisation(rs: list[ItemResult], k: int) -> dict[str, Any]:
    probes = [r for r in rs if r.item_id.startswith("cluster/")]
    cq = [r for r in rs if r.item_id.startswith("query/") and r.expected]
    if not probes and not cq:
        return {"status": "not applicable", "score": None}
    recall = _mean(_values(probes, "cluster_recall", k))
    chance = _mean(_values(probes, "chance_recall", k))
    q_recall = _mean(_values(cq, "recall", k))
    score = recall if recall is not None else q_recall
    lift = (recall / chance) if recall is not None and chance else None
    detail = f"cluster recall@{k} {_pct(recall)} vs chance {_pct(chance)} over {len(probes)} probes"
    if cq:
        detail += f"; cluster queries recall@{k} {_pct(q_recall)} (n={len(cq)})"
    return {
        "score": score,
        "n": len(probes) or len(cq),
        "cluster_recall": _r(recall),
        "chance": _r(chance, 6),
        "lift": _r(lift, 2),
        "probes": len(probes),
        "cluster_queries": {"n": len(cq), f"recall@{k}": _r(q_recall)},
        "detail": detail,
    }


def _forgetting(rs: list[ItemResult]) -> dict[str, Any]:
    if not rs:
        return {"status": "not applicable", "score": None}
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    unseen = 0
    for r in rs:
        v = {m.name: m.value for m in r.metrics}
        before, after = v.get("found_before"), v.get("found_after")
        if before is None or after is None:
            continue
        if not before:
            unseen += 1  # never retrievable: a storage or retrieval miss, not forgetting
            continue
        groups[r.groups.get("frequency", "?")].append((before, after))
    hi, lo = groups.get("high", []), groups.get("low", [])
    kept_hi, kept_lo = int(sum(a for _, a in hi)), int(sum(a for _, a in lo))
    lost = sum(1 for g in groups.values() for _, a in g if not a)
    out: dict[str, Any] = {
        "n_high": len(hi),
        "n_low": len(lo),
        "n_medium": len(groups.get("medium", [])),
        "not_found_before": unseen,
        "lost": lost,
        "retention_high": _r(kept_hi / len(hi)) if hi else None,
        "retention_low": _r(kept_lo / len(lo)) if lo else None,
    }
    if not hi or not lo:
        return {**out, "status": "not applicable", "score": None}
    diff = kept_hi / len(hi) - kept_lo / len(lo)
    ci = newcombe(kept_hi, len(hi), kept_lo, len(lo))
    out.update(difference=_r(diff), ci95=[_r(ci[0]), _r(ci[1])], n=len(hi) + len(lo))
    if lost == 0:
        out.update(
            verdict="no forgetting",
            score=None,
            detail=f"no probed memory was lost after the replay "
            f"({len(hi)} high, {len(lo)} low frequency)",
        )
        return out
    verdict = "frequency-aware" if ci[0] > 0 else "inverted" if ci[1] < 0 else "frequency-blind"
    score = min(1.0, max(0.0, 0.5 + diff / 2))
    out.update(
        verdict=verdict,
        score=score,
        detail=(
            f"retention high {_pct(kept_hi / len(hi))} vs low "
            f"{_pct(kept_lo / len(lo))}, difference {diff:+.3f} "
            f"[{ci[0]:+.3f}, {ci[1]:+.3f}]: {verdict}"
        ),
    )
    return out


def _reasoning(queries: list[ItemResult], k: int) -> dict[str, Any]:
    comp = [r for r in queries if r.groups.get("type") == "composite" and r.expected]
    chains = [r for r in queries if r.groups.get("type") == "chain" and r.expected]
    if not comp and not chains:
        return {"status": "not applicable", "score": None}
    cp = _mean(_values(comp, "r_precision")) if comp else None
    cr = _mean(_values(chains, "chain_recall")) if chains else None
    tau = _values(chains, "kendall_tau")
    full = _mean(_values(chains, "chain_complete")) if chains else None
    parts = [x for x in (cp, cr) if x is not None]
    score = sum(parts) / len(parts)
    detail = []
    if comp:
        detail.append(f"composite R-precision {_pct(cp)} (n={len(comp)})")
    if chains:
        detail.append(
            f"chain recall {_pct(cr)}, full chains {_pct(full)}, order tau {_mean(tau):.2f}"
            if tau
            else f"chain recall {_pct(cr)}, full chains {_pct(full)}, order n/a"
        )
    return {
        "score": score,
        "n": len(comp) + len(chains),
        "composite_precision": _r(cp),
        "n_composite": len(comp),
        "chain_recall": _r(cr),
        "full_chain_success": _r(full),
        "kendall_tau": _r(_mean(tau)),
        "n_tau": len(tau),
        "n_chain": len(chains),
        "detail": "; ".join(detail),
    }


def _deep(rs: list[ItemResult], k: int) -> dict[str, Any]:
    rs = [r for r in rs if r.expected]
    if not rs:
        return {"status": "not applicable", "score": None}
    buckets: dict[str, list[ItemResult]] = defaultdict(list)
    for r in rs:
        buckets[r.groups.get("distance", "near")].append(r)
    by: dict[str, dict[str, Any]] = {}
    for b in ("near", "mid", "far"):
        if buckets.get(b):
            by[b] = {
                "n": len(buckets[b]),
                f"recall@{k}": _r(_mean(_values(buckets[b], "recall", k))),
            }
    recalls = [v[f"recall@{k}"] for v in by.values()]
    score = sum(recalls) / len(recalls)
    near, far = by.get("near", {}).get(f"recall@{k}"), by.get("far", {}).get(f"recall@{k}")
    decay = _r(near - far) if near is not None and far is not None else None
    parts = ", ".join(f"{b} {_pct(v[f'recall@{k}'])}" for b, v in by.items())
    detail = f"recall@{k} {parts}" + (f"; decay near-far {decay:+.3f}" if decay is not None else "")
    seed = any(r.item_id.startswith("deep/") for r in rs)
    out = {"score": score, "n": len(rs), "by_distance": by, "decay": decay, "detail": detail}
    if seed:
        out["note"] = (
            "MemTest depth labels: each probe is the memory's own first version "
            "(the seed's procedure); its distance labels are random"
        )
    return out
