"""The HTML comparison report: forest plots, tests, the gate, the discordant items.

Discordant items are read from the compared run directories, when they are there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemometer.comparison._gate import GatePolicy, GateResult, gate
from mnemometer.comparison._model import (
    PREFERRED,
    Comparison,
    HeadlineStats,
    IntervalOut,
    MetricDelta,
    PairedDelta,
)
from mnemometer.log._schema import ItemResult
from mnemometer.report import _charts as charts
from mnemometer.report._html import (
    card,
    esc,
    header_details,
    notes,
    num,
    page,
    table,
    when,
)
from mnemometer.scoring.headline import item_value

MAX_DISCORDANT = 300
"""Discordant pairs listed per direction (the rest are counted)."""


def best_interval(ivs: list[IntervalOut]) -> IntervalOut | None:
    """The design's interval (CR2 when items cluster, the jackknife's), else BCa."""
    for method in PREFERRED:
        iv = next((i for i in ivs if i.method == method), None)
        if iv is not None and iv.low is not None and iv.high is not None:
            return iv
    return None


def _verdict(iv: IntervalOut | None, higher_is_better: bool) -> str:
    if iv is None or iv.low is None or iv.high is None or iv.low <= 0.0 <= iv.high:
        return "no clear difference"
    up = iv.low > 0.0
    return "better" if up == higher_is_better else "worse"


def _p(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


@dataclass(frozen=True)
class Discordant:
    """One pair whose success differs between the sides."""

    repeat: int
    """The repeat it belongs to."""
    base: ItemResult
    """The baseline's result."""
    cand: ItemResult
    """The candidate's result."""
    fixed: bool
    """The candidate scores higher on the headline than the baseline (else lower)."""


def discordant_pairs(c: Comparison) -> tuple[list[Discordant], str]:
    """The pairs whose headline value differs, from the compared runs; and why none, if so."""
    from mnemometer.comparison._pairs import match_runs
    from mnemometer.log._reader import read_log

    paths = [*c.baseline.runs, *c.candidate.runs]
    missing = [p for p in paths if not (Path(p) / "header.json").is_file()]
    if missing:
        return [], (
            f"the compared run directories are not here ({missing[0]}"
            + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")
            + "): render the comparison where they are to list the discordant items"
        )
    base = [read_log(p) for p in c.baseline.runs]
    cand = [read_log(p) for p in c.candidate.runs]
    out: list[Discordant] = []
    for b_run, c_run in match_runs(base, cand):
        c_items = {(r.item_id, r.step or ""): r for r in c_run.items}
        for b in b_run.items:
            k = c_items.get((b.item_id, b.step or ""))
            if k is None:
                continue
            b_v = item_value(b, c.headline_spec)
            k_v = item_value(k, c.candidate_headline_spec or c.headline_spec)
            if b_v is not None and k_v is not None and b_v != k_v:
                out.append(Discordant(b_run.header.repeat, b, k, k_v > b_v))
    return out, ""


def comparison_html(
    c: Comparison, *, gate_result: GateResult | None = None, policy: str | None = None
) -> str:
    """Forest plots, McNemar and Holm, MDE, the gate verdict, the discordant items.

    Args:
        c: the comparison.
        gate_result: a verdict to show; by default the default policy's (a regression in
            the headline fails).
        policy: where the policy came from, for the page.
    """
    charts.require()
    if gate_result is None:
        gate_result, policy = gate(c, GatePolicy()), "the default policy (no headline regression)"
    b, k = c.baseline, c.candidate
    title = f"{c.suite}: {', '.join(k.conditions)} vs {', '.join(b.conditions)}"
    pairs, why = discordant_pairs(c)
    body = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">{c.items} items ({c.pairs} paired observations) from {b.repeats} '
        f"baseline and {k.repeats} candidate runs"
        + (" · repeats aggregated per item (see the notes)" if c.pairs > c.items else "")
        + f" · dataset sha256 <code>{esc(c.dataset_hash[:12])}</code> · "
        f"{c.resamples} bootstrap resamples (seed {c.seed})"
        + (f" · {c.clusters} clusters by {esc(c.cluster_by)}" if c.cluster_by else "")
        + f" · {esc(when(c.created_at))}</p>",
        f'<p class="sub">differs: {esc("; ".join(c.differs) or "nothing")}'
        + (f" · varies (declared): {esc(', '.join(c.varies))}" if c.varies else "")
        + "</p>",
        '<nav class="toc"><a href="#forest">Forest plots</a><a href="#tests">Tests</a>'
        '<a href="#gate">Gate</a><a href="#discordant">Discordant items</a>'
        '<a href="#header">Full comparison</a></nav>',
        _glance(c, gate_result),
        notes([f"forced: {m}" for m in c.mismatches], "Runs that did not match, paired anyway")
        if c.forced
        else "",
        notes(c.notes, "Notes"),
        f'<section id="forest"><h2>Forest plots (candidate − baseline, 95% CI)</h2>'
        f"{_forests(c)}</section>",
        f'<section id="tests"><h2>Tests</h2>{_tests(c)}</section>',
        f'<section id="gate"><h2>Gate</h2>{_gate(gate_result, policy)}</section>',
        f'<section id="discordant"><h2>Discordant items</h2>{_discordant(c, pairs, why)}</section>',
        header_details(c.model_dump(mode="json"), "Full comparison"),
    ]
    return page(f"{title} — mnemometer", "".join(body), generator="mnemometer compare")


def _glance(c: Comparison, g: GateResult) -> str:
    h = c.headline
    label = c.headline_spec.label
    iv = best_interval(h.intervals)
    delta = "n/a" if h.delta is None else f"{100 * h.delta:+.1f} pp"
    ci = (
        "" if iv is None else f"95% CI {100 * iv.low:+.1f} to {100 * iv.high:+.1f} pp ({iv.method})"
    )
    if h.no_claim:
        ci = f"no claim: {h.no_claim}"
    verdict = "pass" if g.passed else "fail"
    test = f"p = {_p(h.p_value)}" if h.p_value is not None else "no test"
    changed = f"; {h.mcnemar_b} fixed, {h.mcnemar_c} broken" if h.mcnemar_b is not None else ""
    cards = [
        card(
            "gate",
            f'<span class="verdict {verdict}">{verdict}</span>',
            esc(f"{sum(ch.passed for ch in g.checks)} of {len(g.checks)} checks hold"),
            big=True,
            raw=True,
        ),
        card(
            f"{label} (headline)",
            f"{_pct(h.baseline)} → {_pct(h.candidate)}",
            f"{delta}; {ci}",
            big=True,
        ),
        card(h.test or "test", test, f"Holm p = {_p(h.p_holm)}{changed}"),
        card(
            "minimum detectable effect",
            "n/a" if h.mde is None else f"{100 * h.mde:.1f} pp",
            "two-sided α 0.05, power 0.8, at this many pairs",
        ),
        card(
            "tokens",
            f"{c.baseline.total_tokens:,} → {c.candidate.total_tokens:,}",
            f"{c.cost.token_delta:+,} over paired items",
        ),
        card(
            "mean latency",
            f"{num(c.baseline.mean_latency_ms, 2)} → {num(c.candidate.mean_latency_ms, 2)} ms",
            "" if c.cost.latency_delta_ms is None else f"{c.cost.latency_delta_ms:+.2f} ms",
        ),
    ]
    if h.mde is not None and h.delta is not None and abs(h.delta) < h.mde:
        cards.append(
            card(
                "caution",
                "below the MDE",
                f"the {label} delta is smaller than this comparison can detect",
            )
        )
    return f'<div class="cards">{"".join(cards)}</div>'


def _headline_row(label: str, h: HeadlineStats) -> dict[str, Any] | None:
    return _row(label, h.pairs, h.delta, h.intervals, True, scale=100)  # in points


def _metric_row(label: str, m: MetricDelta) -> dict[str, Any] | None:
    return _row(label, m.pairs, m.mean_delta, m.intervals, m.higher_is_better)


def _row(
    label: str,
    pairs: int,
    delta: float | None,
    intervals: list[IntervalOut],
    higher_is_better: bool,
    scale: int = 1,
) -> dict[str, Any] | None:
    """One forest-plot row: the delta and its best interval, or None without them."""
    iv = best_interval(intervals)
    if delta is None or iv is None:
        return None
    return {
        "row": f"{label} (n={pairs})",
        "delta": scale * delta,
        "low": scale * iv.low,
        "high": scale * iv.high,
        "verdict": _verdict(iv, higher_is_better),
    }


def _forests(c: Comparison) -> str:
    out = []
    rows = [_headline_row("overall", c.headline)]
    rows += [_headline_row(g.key, g.headline) for g in c.groups]
    rows = [r for r in rows if r is not None]
    label = c.headline_spec.label
    if rows:
        out.append(charts.forest(rows, title=f"{label} by group", x_title="delta (pp)"))
    ordered = sorted(c.metrics, key=lambda m: (m.name, m.k or 0))
    overall = [r for m in ordered if (r := _metric_row(m.key, m)) is not None]
    if overall:
        out.append(charts.forest(overall, title="every metric, overall", x_title="mean delta"))
    # By group: one plot per metric name, at its largest k (the tests table has every k).
    largest: dict[str, MetricDelta] = {}
    for m in ordered:
        largest[m.name] = m
    per_metric = []
    for m in largest.values():
        rows = [
            r
            for g in c.groups
            for gm in g.metrics
            if gm.key == m.key
            if (r := _metric_row(g.key, gm)) is not None
        ]
        if len(rows) > 1:
            top = _metric_row("overall", m)
            per_metric.append(
                charts.forest(
                    [top, *rows] if top else rows, title=f"{m.key} by group", x_title="mean delta"
                )
            )
    if per_metric:
        out.append(
            f"<details><summary>Each metric by group ({len(per_metric)} plots; every cut-off "
            f"k is in the tests table)</summary>{''.join(per_metric)}</details>"
        )
    return "".join(out) or "<p>No paired deltas with an interval.</p>"


def _ci_text(t: PairedDelta, scale: float = 1.0, digits: int = 3) -> tuple[str, float]:
    if t.no_claim:
        return "none: too few clusters", float("nan")
    iv = best_interval(t.intervals)
    if iv is None:
        return "", float("nan")
    return f"[{scale * iv.low:+.{digits}f}, {scale * iv.high:+.{digits}f}] {iv.method}", iv.low


def _tests(c: Comparison) -> str:
    rows: list[list[Any]] = []

    def headline(scope: str, h: HeadlineStats) -> None:
        d = None if h.delta is None else 100 * h.delta
        rows.append(
            [
                scope,
                f"{c.headline_spec.label} (pp)",
                _pct(h.baseline),
                _pct(h.candidate),
                (f"{d:+.1f}" if d is not None else "n/a", d),
                _ci_text(h, 100, 1),
                (f"{_p(h.p_value)} {h.test or ''}", h.p_value),
                (_p(h.p_holm), h.p_holm),
                (num(None if h.mde is None else 100 * h.mde, 1), h.mde),
                (str(h.pairs), h.pairs),
            ]
        )

    def metric(scope: str, m: MetricDelta) -> None:
        name = m.key + ("" if m.higher_is_better else " (lower is better)")
        rows.append(
            [
                scope,
                name,
                num(m.baseline_mean),
                num(m.candidate_mean),
                (
                    num(m.mean_delta) if m.mean_delta is None else f"{m.mean_delta:+.3f}",
                    m.mean_delta,
                ),
                _ci_text(m),
                (f"{_p(m.p_value)} {m.test or ''}", m.p_value) if m.pairs else ("n/a", None),
                (_p(m.p_holm), m.p_holm),
                (num(m.mde), m.mde),
                (str(m.pairs), m.pairs),
            ]
        )

    headline("overall", c.headline)
    for m in c.metrics:
        metric("overall", m)
    overall = rows
    rows = []
    for g in c.groups:
        headline(g.key, g.headline)
        for m in g.metrics:
            metric(g.key, m)
    cols = [
        "scope",
        "metric",
        "baseline",
        "candidate",
        "delta",
        "95% CI",
        "p",
        "Holm p",
        "MDE",
        "n",
    ]
    nums = (4, 6, 7, 8, 9)
    out = table(cols, overall, numeric=nums)
    if rows:
        out += (
            f"<details><summary>By group ({len(rows)} tests)</summary>"
            '<div class="controls"><input type="search" data-filter="mm-tests" '
            'placeholder="Filter tests by group or metric…" aria-label="filter tests"></div>'
            + table(cols, rows, numeric=nums, cls="mm-tests")
            + "</details>"
        )
    return out + (
        '<p class="sub">p: each test over items, repeats aggregated: the cluster-robust CR2 t '
        "test where items cluster, else McNemar's exact test for a 0/1 headline and the paired "
        f"sign-flip permutation test for the rest; Holm adjusts over all {len(overall) + len(rows)} "
        f"tests. Headline: {esc(c.headline_spec.label)} over {esc(c.headline_spec.scope)}.</p>"
    )


def _gate(g: GateResult, policy: str | None) -> str:
    verdict = "pass" if g.passed else "fail"
    rows = [[("✔ ok" if ch.passed else "✘ FAIL"), ch.name, ch.message] for ch in g.checks]
    rows += [["! warn", "claim", w] for w in g.warnings]
    return (
        f'<p><span class="verdict {verdict}">gate: {verdict}</span> under '
        f"{esc(policy or 'the given policy')}</p>"
        + table(["", "check", "what was compared"], rows, sortable=False)
    )


def _answer(r: ItemResult) -> str:
    """What one side answered, for the side-by-side view."""
    ok = False if r.status != "ok" else r.success
    badge = (
        f'<span class="badge error">{esc(r.status)}</span>'
        if r.status != "ok"
        else f'<span class="badge {"pass" if ok else "fail"}">{"pass" if ok else "fail"}</span>'
    )
    parts = [badge]
    if r.error:
        parts.append(f'<div class="err">{esc(r.error)}</div>')
    if r.output is not None:
        parts.append(f'<div class="text">{esc(r.output)}</div>')
    if r.retrieved or r.expected:
        rel = set(r.expected)
        hits = [
            f'<span class="hit{" rel" if h.id in rel else ""}">{"✓ " if h.id in rel else ""}'
            f"{esc(h.id)}</span>"
            for h in r.retrieved[:20]
        ]
        if not r.retrieved:
            hits.append('<span class="count">nothing returned</span>')
        parts.append(f'<div class="hits">{"".join(hits)}</div>')
    turns = r.extra.get("turns")
    if isinstance(turns, list):
        for t in turns:
            if isinstance(t, dict) and isinstance(t.get("grade"), dict):
                score = t["grade"].get("score")
                parts.append(
                    f'<div class="text"><b>{esc(t.get("input", ""))}</b>\n→ '
                    f'{esc(t.get("reply", ""))}  <span class="ci">score '
                    f"{esc(score)} {esc(t['grade'].get('reason', ''))}</span></div>"
                )
    scores = [
        m for m in r.metrics if m.value is not None and m.unit is None and m.name != "success"
    ][:6]
    if scores:
        parts.append(
            '<div class="ci">'
            + " · ".join(
                f"{esc(m.name if m.k is None else f'{m.name}@{m.k}')} {m.value:.3f}" for m in scores
            )
            + "</div>"
        )
    return "".join(parts)


def _discordant(c: Comparison, pairs: list[Discordant], why: str) -> str:
    h = c.headline
    if why:
        return notes([why])
    if not pairs:
        return "<p>No pair changed its headline value.</p>"
    out = [
        '<div class="controls"><input type="search" data-filter="mm-discordant" '
        'placeholder="Filter discordant items…" aria-label="filter discordant items"></div>'
    ]
    binary = c.headline_spec.binary
    for title, fixed in (
        (
            "Fixed by the candidate (baseline failed, candidate passed)"
            if binary
            else "Better with the candidate (a higher headline value)",
            True,
        ),
        (
            "Broken by the candidate (baseline passed, candidate failed)"
            if binary
            else "Worse with the candidate (a lower headline value)",
            False,
        ),
    ):
        chosen = [p for p in pairs if p.fixed == fixed]
        count = h.mcnemar_b if fixed else h.mcnemar_c
        out.append(f"<h3>{esc(title)}: {len(chosen)}</h3>")
        if count is not None and len(chosen) != count:
            out.append(
                f'<p class="sub">McNemar counts {count} over items, repeats aggregated; this '
                "list has every discordant pair of runs.</p>"
            )
        rows = []
        for p in chosen[:MAX_DISCORDANT]:
            item = p.base.item_id + (f" · {p.base.step}" if p.base.step else "")
            rep = f" (repeat {p.repeat})" if c.baseline.repeats > 1 else ""
            groups = "".join(
                f'<span class="chip">{esc(k)}: {esc(v)}</span>' for k, v in p.base.groups.items()
            )
            rows.append(
                f'<tr class="discordant" data-fixed="{str(fixed).lower()}">'
                f'<td><div class="mono">{esc(item)}{esc(rep)}</div>{groups}'
                f'<div class="text">{esc(p.base.input)}</div></td>'
                f"<td>{_answer(p.base)}</td><td>{_answer(p.cand)}</td></tr>"
            )
        if rows:
            out.append(
                '<div class="scroll"><table class="mm-discordant"><thead><tr>'
                '<th style="width:30%">item and query</th><th style="width:35%">baseline '
                'answered</th><th style="width:35%">candidate answered</th></tr></thead>'
                f"<tbody>{''.join(rows)}</tbody>"
                "</table></div>"
            )
        if len(chosen) > MAX_DISCORDANT:
            out.append(f'<p class="sub">{len(chosen) - MAX_DISCORDANT} more not shown.</p>')
    return "".join(out)


def gate_html(result: GateResult) -> str:
    """The verdict and every check, as a page."""
    return page(
        "Gate — mnemometer", "<h1>Gate</h1>" + _gate(result, None), generator="mnemometer gate"
    )
