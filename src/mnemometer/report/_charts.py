"""Charts for the HTML reports: Vega-Lite specs (altair) rendered to static SVG (vl-convert).

Why this pair is in ``docs/design/reports.md``: the SVG is drawn once, when the report is
written, by the Vega-Lite engine that ships inside the ``vl-convert-python`` wheel, so the
page needs no charting script and the chart needs no network, ever. Both libraries are the
``[report]`` extra and are imported only here, only when a chart is drawn.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Sequence
from typing import Any

from mnemometer.errors import MissingExtraError

# The generic family: the SVG is laid out with vl-convert's fonts and drawn with the
# browser's, and a named stack the engine lacks would measure text narrower than it draws.
FONT = "sans-serif"
BLUE, GREEN, RED, GREY = "#0969da", "#1a7f37", "#cf222e", "#8c959f"
_CONFIG = {
    "font": FONT,
    "view": {"stroke": None},
    "axis": {"labelFontSize": 11, "titleFontSize": 11, "gridColor": "#eaeef2"},
    "header": {"labelFontSize": 12, "labelFontWeight": "bold", "titleFontSize": 0},
    "legend": {"labelFontSize": 11, "titleFontSize": 11, "orient": "bottom"},
}
_ids = itertools.count()


def _libs() -> tuple[Any, Any]:
    try:
        import altair
    except ImportError:
        raise MissingExtraError("the HTML report's charts", "report", "altair") from None
    try:
        import vl_convert
    except ImportError:
        raise MissingExtraError("the HTML report's charts", "report", "vl-convert-python") from None
    return altair, vl_convert


def require() -> None:
    """Fail early, with the install hint, when the chart libraries are missing."""
    _libs()


_NOISE = re.compile(r' (?:aria-[a-z]+|role|class|pointer-events)="[^"]*"')
_EMPTY = re.compile(r'<path d="M0,0h0v0h0Z"/>|<path d="" display="none"/>')


def svg(chart: Any, label: str = "chart") -> str:
    """Render an altair chart to static SVG for the page.

    Ids are made unique within the page (one chart's clip path must never clip another's),
    and what only an interactive Vega view uses (per-mark ARIA roles, classes, pointer
    events, empty paths) is dropped: a third of the bytes. The chart as a whole keeps an
    accessible name.
    """
    _, vlc = _libs()
    out = vlc.vegalite_to_svg(chart.to_dict(), allowed_base_urls=[])
    prefix = f"c{next(_ids)}-"
    out = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', out)
    out = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", out)
    out = _EMPTY.sub("", _NOISE.sub("", out))
    out = out.replace("<svg ", f'<svg role="img" aria-label="{html.escape(label)}" ', 1)
    return f'<div class="chart">{out}</div>'


def _unit_scale(values: Sequence[float | None]) -> dict[str, Any]:
    finite = [v for v in values if v is not None]
    if finite and min(finite) >= 0.0 and max(finite) <= 1.0:
        return {"domain": [0, 1], "nice": False}
    return {"zero": False}


def dot_ci(rows: list[dict[str, Any]], *, y_title: str, columns: int = 3) -> str:
    """Points with 95% interval bars: one panel per metric, one row per group value.

    ``rows``: dicts with ``group``, ``metric``, ``value``, ``low``, ``high``, ``n``.
    """
    alt, _ = _libs()
    values = [r[f] for r in rows for f in ("value", "low", "high")]
    order = list(dict.fromkeys(r["group"] for r in rows))
    y = alt.Y("group:N", title=y_title, sort=order, axis=alt.Axis(labelLimit=180))
    x = alt.X("value:Q", title=None, scale=_unit_scale(values))
    tip = [
        alt.Tooltip("group:N", title=y_title),
        alt.Tooltip("metric:N"),
        alt.Tooltip("value:Q", format=".3f"),
        alt.Tooltip("n:Q"),
    ]
    base = alt.Chart(alt.Data(values=rows)).encode(y=y)
    bars = base.mark_rule(color=BLUE, strokeWidth=2, opacity=0.55).encode(
        x=alt.X("low:Q", title=None), x2="high:Q"
    )
    dots = base.mark_point(filled=True, color=BLUE, size=45, opacity=1).encode(x=x, tooltip=tip)
    height = max(30, 18 * len(order))
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    chart = (
        alt.layer(bars, dots)
        .properties(width=200, height=height)
        .facet(facet=alt.Facet("metric:N", sort=metrics), columns=min(columns, len(metrics)))
    )
    if not all(v is None or 0.0 <= v <= 1.0 for v in values):
        chart = chart.resolve_scale(x="independent")
    return svg(chart.configure(**_CONFIG), f"{', '.join(metrics)} by {y_title}, 95% CI")


def at_k(rows: list[dict[str, Any]]) -> str:
    """Metrics at each cut-off k: lines with 95% interval bars, one colour per metric.

    ``rows``: dicts with ``metric``, ``k``, ``value``, ``low``, ``high``.
    """
    alt, _ = _libs()
    ks = sorted({r["k"] for r in rows})
    base = alt.Chart(alt.Data(values=rows)).encode(
        x=alt.X("k:O", title="k (cut-off)", sort=ks, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("metric:N"),  # side by side, so the intervals do not overlap
        color=alt.Color("metric:N", title=None),
    )
    line = base.mark_line(point=True).encode(
        y=alt.Y("value:Q", title=None, scale={"domain": [0, 1]}),
        tooltip=["metric:N", "k:O", alt.Tooltip("value:Q", format=".3f")],
    )
    bars = base.mark_rule(opacity=0.6, strokeWidth=1.5).encode(y="low:Q", y2="high:Q")
    chart = alt.layer(bars, line).properties(width=420, height=200).configure(**_CONFIG)
    return svg(chart, "metrics at each cut-off k, 95% CI")


def ecdf(rows: list[dict[str, Any]], marks: list[dict[str, Any]], *, unit: str = "ms") -> str:
    """Cumulative distributions on a log axis, with rules at the marked percentiles.

    ``rows``: dicts with ``series``, ``x`` and ``frac``; ``marks``: ``label`` and ``x``.
    """
    alt, _ = _libs()
    positive = [r for r in rows if r["x"] > 0]
    scale = {"type": "log"} if len(positive) == len(rows) and positive else {"zero": True}
    lines = (
        alt.Chart(alt.Data(values=rows))
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("x:Q", title=unit, scale=scale),
            y=alt.Y("frac:Q", title="share of items at or below", axis=alt.Axis(format="%")),
            color=alt.Color("series:N", title=None),
        )
    )
    layers = [lines]
    if marks:
        rules = alt.Chart(alt.Data(values=marks)).mark_rule(color=GREY, strokeDash=[4, 3])
        layers.append(rules.encode(x="x:Q"))
        text = rules.mark_text(align="left", dx=3, dy=-4, color="#59636e", fontSize=10)
        layers.append(text.encode(x="x:Q", y=alt.value(8), text="label:N"))
    chart = alt.layer(*layers).properties(width=520, height=190).configure(**_CONFIG)
    return svg(chart, f"cumulative distribution ({unit})")


def forest(rows: list[dict[str, Any]], *, title: str, x_title: str) -> str:
    """A forest plot: each row's delta with its 95% interval, and a rule at zero.

    ``rows``: dicts with ``row``, ``delta``, ``low``, ``high`` and ``verdict``
    (``better``, ``worse`` or ``no clear difference``).
    """
    alt, _ = _libs()
    order = [r["row"] for r in rows]
    colour = alt.Color(
        "verdict:N",
        title=None,
        scale=alt.Scale(
            domain=["better", "worse", "no clear difference"], range=[GREEN, RED, GREY]
        ),
    )
    base = alt.Chart(alt.Data(values=rows)).encode(
        y=alt.Y("row:N", title=None, sort=order, axis=alt.Axis(labelLimit=260)), color=colour
    )
    bars = base.mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", title=x_title), x2="high:Q")
    dots = base.mark_point(filled=True, size=50, opacity=1).encode(
        x="delta:Q",
        tooltip=["row:N", alt.Tooltip("delta:Q", format="+.3f"), "verdict:N"],
    )
    zero = alt.Chart(alt.Data(values=[{"x": 0}])).mark_rule(color="#59636e").encode(x="x:Q")
    chart = (
        alt.layer(zero, bars, dots)
        .properties(width=360, height=max(24, 18 * len(order)), title=title)
        .configure(**_CONFIG)
        .configure_title(fontSize=13, anchor="start")
    )
    return svg(chart, f"forest plot: {title}")


def curve(rows: list[dict[str, Any]], *, x_title: str, y_title: str) -> str:
    """Lines through points, one colour per series: a quantity against a count.

    ``rows``: dicts with ``series``, ``x`` and ``y`` (``y`` may be ``None``: no point).
    """
    alt, _ = _libs()
    shown = [r for r in rows if r["y"] is not None]
    chart = (
        alt.Chart(alt.Data(values=shown))
        .mark_line(point=True)
        .encode(
            x=alt.X("x:Q", title=x_title),
            y=alt.Y("y:Q", title=y_title, scale={"zero": True}),
            color=alt.Color("series:N", title=None),
            tooltip=["series:N", "x:Q", alt.Tooltip("y:Q", format=".1f")],
        )
        .properties(width=520, height=190)
        .configure(**_CONFIG)
    )
    return svg(chart, f"{y_title} against {x_title}")


def scaling_curve(data: list[dict[str, Any]]) -> str:
    """Memory scalability: latency against facts stored, from the scenarios' binned rows."""
    series = (
        ("mean", "mean_latency_ms"),
        ("p95", "p95_latency_ms"),
        ("memory, mean", "mean_memory_ms"),
    )
    points = [
        {"series": name, "x": (r["facts_from"] + r["facts_to"]) / 2, "y": r.get(key)}
        for r in data
        for name, key in series
    ]
    return curve(points, x_title="facts stored", y_title="latency ms")
