"""Scoring the six dimensions from item results, and the overall weighted score.

Everything here is derived from the run log's items (and the header's options), so a
report recomputes exactly what the run printed.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from mnemometer.log._schema import ItemResult, Metric, RunHeader, Summary, Table
from mnemometer.scoring.aggregate import latency_metrics
from mnemometer.scoring.memtest import dimensions as D
from mnemometer.scoring.memtest.dimensions import chain_metrics, kendall_tau, pct, rnd
from mnemometer.scoring.retrieval import duplicates_note

__all__ = ["DEFAULT_WEIGHTS", "DIMENSIONS", "chain_metrics", "kendall_tau", "summarize"]

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
renormalised (so "not applicable" neither helps nor hurts)."""
NOT_APPLICABLE = {
    "storage": "the dataset has no memories",
    "retrieval": "the dataset has no person/location/event/time/composite queries with ground truth",
    "organisation": "no cluster labels shared by two or more memories (and no cluster queries)",
    "forgetting": "no memories with both high- and low-frequency labels (no access schedule)",
    "reasoning": "the dataset has no composite or chain queries",
    "deep": "no deep queries and no memories with a semantic-distance label",
}
FORMULAS = {
    "storage": "sum(kept) / versions read back; kept = own id in the top 5 (+ the other memories "
    "holding every word searched) of a search for the version's content, its text without the "
    "names its labels give and without capitalised words (behaviour only: list_ids() is "
    "reported as a claim, never scored); "
    "over a seeded sample of storage_limit memories, with a 95% t interval over memories",
    "retrieval": "mean recall@k over person/location/event/time/composite (and other labelled) "
    "queries, beside its ceiling mean(min(1, k/|R|)) per type; composite precision = mean "
    "R-precision; negatives: abstention (empty result) for stores that declare abstains",
    "organisation": "R = mean cluster recall@k (|top-k(member) minus itself, intersected with "
    "its cluster-mates| / |cluster-mates|); B = mean recall@k of a topic-blind ranking (the "
    "member's person's other memories first, in random order); C = mean min(1, k/|mates|); "
    "score = clip((R - B) / (C - B), 0, 1); lift = R / B",
    "forgetting": "retention = found after the access replay and clock advance / found before, "
    "per frequency level; score = clip(retention_high - retention_low / 2, 0, 1) = "
    "mean(retention_high, retention_high - retention_low): keeping everything 0.5, random "
    "loss at rate q (1 - q) / 2; d = high - low with Newcombe's 95% interval; every memory "
    "lost by the horizon is left out of every other dimension's searches",
    "reasoning": "mean(composite R-precision, chain recall); chains also report Kendall tau-a "
    "of retrieved hops vs true order and full-chain success",
    "deep": "mean over near/mid/far (measured semantic distance) of recall@k, each beside its "
    "ceiling; decay = near - far",
    "overall": "sum(w_d * s_d) / sum(w_d) over dimensions with a score",
}
"""One-line formulas, included in every summary (see docs/memtest.md for the procedure)."""


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
        "storage": D.storage(by_dim["storage"]),
        "retrieval": D.retrieval(by_dim["retrieval"], k),
        "organisation": D.organisation(by_dim["organisation"], k),
        "forgetting": D.forgetting(by_dim["forgetting"]),
        "reasoning": D.reasoning(queries, k),
        "deep": D.deep(by_dim["deep"], k),
    }
    na = dict(not_applicable or {})
    for name, d in dims.items():
        if d.get("status") == "not applicable" and "reason" not in d:
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
            "forgetting: the store forgot nothing: it scores 0.5 (it keeps what was used but "
            "forgets nothing selectively); random loss scores less"
        )
    gone = dims["storage"].get("gone_at_horizon")
    if gone:
        notes.append(
            f"{gone:,} memories were gone at the forgetting horizon: every dimension asks for "
            "them and does not find them (the other dimensions search the store given the data "
            "again, without them)"
        )
    neg = dims["retrieval"].get("negative") or {}
    if neg.get("n") and neg.get("abstention") is None:
        notes.append(
            f"{neg['n']} negative queries not scored: the store does not declare "
            "that an empty result means 'nothing relevant' (abstains)"
        )
    dup = duplicates_note(items)
    if dup:
        notes.append(dup)
    if counts["errors"] or counts["timeouts"]:
        notes.append("failed and timed-out items score 0 on their dimension")
    overall_metrics = [Metric(name="overall", value=overall, n=len(used))]
    overall_metrics += latency_metrics([r.latency_ms for r in items if r.latency_ms is not None])
    table = Table(
        name="dimensions",
        title="MemTest dimensions",
        columns=["dimension", "score", "weight", "detail"],
        rows=rows
        + [["overall", pct(overall), f"{total:.2f}", "weighted mean of scored dimensions"]],
        data=[{"dimension": n, **dims[n]} for n in DIMENSIONS],
    )
    tables = [table]
    if dims["retrieval"].get("by_type"):
        tables.append(_type_table(dims["retrieval"], k))
    section = {
        "overall": rnd(overall),
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
        tables=tables,
        sections={"memtest": section},
    )


def _means(rs: list[ItemResult]) -> list[Metric]:
    from mnemometer.scoring.aggregate import mean_metrics

    return mean_metrics(r.metrics for r in rs)


def _row(name: str, d: dict[str, Any], weight: float, used: bool) -> list[str]:
    score = d.get("score")
    if d.get("status") == "not applicable":
        return [name, "n/a", f"{weight:.2f}", f"not applicable: {d['reason']}"]
    return [name, pct(score), f"{weight:.2f}" if used else "-", d.get("detail", "")]


def _type_table(retrieval: dict[str, Any], k: int) -> Table:
    """Each query type's recall@k beside its ceiling (and the share of it reached)."""
    cols = ["type", "n", f"recall@{k}", "ceiling", "of ceiling", f"hit@{k}", f"MRR@{k}"]
    rows, data = [], []
    for t, f in (retrieval.get("by_type") or {}).items():
        rows.append(
            [
                t,
                str(f["n"]),
                pct(f[f"recall@{k}"]),
                pct(f[f"recall_ceiling@{k}"]),
                pct(f["of_ceiling"]),
                pct(f[f"hit@{k}"]),
                "n/a" if f[f"mrr@{k}"] is None else f"{f[f'mrr@{k}']:.3f}",
            ]
        )
        data.append({"type": t, **f})
    return Table(
        name="retrieval_types",
        title=f"Retrieval by query type (recall@{k} beside its ceiling, mean min(1, k/|R|))",
        columns=cols,
        rows=rows,
        data=data,
    )
