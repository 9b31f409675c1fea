"""The scenarios suite's summary: accuracy with intervals, bands, latency scaling.

Accuracy per scenario and per noise level, the seed's rating bands beside them, and latency
against the number of facts stored.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from mnemometer.log._schema import ItemResult, Metric, RunHeader, Summary, Table
from mnemometer.scoring.aggregate import distribution
from mnemometer.scoring.intervals import interval
from mnemometer.scoring.scenarios.bands import banded_row
from mnemometer.scoring.scenarios.scaling import latency_by_facts


def mean_ci(
    values: list[float], clusters: list[str] | None = None
) -> tuple[float | None, float | None, float | None]:
    """Mean and its 95% interval by the one interval policy (no bounds for one value)."""
    if not values:
        return None, None, None
    iv = interval(values, clusters, binary=False)
    mean = sum(values) / len(values)
    return (mean, None, None) if iv is None else (mean, iv.low, iv.high)


def _value(r: ItemResult, name: str) -> float | None:
    return next((m.value for m in r.metrics if m.name == name), None)


def summarize_items(header: RunHeader, items: list[ItemResult]) -> Summary:
    """The scenarios summary (also used to rebuild reports from a run directory)."""
    del header
    acc = [_value(r, "accuracy") or 0.0 for r in items]
    plays = [r.groups.get("scenario", r.item_id) for r in items]  # epochs of one scenario
    sims = [v for r in items if (v := _value(r, "similarity")) is not None]
    turns = [t for r in items for t in r.extra.get("turns", [])]
    total = [t["latency_ms"] for t in turns if t.get("latency_ms") is not None]
    mem = [t["memory_ms"] for t in turns if t.get("memory_ms") is not None]
    llm = [t["llm_ms"] for t in turns if t.get("llm_ms") is not None]
    tok = [sum((t.get("tokens") or {}).values()) for t in turns if t.get("tokens")]
    overall = [
        Metric(
            name="accuracy",
            value=sum(acc) / len(acc) if acc else None,
            n=len(acc),
            interval=interval(acc, plays, binary=False),
        ),
        Metric(name="similarity", value=sum(sims) / len(sims) if sims else None, n=len(sims)),
    ]
    for label, values in (("turn", total), ("memory", mem), ("llm", llm)):
        overall += [m for m in distribution(f"{label}_latency", values) if m.percentile]
    overall += [m for m in distribution("tokens_per_turn", tok, unit="tokens") if not m.percentile]
    by: dict[tuple[str, str], list[ItemResult]] = defaultdict(list)
    by_noise: dict[str, list[float]] = defaultdict(list)
    for r in items:
        by[(r.groups.get("scenario", r.item_id), r.groups.get("noise", "0"))].append(r)
        by_noise[r.groups.get("noise", "0")].append(_value(r, "accuracy") or 0.0)
    rows = []
    for (sid, level), rs in by.items():
        a = [_value(r, "accuracy") or 0.0 for r in rs]
        m, low, high = mean_ci(a)
        s = [v for r in rs if (v := _value(r, "similarity")) is not None]
        lat = [
            t["latency_ms"]
            for r in rs
            for t in r.extra.get("turns", [])
            if t.get("latency_ms") is not None
        ]
        rows.append(
            {
                "scenario": sid,
                "noise": float(level),
                "n": len(rs),
                "accuracy": m,
                "ci_low": low,
                "ci_high": high,
                "mean_latency_ms": sum(lat) / len(lat) if lat else None,
                "mean_similarity": sum(s) / len(s) if s else None,
                "failed": sum(1 for r in rs if r.status != "ok"),
            }
        )
    noise_rows = []
    for level, a in sorted(by_noise.items(), key=lambda kv: float(kv[0])):
        m, low, high = mean_ci(a)
        noise_rows.append(
            {"noise": float(level), "n": len(a), "accuracy": m, "ci_low": low, "ci_high": high}
        )
    counts = {
        "items": len(items),
        "errors": sum(1 for r in items if r.status == "error"),
        "timeouts": sum(1 for r in items if r.status == "timeout"),
        "graded_turns": sum(1 for t in turns if "grade" in t),
        "failed_turns": sum(1 for t in turns if t.get("error")),
    }
    scaling, slopes = latency_by_facts(items)
    notes = []
    if counts["errors"] or counts["timeouts"]:
        notes.append("failed scenarios and turns score 0.0 (they are counted, not dropped)")
    return Summary(
        overall=overall,
        counts=counts,
        notes=notes,
        tables=[
            _table(
                "scenarios",
                "Accuracy by scenario (mean and 95% CI over epochs)",
                [
                    "scenario",
                    "noise",
                    "n",
                    "accuracy",
                    "95% CI",
                    "mean latency ms",
                    "mean similarity",
                    "failed",
                ],
                [
                    [
                        r["scenario"],
                        f"{r['noise']:g}",
                        r["n"],
                        _f(r["accuracy"]),
                        _ci(r),
                        _f(r["mean_latency_ms"], 1),
                        _f(r["mean_similarity"]),
                        r["failed"],
                    ]
                    for r in rows
                ],
                rows,
            ),
            _table(
                "accuracy_vs_noise",
                "Accuracy against noise",
                ["noise", "n", "accuracy", "95% CI"],
                [[f"{r['noise']:g}", r["n"], _f(r["accuracy"]), _ci(r)] for r in noise_rows],
                noise_rows,
            ),
            _rating_table(rows),
            _scaling_table(scaling, slopes),
        ],
        sections={"scalability": slopes},
    )


def _rating_table(rows: list[dict[str, Any]]) -> Table:
    """The seed's rating bands beside each scenario's numbers, and for their average."""
    multi = len({r["noise"] for r in rows}) > 1
    banded = [
        banded_row(
            r["scenario"] + (f"@noise={r['noise']:g}" if multi else ""),
            r["accuracy"],
            r["mean_similarity"],
            r["mean_latency_ms"],
        )
        for r in sorted(rows, key=lambda r: (r["scenario"], r["noise"]))
    ]
    avg = {
        c: _mean([r[c] for r in rows]) for c in ("accuracy", "mean_similarity", "mean_latency_ms")
    }
    banded.append(
        banded_row("AVERAGE", avg["accuracy"], avg["mean_similarity"], avg["mean_latency_ms"])
    )
    return _table(
        "seed_rating",
        "The seed's rating bands (Excellent: accuracy >= 0.90, similarity >= 0.80, latency "
        "< 5000 ms; Good: >= 0.70, >= 0.70, < 8000 ms; Poor: < 0.50, < 0.60, > 10000 ms)",
        ["scenario", "accuracy", "band", "similarity", "band", "latency ms", "band", "rating"],
        [
            [
                b["scenario"],
                _f(b["accuracy"]),
                b["accuracy_band"] or "n/a",
                _f(b["similarity"]),
                b["similarity_band"] or "n/a",
                _f(b["mean_latency_ms"], 1),
                b["latency_band"] or "n/a",
                b["rating"] or "n/a",
            ]
            for b in banded
        ],
        banded,
    )


def _scaling_table(rows: list[dict[str, Any]], slopes: dict[str, Any]) -> Table:
    """Latency against the number of facts stored before the turn (memory scalability)."""
    per = slopes["ms_per_fact"]
    mem = slopes["memory_ms_per_fact"]
    if mem is not None:
        per_mem = f", memory {mem:+.2f} ms per fact"
    else:
        per_mem = ""
    trend = "n/a" if per is None else f"{per:+.2f} ms per fact"
    return _table(
        "latency_vs_facts",
        f"Latency against facts stored (slope {trend}{per_mem})",
        ["facts stored", "turns", "mean latency ms", "p95 latency ms", "mean memory ms"],
        [
            [
                f"{r['facts_from']}-{r['facts_to']}"
                if r["facts_to"] > r["facts_from"]
                else r["facts_from"],
                r["turns"],
                _f(r["mean_latency_ms"], 1),
                _f(r["p95_latency_ms"], 1),
                _f(r["mean_memory_ms"], 1),
            ]
            for r in rows
        ],
        rows,
    )


def _mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def _f(v: float | None, digits: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def _ci(r: dict[str, Any]) -> str:
    if r["ci_low"] is None:
        return "n/a"
    return f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"


def _table(name: str, title: str, columns: list[str], rows: list[list[Any]], data: list) -> Table:
    """A report table (rendered by every report format) that keeps its raw numbers."""
    return Table(
        name=name, title=title, columns=columns, rows=[[str(c) for c in r] for r in rows], data=data
    )
