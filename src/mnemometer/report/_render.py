"""Reports from run directories: text, Markdown and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from mnemometer.log._reader import read_header
from mnemometer.log._schema import Metric, RunHeader, Summary
from mnemometer.runner._run import summarize

Format = Literal["text", "md", "json"]
_HEADLINE = ("hit", "recall", "mrr", "ndcg", "precision")


def report(run_dir: str | Path, fmt: Format = "text") -> str:
    """Render a run directory as ``text``, ``md`` (Markdown) or ``json``.

    JSON is machine-readable and holds the header, every aggregated metric (overall and per
    group) and the counts; text and Markdown show the same numbers for people.
    """
    header = read_header(run_dir)
    summary = summarize(run_dir)
    if fmt == "json":
        return json.dumps(_as_json(header, summary), indent=1, ensure_ascii=False)
    if fmt == "md":
        return _markdown(header, summary)
    if fmt == "text":
        return _text(header, summary)
    raise ValueError(f"unknown format {fmt!r}")


def _as_json(header: RunHeader, summary: Summary) -> dict[str, Any]:
    return {
        "header": header.model_dump(mode="json"),
        "summary": summary.model_dump(mode="json"),
    }


def _fmt(m: Metric) -> str:
    if m.value is None:
        return "n/a"
    if m.name.endswith("_ms"):
        return f"{m.value:.2f}"
    return f"{m.value:.3f}"


def _ks(metrics: list[Metric]) -> list[int]:
    return sorted({m.k for m in metrics if m.k is not None})


def _rank_table(metrics: list[Metric]) -> tuple[list[str], list[list[str]]]:
    """Rows: one per metric name; columns: one per k."""
    ks = _ks(metrics)
    by = {(m.name, m.k): m for m in metrics}
    names = [n for n in _HEADLINE if any(key[0] == n for key in by)]
    rows = [[n] + [_fmt(by[(n, k)]) if (n, k) in by else "" for k in ks] for n in names]
    return ["metric"] + [f"@{k}" for k in ks], rows


def _scalars(metrics: list[Metric]) -> list[Metric]:
    return [m for m in metrics if m.k is None]


def _title(h: RunHeader) -> str:
    return (
        f"{h.suite} · {h.system.name} · {h.dataset.name} "
        f"({h.dataset.language}, {h.dataset.content_hash[:12]})"
    )


def _text(h: RunHeader, s: Summary) -> str:
    out = [_title(h), f"run {h.run_id} · status {h.status} · items {_counts(s)}"]
    cols, rows = _rank_table(s.overall)
    if rows:
        out.append(_grid(cols, rows))
    for m in _scalars(s.overall):
        out.append(f"  {m.key:<18} {_fmt(m)}" + (f"  (n={m.n})" if m.n is not None else ""))
    for key, groups in s.groups.items():
        k = _headline_k(s.overall, s)
        out.append(f"by {key} (hit@{k} / recall@{k} / mrr@{k}, n):")
        for value, ms in groups.items():
            out.append("  " + _group_line(value, ms, k))
    for section, body in s.sections.items():
        if _is_table(body):
            out += [f"{body.get('title', section)}:", _grid(body["columns"], body["rows"])]
        else:
            out.append(f"{section}: {json.dumps(body, ensure_ascii=False)}")
    out += [f"note: {n}" for n in s.notes]
    return "\n".join(out)


def _markdown(h: RunHeader, s: Summary) -> str:
    out = [f"## {_title(h)}", "", f"Run `{h.run_id}`, status {h.status}, items {_counts(s)}.", ""]
    cols, rows = _rank_table(s.overall)
    if rows:
        out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        out.append("")
    scal = _scalars(s.overall)
    if scal:
        out += ["| metric | value |", "|---|---|"] + [f"| {m.key} | {_fmt(m)} |" for m in scal]
        out.append("")
    k = _headline_k(s.overall, s)
    for key, groups in s.groups.items():
        out += [
            f"### By {key}",
            "",
            f"| {key} | n | hit@{k} | recall@{k} | mrr@{k} |",
            "|---|---|---|---|---|",
        ]
        for value, ms in groups.items():
            by = {(m.name, m.k): m for m in ms}
            n = by.get(("hit", k))
            if n is None:  # e.g. negative queries: scored on abstention, not rank
                scal = ", ".join(f"{m.key} {_fmt(m)}" for m in _scalars(ms))
                count = next((m.n for m in ms if m.n is not None), "")
                out.append(f"| {value} | {count} | {scal} | | |")
                continue
            cells = [_fmt(by[(x, k)]) if (x, k) in by else "" for x in ("hit", "recall", "mrr")]
            out.append(f"| {value} | {n.n if n else ''} | " + " | ".join(cells) + " |")
        out.append("")
    for section, body in s.sections.items():
        if _is_table(body):  # sections without a table stay in the JSON report only
            cols, rows = body["columns"], body["rows"]
            out += [
                f"### {body.get('title', section)}",
                "",
                "| " + " | ".join(cols) + " |",
                "|" + "---|" * len(cols),
            ]
            out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
            out.append("")
    out += [f"- {n}" for n in s.notes]
    return "\n".join(out).rstrip() + "\n"


def _is_table(body: Any) -> bool:
    """A section renders as a table when it has ``columns`` and ``rows`` (lists of strings)."""
    return (
        isinstance(body, dict)
        and isinstance(body.get("columns"), list)
        and isinstance(body.get("rows"), list)
    )


def _headline_k(metrics: list[Metric], s: Summary | None = None) -> int | None:
    ks = _ks(metrics)
    if not ks and s is not None:  # e.g. a suite whose overall metrics are scores, not ranks
        ks = _ks([m for g in s.groups.values() for ms in g.values() for m in ms])
    return ks[-1] if ks else None


def _group_line(value: str, ms: list[Metric], k: int | None) -> str:
    by = {(m.name, m.k): m for m in ms}
    n = next((m.n for m in ms if m.n is not None), 0)
    if ("hit", k) not in by:  # e.g. negative queries: show what they are scored on
        cells = [f"{m.key} {_fmt(m)}" for m in _scalars(ms)]
        return f"{value:<20} " + ", ".join(cells) + f"  (n={n})"
    cells = [_fmt(by[(x, k)]) if (x, k) in by else "-" for x in ("hit", "recall", "mrr")]
    return f"{value:<20} " + " / ".join(cells) + f"  (n={n})"


def _counts(s: Summary) -> str:
    c = s.counts
    done, planned = c.get("items", 0), c.get("planned", c.get("items", 0))
    # Items with steps (build sequences) log one result per step: more results than items.
    text = f"{done}/{planned}" if done <= planned else f"{done} results for {planned} planned"
    bad = [f"{c[k]} {k}" for k in ("errors", "timeouts") if c.get(k)]
    return text + (f" ({', '.join(bad)})" if bad else "")


def _grid(cols: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [cols, *rows]) for i in range(len(cols))]
    line = lambda r: "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))  # noqa: E731
    return "\n".join([line(cols)] + [line(r) for r in rows])
