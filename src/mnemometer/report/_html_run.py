"""The HTML run report: one self-contained page from a run directory alone."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from mnemometer.log._reader import read_items
from mnemometer.log._schema import ItemResult, Metric, RunHeader, Summary
from mnemometer.report import _charts as charts
from mnemometer.report import _figures as fig
from mnemometer.report._html import (
    card,
    embed,
    esc,
    header_details,
    headline_card,
    interval,
    json_block,
    ms,
    notes,
    num,
    page,
    seconds,
    table,
    when,
)
from mnemometer.report._run import RunView, failure_banner

MAX_FILTER_VALUES = 200
"""Group keys with more values than this are searchable (``key:value``), not a menu."""
_VERDICT_KEYS = ("grade", "grades", "judge", "judges", "verdict", "verdicts", "checks")


def _generator(h: RunHeader) -> str:
    return f"mnemometer {h.package_version}"


def run_html(v: RunView) -> str:
    """The run at a glance, metrics by group with 95% CIs, latency, tokens, every item."""
    charts.require()
    h, s = v.header, v.summary
    items = v.items if v.items is not None else read_items(v.path)
    scores = [fig.item_score(r) for r in items]
    metrics = fig.chart_metrics(scores)
    groups = fig.group_figures(items, metrics, scores)
    head = next((m for m in metrics if m[0] != "success"), metrics[0] if metrics else None)
    banner = failure_banner(v)
    if banner:  # most items failed: the failures, never numbers that read like a result
        sections = [
            ("glance", "At a glance", _no_result(banner) + _glance(h, s, items, headline=False)),
            ("items", "Items", _browser(items, head, scores)),
        ]
    else:
        sections = [
            ("glance", "At a glance", _glance(h, s, items)),
            ("metrics", "Metrics", _overall(s, items, scores)),
            ("groups", "By group", _groups(groups)),
            ("latency", "Latency", _latency(s, items)),
            ("tokens", "Tokens and cost", _tokens(s, items)),
            ("tables", "Suite tables", _suite_tables(s)),
            ("items", "Items", _browser(items, head, scores)),
        ]
    sections = [x for x in sections if x[2]]
    toc = "".join(f'<a href="#{sid}">{esc(title)}</a>' for sid, title, _ in sections)
    body = [
        f"<h1>{esc(_title(h))}</h1>",
        f'<p class="sub">run <code>{esc(h.run_id)}</code> · {esc(h.status)} · '
        f"{esc(when(h.created_at))} · <code>{esc(v.path)}</code></p>",
        f'<nav class="toc">{toc}<a href="#header">Full header</a></nav>',
    ]
    for sid, title, content in sections:
        heading = "" if sid == "glance" else f"<h2>{esc(title)}</h2>"
        body.append(f'<section id="{sid}">{heading}{content}</section>')
    body.append(header_details(h.model_dump(mode="json")))
    return page(f"{_title(h)} — mnemometer", "".join(body), generator=_generator(h))


def _title(h: RunHeader) -> str:
    who = h.system.name + (f" ({h.system.condition})" if h.system.condition else "")
    return f"{h.suite} · {who} · {h.dataset.name}"


def _no_result(banner: list[str]) -> str:
    errors = "".join(f"<li><code>{esc(b.strip())}</code></li>" for b in banner[2:])
    return (
        f'<div class="notes failed"><strong>{esc(banner[0])}</strong>'
        f"<p>{esc(banner[1])}</p><ul>{errors}</ul><p>Every item is below, with its error; "
        "filter on errors and timeouts.</p></div>"
    )


def _glance(h: RunHeader, s: Summary, items: list[ItemResult], headline: bool = True) -> str:
    ok = [r for r in items if r.status == "ok"]
    errors = sum(r.status == "error" for r in items)
    timeouts = sum(r.status == "timeout" for r in items)
    failed = sum(r.status == "ok" and r.success is False for r in items)
    cards = []
    lead = s.headline
    if lead is not None and lead.value is not None and headline:
        cards.append(headline_card(lead))
    succ = [1.0 if (r.status == "ok" and r.success) else 0.0 for r in items if _scored(r)]
    if succ and headline and lead is None:  # a run from before headlines
        e = fig.estimate("success", succ)
        cards.append(
            card(
                "success rate",
                f"{100 * (e.value or 0):.1f}%",
                f"95% CI {100 * (e.low or 0):.1f}–{100 * (e.high or 0):.1f}% (Wilson), n={e.n}",
                big=True,
            )
        )
    sysd = h.system.kind + (f" · v{h.system.version}" if h.system.version else "")
    sysd += "".join(f" · {k}={v}" for k, v in h.system.options.items() if _short(v))
    who = h.system.name + (f" ({h.system.condition})" if h.system.condition else "")
    cards.append(card("system", who, sysd))
    opts = ", ".join(f"{k}={v}" for k, v in h.suite_options.items() if _short(v))
    cards.append(card("suite", f"{h.suite} v{h.suite_version}", opts[:160]))
    ds = h.dataset
    cards.append(
        card(
            "dataset",
            esc(f"{ds.name} v{ds.version}"),
            f'{esc(ds.language)} · <span class="mono" title="{esc(ds.content_hash)}">'
            f"sha256 {esc(ds.content_hash[:12])}…</span>",
            raw=True,
        )
    )
    rev = f"git {h.git_revision[:10]}" if h.git_revision else ""
    cards.append(
        card(
            "when",
            h.created_at.strftime("%Y-%m-%d"),
            " · ".join(x for x in (h.created_at.strftime("%H:%M UTC"), rev) if x),
        )
    )
    t = h.timings
    detail = ", ".join(f"{k} {seconds(x)}" for k, x in t.items() if k != "total")
    if h.resumes:
        detail += f"; resumed {h.resumes}×"
    cards.append(card("how long", seconds(t.get("total")), detail))
    done = len({r.item_id for r in items})  # a multi-step item is one planned item
    bad = [f"{failed} failed"] + [
        f"{n} {w}" for n, w in ((errors, "errors"), (timeouts, "timeouts"))
    ]
    cards.append(card("items", f"{done} / {h.item_count or done}", " · ".join(bad)))
    if not ok and items:
        cards.append(card("warning", "no item ran", "every item errored or timed out"))
    out = [f'<div class="cards">{"".join(cards)}</div>']
    if h.success_definition:
        out.append(f'<p class="sub">Success: {esc(h.success_definition)}.</p>')
    out.append(notes(list(ds.notes), "Dataset notes and errata"))
    out.append(notes(list(h.notes), "Run notes"))
    out.append(notes([n for n in s.notes if n not in ds.notes and n not in h.notes], "Notes"))
    return "".join(out)


def _short(v: Any) -> bool:
    """Worth a card: scalars and short lists (the full header has everything)."""
    return not isinstance(v, dict) and len(str(v)) <= 40


def _scored(r: ItemResult) -> bool:
    return r.success is not None or r.status != "ok"


def _overall(s: Summary, items: list[ItemResult], scores: fig.Scores) -> str:
    computed = {e.label: e for e in fig.overall_estimates(items, scores)}
    out: list[str] = []
    ranked = [e for e in computed.values() if "@" in e.label]
    by_name: dict[str, list[fig.Estimate]] = defaultdict(list)
    for e in ranked:
        by_name[e.label.split("@")[0]].append(e)
    if any(len(es) > 1 for es in by_name.values()):
        rows = [
            {
                "metric": name,
                "k": int(e.label.split("@")[1]),
                "value": e.value,
                "low": e.low,
                "high": e.high,
            }
            for name, es in by_name.items()
            for e in es
        ]
        out.append(f"<div><h3>At each cut-off k (95% CI)</h3>{charts.at_k(rows)}</div>")
    flat = [e for e in computed.values() if "@" not in e.label and e.value is not None]
    if flat:
        rows = [_row(e.label, "overall", e) for e in flat]
        out.append(f"<div><h3>Overall (95% CI)</h3>{charts.dot_ci(rows, y_title='metric')}</div>")
    table_ = _metric_table(s.overall, computed)
    return f'<div class="row">{"".join(out)}</div><h3>Every metric</h3>{table_}'


def _row(group: str, metric: str, e: fig.Estimate) -> dict[str, Any]:
    return {
        "group": group,
        "metric": metric,
        "value": e.value,
        "low": e.low,
        "high": e.high,
        "n": e.n,
    }


def _metric_table(overall: list[Metric], computed: dict[str, fig.Estimate]) -> str:
    """The suite's own aggregates; an interval from the items where the suite gave none."""
    rows = []
    for m in overall:
        label = fig.metric_label(m)
        e = fig.from_metric(m, label)
        if e.low is None and m.unit is None and m.percentile is None:
            c = computed.get(fig.label(m.name, m.k))
            if (
                c is not None
                and c.value is not None
                and m.value is not None
                and math.isclose(c.value, m.value, abs_tol=1e-9)
            ):
                e = c  # the suite's value is the plain item mean: its interval applies
        digits = 2 if m.unit else 3
        rows.append(
            [
                label,
                (num(e.value, digits), e.value),
                interval(e.low, e.high, digits),
                e.method,
                (str(e.n) if e.n else "", e.n),
                "higher" if m.higher_is_better else "lower",
            ]
        )
    return table(["metric", "value", "95% CI", "interval", "n", "better"], rows, numeric=(1, 4))


def _groups(groups: list[fig.GroupFigure]) -> str:
    out = []
    for g in groups:
        if not g.rows:
            continue
        rows = [_row(value, e.label, e) for value, e in g.rows]
        out.append(f"<h3>By {esc(g.key)} (95% CI)</h3>")
        out.append(charts.dot_ci(rows, y_title=g.key))
        labels = list(dict.fromkeys(e.label for _, e in g.rows))
        cells: dict[str, dict[str, fig.Estimate]] = defaultdict(dict)
        for value, e in g.rows:
            cells[value][e.label] = e
        body = []
        for value in g.values:
            ests = cells.get(value, {})
            n = max((e.n for e in ests.values()), default=0)
            row: list[Any] = [value, (str(n), n)]
            for lab in labels:
                e = ests.get(lab)
                if e is None:
                    row.append(("", None))
                else:
                    ci = interval(e.low, e.high)
                    text = num(e.value) + (f' <span class="ci">{ci}</span>' if ci else "")
                    row.append((text, e.value, True))
            body.append(row)
        out.append(table([g.key, "n", *labels], body, numeric=range(1, len(labels) + 2)))
    return "".join(out)


def _latency(s: Summary, items: list[ItemResult]) -> str:
    series: dict[str, list[float]] = {}
    item_ms = [r.latency_ms for r in items if r.latency_ms is not None]
    if item_ms:
        series["per item"] = item_ms
    turn_ms: dict[str, list[float]] = defaultdict(list)
    for r in items:
        for t in _turns(r) or []:
            for key, x in t.items():
                if key.endswith("_ms") and isinstance(x, int | float) and math.isfinite(x):
                    turn_ms["per turn: " + key[:-3].replace("latency", "total")].append(float(x))
    series.update(turn_ms)
    dist = [m for m in s.overall if m.unit == "ms"]
    if not series and not dist:
        return ""
    out = []
    if series:
        rows, marks = [], []
        for name, xs in series.items():
            rows += [{"series": name, "x": x, "frac": f} for x, f in fig.quantiles(xs)]
        main = next(iter(series.values()))
        for q in (50, 95, 99):
            marks.append({"label": f"p{q}", "x": _pct(main, q)})
        out += [
            f"<h3>Distribution ({esc(next(iter(series)))} percentiles marked)</h3>",
            charts.ecdf(rows, marks),
        ]
        body = [
            [
                name,
                (str(len(xs)), len(xs)),
                *[(ms(v), v) for v in (sum(xs) / len(xs), *(_pct(xs, q) for q in (50, 95, 99)))],
                (ms(max(xs)), max(xs)),
            ]
            for name, xs in series.items()
        ]
        out.append(
            table(["series", "n", "mean", "p50", "p95", "p99", "max"], body, numeric=range(1, 7))
        )
    if dist:
        out.append("<h3>As the suite reports them (ms)</h3>")
        body = [[fig.metric_label(m), (ms(m.value), m.value), (str(m.n or ""), m.n)] for m in dist]
        out.append(table(["metric", "value", "n"], body, numeric=(1, 2)))
    return "".join(out)


def _pct(xs: list[float], q: float) -> float:
    from mnemometer.scoring.aggregate import percentile

    return percentile(xs, q) or 0.0


def _tokens(s: Summary, items: list[ItemResult]) -> str:
    per_key: dict[str, list[float]] = defaultdict(list)
    for r in items:
        for key, n in r.tokens.items():
            per_key[key].append(float(n))
    other = [m for m in s.overall if m.unit not in (None, "ms")]
    if not any(sum(v) for v in per_key.values()) and not other:
        return ""
    out = []
    if any(sum(v) for v in per_key.values()):
        body = [
            [
                key,
                (f"{sum(xs):,.0f}", sum(xs)),
                (f"{sum(xs) / len(xs):,.1f}", sum(xs) / len(xs)),
                *[(f"{_pct(xs, q):,.0f}", _pct(xs, q)) for q in (50, 95, 99)],
                (str(len(xs)), len(xs)),
            ]
            for key, xs in per_key.items()
        ]
        cols = ["tokens", "total", "mean per item", "p50", "p95", "p99", "items"]
        out.append(table(cols, body, numeric=range(1, 7)))
    if other:
        body = [
            [fig.metric_label(m), (num(m.value, 2), m.value), (str(m.n or ""), m.n)] for m in other
        ]
        out += [
            "<h3>As the suite reports them</h3>",
            table(["metric", "value", "n"], body, numeric=(1, 2)),
        ]
    return "".join(out)


def _suite_tables(s: Summary) -> str:
    out = []
    for t in s.tables:
        out.append(f"<h3>{esc(t.title)}</h3>")
        if t.name == "latency_vs_facts" and t.data:  # memory scalability: draw the curve
            out.append(charts.scaling_curve(t.data))
        out.append(table(t.columns, t.rows))
    return "".join(out)


def _turns(r: ItemResult) -> list[dict[str, Any]] | None:
    turns = r.extra.get("turns")
    if isinstance(turns, list) and all(isinstance(t, dict) for t in turns):
        return turns
    return None


def _num(x: float | None, digits: int = 4) -> float | None:
    """Rounded for the page; ``None`` for missing, NaN or infinite (JSON has neither)."""
    if x is None or not -1e300 < x < 1e300:
        return None
    return x if x == 0.0 or x == 1.0 else round(x, digits)  # most scores are 0 or 1: no round


class _Labels(dict):
    """Metric labels by (name, k, percentile, unit), computed once each."""

    def __missing__(self, key: tuple) -> str:
        name, k, pct, unit = key
        label = fig.label(name, k) + (f" p{pct:g}" if pct is not None else "")
        self[key] = label = label + (f" ({unit})" if unit else "")
        return label


def _item_doc(
    r: ItemResult,
    head: tuple[str, int | None] | None,
    score: dict[tuple[str, int | None], float],
    labels: _Labels,
) -> dict[str, Any]:
    """One item for the browser, with short keys and nothing empty (10k items add up)."""
    d: dict[str, Any] = {"i": r.index, "id": r.item_id}
    if r.step:
        d["step"] = r.step
    if r.status != "ok":
        d["st"] = r.status
    if r.success is not None:
        d["ok"] = r.success
    if r.input:
        d["in"] = r.input
    if r.groups:
        d["g"] = r.groups
    if r.expected:
        d["exp"] = r.expected
    if r.retrieved:
        d["ret"] = [[hit.id, _num(hit.score)] for hit in r.retrieved]
    if r.output is not None:
        d["out"] = r.output
    if r.metrics:
        d["m"] = [[labels[(m.name, m.k, m.percentile, m.unit)], _num(m.value)] for m in r.metrics]
    if r.latency_ms is not None:
        d["lat"] = _num(r.latency_ms, 3)
    if r.tokens:
        d["tok"] = r.tokens
    if r.error:
        d["err"] = r.error
    extra = dict(r.extra)
    turns = _turns(r)
    if turns is not None:
        extra.pop("turns")
        d["turns"] = turns
    verdicts = {k: extra.pop(k) for k in _VERDICT_KEYS if k in extra}
    if verdicts:
        d["v"] = verdicts
    if extra:
        d["x"] = extra
    if head is not None and head in score:
        d["h"] = _num(score[head])
    return d


def _browser(
    items: list[ItemResult], head: tuple[str, int | None] | None, scores: fig.Scores
) -> str:
    values: dict[str, set[str]] = defaultdict(set)
    for r in items:
        for k, x in r.groups.items():
            values[k].add(x)
    selects = []
    for key, vals in values.items():
        if len(vals) > MAX_FILTER_VALUES or len(vals) < 2:
            continue
        opts = "".join(f'<option value="{esc(x)}">{esc(x)}</option>' for x in sorted(vals))
        selects.append(
            f'<select data-group="{esc(key)}" aria-label="{esc(key)}">'
            f'<option value="">{esc(key)}: all</option>{opts}</select>'
        )
    head_label = fig.label(*head) if head else None
    status = "".join(
        f'<option value="{v}">{t}</option>'
        for v, t in (
            ("all", "pass and fail"),
            ("pass", "passed"),
            ("fail", "failed"),
            ("error", "errors and timeouts"),
            ("unscored", "not scored"),
        )
    )
    sort = '<option value="plan">plan order</option><option value="slow">slowest first</option>'
    sort += '<option value="id">by id</option>'
    if head_label:
        sort += f'<option value="worst">lowest {esc(head_label)} first</option>'
    sizes = "".join(
        f'<option value="{n}"{" selected" if n == 50 else ""}>{n} a page</option>'
        for n in (25, 50, 100, 250)
    )
    cols = ["#", "item", "groups", "query", "result"] + ([head_label] if head_label else [])
    cols.append("ms")
    heads = "".join(
        f'<th class="n">{esc(c)}</th>' if c in ("#", "ms", head_label) else f"<th>{esc(c)}</th>"
        for c in cols
    )
    config = {"head": head_label, "total": len(items)}
    labels = _Labels()
    return (
        '<div id="mm-browser">'
        '<div class="controls">'
        '<input type="search" id="mm-search" placeholder="Search ids, queries, answers, '
        'errors, hit ids…" aria-label="search items">'
        f'<select id="mm-status" aria-label="result">{status}</select>{"".join(selects)}'
        f'<select id="mm-sort" aria-label="order">{sort}</select>'
        f'<select id="mm-size" aria-label="page size">{sizes}</select>'
        '<button id="mm-prev" type="button">‹ prev</button><span id="mm-page" class="count">'
        '</span><button id="mm-next" type="button">next ›</button>'
        '<span id="mm-count" class="count">loading items…</span></div>'
        f'<table id="mm-items"><thead><tr>{heads}</tr></thead><tbody></tbody></table>'
        "<noscript>The item browser needs JavaScript; every item is also in items.jsonl."
        "</noscript></div>"
        + json_block("mm-config", config)
        + embed(
            "mm-items-data",
            [_item_doc(r, head, sc, labels) for r, sc in zip(items, scores, strict=True)],
        )
    )
