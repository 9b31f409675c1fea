"""Run reports: text, Markdown and JSON from a run directory alone."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemometer.log._schema import ItemResult, Metric, RunHeader, Summary
from mnemometer.report._markdown import md

_HEADLINE = ("hit", "recall", "mrr", "ndcg", "precision")
FAILURE_SHARE = 0.5
"""Above this share of failed items a report shows the failures, not a headline number."""


@dataclass(frozen=True)
class RunView:
    """What a run report shows: the header and the summary (stored or computed)."""

    path: Path
    header: RunHeader
    summary: Summary
    items: list[ItemResult] | None = None
    """The item results, when the caller read them already (else read when needed)."""


def run_json(v: RunView) -> str:
    """Header, every aggregated metric (overall and per group), counts and tables."""
    doc: dict[str, Any] = {
        "header": v.header.model_dump(mode="json"),
        "summary": v.summary.model_dump(mode="json"),
    }
    banner = failure_banner(v)
    if banner:
        doc["no_result"] = banner[0]
    return json.dumps(doc, indent=1, ensure_ascii=False)


def failure_banner(v: RunView) -> list[str]:
    """When most items failed: say so, with the most common errors, instead of numbers.

    A mean of 0.000 with an interval [0.000, 0.000] because every call failed is not a
    result about the system; it must not read like one.
    """
    c = v.summary.counts
    # Failures are counted in the unit they happen in: a benchmark's questions, not its
    # conversations (4 failed questions of 304 are 1.3%, not "4 of 2 items").
    items = c.get("questions", c.get("items", 0))
    failed = c.get("errors", 0) + c.get("timeouts", 0)
    if not items or failed / items <= FAILURE_SHARE:
        return []
    from collections import Counter

    from mnemometer.log._reader import read_items

    errors = Counter(
        (r.error or r.status).split(";")[0][:160] for r in read_items(v.path) if r.status != "ok"
    )
    unit = "questions" if "questions" in c else "items"
    out = [
        f"NO RESULT: {failed} of {items} {unit} failed ({c.get('timeouts', 0)} timed out); "
        "these numbers would describe the failures, not the system.",
        "most common errors:",
    ]
    out += [f"  {n} x {msg}" for msg, n in errors.most_common(3)]
    return out


def run_text(v: RunView) -> str:
    """For people at a terminal."""
    h, s = v.header, v.summary
    out = [_title(h), f"run {h.run_id} · status {h.status} · items {_counts(s)}"]
    banner = failure_banner(v)
    if banner:
        return "\n".join(out + banner + [f"note: {n}" for n in s.notes])
    lead = headline_text(s)
    if lead:
        out.append(f"headline: {lead}")
    cols, rows = _rank_table(s.overall)
    if rows:
        out.append(_grid(cols, rows))
    for m in _scalars(s.overall):
        out.append(f"  {_label(m):<22} {_value(m)}" + (f"  (n={m.n})" if m.n is not None else ""))
    k = _headline_k(s)
    for key, groups in s.groups.items():
        out.append(f"by {key} (hit@{k} / recall@{k} / mrr@{k}, n):" if k else f"by {key}:")
        for value, ms in groups.items():
            out.append("  " + _group_line(value, ms, k))
    for t in s.tables:
        out += [f"{t.title}:", _grid(t.columns, t.rows)]
    out += [f"note: {n}" for n in s.notes]
    return "\n".join(out)


def run_markdown(v: RunView) -> str:
    """For documents."""
    h, s = v.header, v.summary
    run = f"Run `{md(h.run_id)}`, status {h.status}, items {_counts(s)}."
    out = [f"## {md(_title(h))}", "", run, ""]
    banner = [md(b.strip()) for b in failure_banner(v)]
    if banner:
        return "\n".join([*out, f"**{banner[0]}**", "", *(f"- {b}" for b in banner[1:])]) + "\n"
    lead = headline_text(s)
    if lead:
        out += [f"**Headline:** {md(lead)}.", ""]
    cols, rows = _rank_table(s.overall)
    if rows:
        out += _md_table(cols, rows)
    scal = _scalars(s.overall)
    if scal:
        out += _md_table(["metric", "value"], [[_label(m), _value(m)] for m in scal])
    k = _headline_k(s)
    for key, groups in s.groups.items():
        out += [f"### By {md(key)}", ""]
        if k:
            body = []
            for value, ms in groups.items():
                by = {(m.name, m.k): m for m in ms}
                n = by.get(("hit", k))
                if n is None:  # e.g. negative queries: scored on abstention, not rank
                    scalars = ", ".join(f"{_label(m)} {_value(m)}" for m in _scalars(ms))
                    count = next((m.n for m in ms if m.n is not None), "")
                    body.append([value, str(count), scalars, "", ""])
                    continue
                cells = [
                    _value(by[(x, k)]) if (x, k) in by else "" for x in ("hit", "recall", "mrr")
                ]
                body.append([value, str(n.n or ""), *cells])
            out += _md_table([key, "n", f"hit@{k}", f"recall@{k}", f"mrr@{k}"], body)
        else:
            names = sorted({_label(m) for ms in groups.values() for m in ms})
            body = []
            for value, ms in groups.items():
                by = {_label(m): _value(m) for m in ms}
                body.append([value, *(by.get(n, "") for n in names)])
            out += _md_table([key, *names], body)
    for t in s.tables:
        out += [f"### {md(t.title)}", ""] + _md_table(t.columns, t.rows)
    out += [f"- {md(n)}" for n in s.notes]
    return "\n".join(out).rstrip() + "\n"


def headline_text(s: Summary) -> str:
    """``hit@20 0.846 [0.578, 0.957] wilson, n=13 (queries with ground truth)``, or empty."""
    h = s.headline
    if h is None:
        return ""
    if h.value is None:
        return f"{h.label}: no value ({h.scope})"
    iv = h.interval
    ci = (
        f" [{iv.low:.3f}, {iv.high:.3f}] {iv.method}"
        if iv is not None and iv.low is not None and iv.high is not None
        else ""
    )
    clusters = f" in {h.clusters} clusters" if h.clusters else ""
    return f"{h.label} {h.value:.3f}{ci}, n={h.n}{clusters} ({h.scope})"


def _md_table(cols: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(map(md, cols)) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(map(md, r)) + " |" for r in rows]
    return [*lines, ""]


def _value(m: Metric) -> str:
    if m.value is None:
        return "n/a"
    text = f"{m.value:.2f}" if m.unit else f"{m.value:.3f}"
    iv = m.interval
    if iv is not None and iv.low is not None and iv.high is not None:
        digits = 2 if m.unit else 3
        text += f" [{iv.low:.{digits}f}, {iv.high:.{digits}f}]"
    return text


def _label(m: Metric) -> str:
    """``latency p95 (ms)``, ``accuracy``, ``recall@10``."""
    label = m.name if m.k is None else f"{m.name}@{m.k}"
    if m.percentile is not None:
        label += f" p{m.percentile:g}"
    elif m.unit is not None:
        label += " mean"
    return label + (f" ({m.unit})" if m.unit else "")


def _rank_table(metrics: list[Metric]) -> tuple[list[str], list[list[str]]]:
    """Rows: one per headline metric name; columns: one per k."""
    ranked = [m for m in metrics if m.k is not None and m.percentile is None]
    ks = sorted({m.k for m in ranked if m.k is not None})
    by = {(m.name, m.k): m for m in ranked}
    names = [n for n in _HEADLINE if any(key[0] == n for key in by)]
    names += sorted({m.name for m in ranked} - set(names))
    rows = [[n] + [_value(by[(n, k)]) if (n, k) in by else "" for k in ks] for n in names]
    return ["metric"] + [f"@{k}" for k in ks], rows


def _scalars(metrics: list[Metric]) -> list[Metric]:
    return [m for m in metrics if m.k is None or m.percentile is not None]


def _title(h: RunHeader) -> str:
    who = h.system.name + (f" ({h.system.condition})" if h.system.condition else "")
    return (
        f"{h.suite} · {who} · {h.dataset.name} "
        f"({h.dataset.language}, {h.dataset.content_hash[:12]})"
    )


def _headline_k(s: Summary) -> int | None:
    ks = sorted({m.k for m in s.overall if m.name == "hit" and m.k is not None})
    if not ks:
        ks = sorted(
            {
                m.k
                for g in s.groups.values()
                for ms in g.values()
                for m in ms
                if m.name == "hit" and m.k is not None
            }
        )
    return ks[-1] if ks else None


def _group_line(value: str, ms: list[Metric], k: int | None) -> str:
    by = {(m.name, m.k): m for m in ms}
    n = next((m.n for m in ms if m.n is not None), 0)
    if k is None or ("hit", k) not in by:  # e.g. negative queries: show what they are scored on
        cells = [f"{_label(m)} {_value(m)}" for m in _scalars(ms) or ms]
        return f"{value:<20} " + ", ".join(cells) + f"  (n={n})"
    cells = [_value(by[(x, k)]) if (x, k) in by else "-" for x in ("hit", "recall", "mrr")]
    return f"{value:<20} " + " / ".join(cells) + f"  (n={n})"


def _counts(s: Summary) -> str:
    c = s.counts
    done, planned = c.get("items", 0), c.get("planned", c.get("items", 0))
    text = f"{done}/{planned}" if done <= planned else f"{done} results for {planned} planned"
    if "questions" in c:  # failures below are counted in questions
        text += f" ({c['questions']} questions"
        bad = [f"{c[k]} {k}" for k in ("errors", "timeouts", "judge_errors") if c.get(k)]
        return text + (f"; {', '.join(bad)})" if bad else ")")
    bad = [f"{c[k]} {k}" for k in ("errors", "timeouts") if c.get(k)]
    return text + (f" ({', '.join(bad)})" if bad else "")


def _grid(cols: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [cols, *rows]) for i in range(len(cols))]

    def line(r: list[str]) -> str:
        return "  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True))

    return "\n".join([line(cols)] + [line(r) for r in rows])
