"""Each dimension's score and figures, from item results alone.

Every score here is one a trivial store cannot max: storage is read back, never taken from
the store's say-so; organisation is measured above a ranking that knows the person but not
the topic; forgetting gives nothing for keeping what was never used and less than "no
forgetting" for losing memories at random; retrieval figures stand beside their ceilings.
Every interval comes from :mod:`mnemometer.stats`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from mnemometer.log._schema import ItemResult
from mnemometer.scoring.intervals import interval
from mnemometer.stats import newcombe


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
) -> list[dict[str, Any]]:
    """Chain recall, order agreement (Kendall tau) and full-chain success over ``ranked``.

    Plain dicts that validate as :class:`Metric` (the item results are plain data).
    """
    rel = set(relevant)
    found = [x for x in ranked if x in rel]
    at_k = {"name": "chain_recall", "k": len(ranked)} if ranked else {"name": "chain_recall"}
    return [
        {**at_k, "value": len(set(found)) / len(rel)},
        {"name": "kendall_tau", "value": kendall_tau(ranked, order) if order else None},
        {"name": "chain_complete", "value": 1.0 if rel <= set(found) else 0.0},
    ]


def values(items: Iterable[ItemResult], name: str, k: int | None = None) -> list[float]:
    """Every non-missing value of metric ``name`` (at ``k``, if given) over ``items``."""
    out = []
    for r in items:
        for m in r.metrics:
            if m.name == name and (k is None or m.k == k) and m.value is not None:
                out.append(m.value)
    return out


def mean(xs: Sequence[float]) -> float | None:
    """The mean, or ``None`` for no values."""
    return sum(xs) / len(xs) if xs else None


def rnd(x: float | None, nd: int = 4) -> float | None:
    """``x`` rounded for the summary (``None`` stays ``None``)."""
    return None if x is None else round(x, nd)


def pct(x: float | None) -> str:
    """``x`` as a percentage with one decimal, or ``n/a``."""
    return "n/a" if x is None else f"{100 * x:.1f}%"


def ceiling(r: ItemResult, k: int) -> float:
    """The best recall@k any ranking can reach on ``r``: min(1, k / |relevant|)."""
    return min(1.0, k / len(set(r.expected)))


def _interval(xs: Sequence[float], bounds: tuple[float, float]) -> list[float | None] | None:
    iv = interval(xs, binary=False, bounds=bounds)  # the one policy: Student t, none for one
    return None if iv is None else [rnd(iv.low), rnd(iv.high)]


def storage(rs: list[ItemResult]) -> dict[str, Any]:
    """Share of stored versions read back in the top 5 of a search for their content."""
    if not rs:
        return {"status": "not applicable", "score": None}
    by_style: dict[str, dict[str, Any]] = {}
    styles: dict[str, list[tuple[float, float]]] = defaultdict(list)  # (kept@1, kept@5)
    per_memory: dict[str, list[float]] = defaultdict(list)
    listed: list[tuple[float, float]] = []  # (listed, kept@5) of items that list ids
    for r in rs:  # one pass over each item's metrics: thousands of items, a few names
        got = {(m.name, m.k): m.value for m in r.metrics if m.value is not None}
        k1, k5 = got.get(("kept", 1)), got.get(("kept", 5))
        styles[r.groups.get("style", "text")].append((k1, k5))  # type: ignore[arg-type]
        per_memory[r.item_id.split("/")[1]].append(k5 if k5 is not None else 0.0)
        if ("listed", None) in got:
            listed.append((got[("listed", None)], k5))  # type: ignore[arg-type]
    for style, pairs in styles.items():
        v1 = [a for a, _ in pairs if a is not None]
        v5 = [b for _, b in pairs if b is not None]
        by_style[style] = {
            "kept": int(sum(v5)),
            "stored": len(pairs),
            "top1": rnd(sum(v1) / len(pairs)),
            "top5": rnd(sum(v5) / len(pairs)),
        }
    kept = sum(b["kept"] for b in by_style.values())
    score = kept / len(rs)  # failed items count as not read back
    total = max((int(r.extra.get("memories", 0)) for r in rs), default=0)
    gone = max((int(r.extra.get("gone_at_horizon", 0)) for r in rs), default=0)
    sampled = len(per_memory) < total
    out: dict[str, Any] = {
        "score": score,
        "n": len(rs),
        "mode": "read-back",
        "kept": kept,
        "stored": len(rs),
        "memories_read_back": len(per_memory),
        "memories": total or len(per_memory),
        "by_style": by_style,
    }
    per = ", ".join(f"{s} {b['kept']}/{b['stored']}" for s, b in by_style.items())
    detail = f"read back in the top 5: {per}"
    if sampled:
        # The sampled unit is the memory (its versions succeed or fail together).
        fractions = [sum(v) / len(v) for v in per_memory.values()]
        out["ci95"] = _interval(fractions, (0.0, 1.0))
        ci = out["ci95"]
        detail += f" (sample of {len(per_memory):,} of {total:,} memories"
        detail += f", 95% CI [{pct(ci[0])}, {pct(ci[1])}])" if ci else ")"
    if gone:  # lost in the forgetting replay: gone for every dimension (not read back)
        out["gone_at_horizon"] = gone
        detail += f"; {gone:,} of {total:,} memories gone at the forgetting horizon"
    if listed:
        claimed = int(sum(a for a, _ in listed))
        unfounded = sum(1 for a, b in listed if a == 1.0 and b != 1.0)
        out.update(listed=claimed, listed_not_read_back=unfounded)
        detail += f"; list_ids claims {claimed}/{len(listed)} (not scored)"
        if unfounded:
            detail += f", {unfounded} of them not read back"
    out["detail"] = detail
    return out


def retrieval(rs: list[ItemResult], k: int) -> dict[str, Any]:
    """Mean recall@k over the labelled queries, each type beside its ceiling."""
    pos = [r for r in rs if r.expected]
    neg = [r for r in rs if not r.expected]
    abst = values(neg, "abstention")
    negative = {"n": len(neg), "abstention": rnd(mean(abst)) if abst else None}
    if not pos:
        return {"status": "not applicable", "score": None, "negative": negative}
    by_type: dict[str, dict[str, Any]] = {}
    types: dict[str, list[ItemResult]] = defaultdict(list)
    for r in pos:
        types[r.groups.get("type", "?")].append(r)
    for t, trs in sorted(types.items()):
        by_type[t] = type_figures(trs, k)
    score = mean(values(pos, "recall", k)) or 0.0
    top = mean([ceiling(r, k) for r in pos]) or 0.0
    comp = values(pos, "r_precision")
    out = {
        "score": score,
        "n": len(pos),
        "ceiling": rnd(top),
        "of_ceiling": rnd(score / top) if top else None,
        "by_type": by_type,
        "negative": negative,
        "composite_precision": rnd(mean(comp)),
    }
    detail = f"recall@{k} over {len(pos)} queries (ceiling {pct(top)})"
    if comp:
        detail += f"; composite R-precision {pct(mean(comp))}"
    if neg:
        detail += (
            ("; negatives: abstention " + pct(mean(abst)))
            if abst
            else (f"; {len(neg)} negatives n/a (store does not abstain)")
        )
    out["detail"] = detail
    return out


def type_figures(rs: list[ItemResult], k: int) -> dict[str, Any]:
    """n, hit, recall (with its ceiling and the share of it reached), MRR and precision at k.

    The recall ceiling is mean(min(1, k/|R|)): with more relevant memories than k, no
    ranking finds them all. The precision ceiling is mean(min(1, |R|/k)).
    """
    recall = mean(values(rs, "recall", k))
    top = mean([ceiling(r, k) for r in rs])
    return {
        "n": len(rs),
        f"hit@{k}": rnd(mean(values(rs, "hit", k))),
        f"recall@{k}": rnd(recall),
        f"recall_ceiling@{k}": rnd(top),
        "of_ceiling": rnd(recall / top) if recall is not None and top else None,
        f"mrr@{k}": rnd(mean(values(rs, "mrr", k))),
        f"precision@{k}": rnd(mean(values(rs, "precision", k))),
        f"precision_ceiling@{k}": rnd(mean([min(1.0, len(set(r.expected)) / k) for r in rs])),
    }


def organisation(rs: list[ItemResult], k: int) -> dict[str, Any]:
    """Cluster recall@k above a topic-blind baseline, as a share of the room above it.

    The baseline (``baseline_recall``, per item) is the expected recall@k of a ranking that
    knows the probe's person but not its topic. Score = (R - B) / (C - B), clipped to
    [0, 1], with R, B and C the mean recall, baseline and ceiling: a store that matches
    the person only scores about 0, a perfect one 1.
    """
    probes = [r for r in rs if r.item_id.startswith("cluster/")]
    cq = [r for r in rs if r.item_id.startswith("query/") and r.expected]
    if not probes and not cq:
        return {"status": "not applicable", "score": None}

    def figures(items: list[ItemResult], name: str) -> dict[str, Any]:
        rec = values(items, name, k)
        base = values(items, "baseline_recall", k)
        if not rec or len(base) != len(rec):
            return {"n": len(items), f"recall@{k}": rnd(mean(rec))}
        r, b, c = mean(rec), mean(base), mean([ceiling(x, k) for x in items])
        assert r is not None and b is not None and c is not None
        excess = [x - y for x, y in zip(rec, base, strict=True)]
        return {
            "n": len(items),
            f"recall@{k}": rnd(r),
            "baseline": rnd(b),
            "ceiling": rnd(c),
            "lift": rnd(r / b, 2) if b else None,
            "excess": rnd(r - b),
            "excess_ci95": _interval(excess, (-1.0, 1.0)),
            "room": c - b,
        }

    p = figures(probes, "cluster_recall") if probes else None
    q = figures(cq, "recall") if cq else None
    main = p or q
    assert main is not None
    out: dict[str, Any] = {"n": main["n"], "probes": len(probes)}
    if p is not None:
        out.update({k2: v for k2, v in p.items() if k2 != "room"})
        out["cluster_recall"] = p[f"recall@{k}"]
    out["cluster_queries"] = (
        {k2: v for k2, v in q.items() if k2 != "room"} if q else {"n": 0, f"recall@{k}": None}
    )
    if "room" not in main:
        out.update(status="not applicable", score=None, reason="no topic-blind baseline")
        return out
    if main["room"] <= 1e-9:
        out.update(
            status="not applicable",
            score=None,
            reason="the topic-blind baseline already reaches the ceiling (clusters are "
            "whole person pools): nothing to measure above it",
        )
        return out
    r, b = main[f"recall@{k}"], main["baseline"]
    score = min(1.0, max(0.0, (r - b) / main["room"]))
    out["score"] = score
    what = "cluster recall" if p is not None else "cluster-query recall"
    detail = (
        f"{what}@{k} {pct(r)} vs topic-blind baseline {pct(b)} "
        f"(lift {main['lift']}x; ceiling {pct(main['ceiling'])}) over {main['n']} "
        + ("probes" if p is not None else "queries")
    )
    if p is not None and q is not None:
        detail += f"; cluster queries {pct(q[f'recall@{k}'])} vs {pct(q.get('baseline'))}"
    out["detail"] = detail
    return out


def forgetting(rs: list[ItemResult]) -> dict[str, Any]:
    """Keep what was used, forget selectively: mean(retention_high, retention_high - low).

    Equivalently ``retention_high - retention_low / 2``, clipped to [0, 1]. Keeping
    everything scores 0.5; losing memories at random at rate q scores (1 - q) / 2 in
    expectation, never more than keeping everything; keeping what was accessed and losing
    what never was scores 1. Retention of never-accessed memories earns nothing.
    """
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
        "retention_high": rnd(kept_hi / len(hi)) if hi else None,
        "retention_low": rnd(kept_lo / len(lo)) if lo else None,
    }
    if not hi or not lo:
        return {**out, "status": "not applicable", "score": None}
    ret_hi, ret_lo = kept_hi / len(hi), kept_lo / len(lo)
    diff = ret_hi - ret_lo
    ci = newcombe(kept_hi, len(hi), kept_lo, len(lo))
    score = min(1.0, max(0.0, ret_hi - ret_lo / 2))
    out.update(
        difference=rnd(diff), ci95=[rnd(ci.low), rnd(ci.high)], n=len(hi) + len(lo), score=score
    )
    if lost == 0:
        verdict = "no forgetting"
        detail = (
            f"nothing lost after the replay ({len(hi)} high, {len(lo)} low frequency): "
            "keeps what was used, forgets nothing selectively"
        )
    else:
        verdict = (
            "frequency-aware" if ci.low > 0 else "inverted" if ci.high < 0 else "frequency-blind"
        )
        detail = (
            f"retention high {pct(ret_hi)} vs low {pct(ret_lo)}, difference {diff:+.3f} "
            f"[{ci.low:+.3f}, {ci.high:+.3f}]: {verdict}"
        )
    out.update(verdict=verdict, detail=detail)
    return out


def reasoning(queries: list[ItemResult], k: int) -> dict[str, Any]:
    """Mean of composite R-precision and chain recall, with chain order and completeness."""
    del k
    comp = [r for r in queries if r.groups.get("type") == "composite" and r.expected]
    chains = [r for r in queries if r.groups.get("type") == "chain" and r.expected]
    if not comp and not chains:
        return {"status": "not applicable", "score": None}
    cp = mean(values(comp, "r_precision")) if comp else None
    cr = mean(values(chains, "chain_recall")) if chains else None
    tau = values(chains, "kendall_tau")
    full = mean(values(chains, "chain_complete")) if chains else None
    parts = [x for x in (cp, cr) if x is not None]
    score = sum(parts) / len(parts)
    detail = []
    if comp:
        detail.append(f"composite R-precision {pct(cp)} (n={len(comp)})")
    if chains:
        t = mean(tau)
        order = f"order tau {t:.2f}" if t is not None else "order n/a"
        detail.append(f"chain recall {pct(cr)}, full chains {pct(full)}, {order}")
    return {
        "score": score,
        "n": len(comp) + len(chains),
        "composite_precision": rnd(cp),
        "n_composite": len(comp),
        "chain_recall": rnd(cr),
        "full_chain_success": rnd(full),
        "kendall_tau": rnd(mean(tau)),
        "n_tau": len(tau),
        "n_chain": len(chains),
        "detail": "; ".join(detail),
    }


def deep(rs: list[ItemResult], k: int) -> dict[str, Any]:
    """Recall@k per semantic distance (near, mid, far), each beside its ceiling."""
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
                f"recall@{k}": rnd(mean(values(buckets[b], "recall", k))),
                f"recall_ceiling@{k}": rnd(mean([ceiling(r, k) for r in buckets[b]])),
            }
    recalls = [v[f"recall@{k}"] for v in by.values()]
    score = sum(recalls) / len(recalls)
    near, far = by.get("near", {}).get(f"recall@{k}"), by.get("far", {}).get(f"recall@{k}")
    decay = rnd(near - far) if near is not None and far is not None else None
    parts = ", ".join(f"{b} {pct(v[f'recall@{k}'])}" for b, v in by.items())
    detail = f"recall@{k} {parts}" + (f"; decay near-far {decay:+.3f}" if decay is not None else "")
    seed = any(r.item_id.startswith("deep/") for r in rs)
    out = {"score": score, "n": len(rs), "by_distance": by, "decay": decay, "detail": detail}
    if seed:
        out["note"] = (
            "MemTest depth labels: each probe is the memory's own first version "
            "(the seed's procedure); its distance labels are random"
        )
    return out
