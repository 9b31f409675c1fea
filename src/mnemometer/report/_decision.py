"""The leaderboard's decision table: what each system costs beside its headline.

Per system and column, from each run's summary alone: context tokens per question, p50/p95
search and answer latency, what storing a memory costs (LLM calls, tokens, seconds: the
``ingest`` table of the retrieval suite and of the benchmarks) and dollars per correct
answer (the summary's ``cost``). Over repeats each figure is the mean of the runs' figures.
A figure a run does not have stays ``None`` and shows as ``–``, never as 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from mnemometer.config import StrictModel
from mnemometer.log._schema import Summary

NONE = "–"
"""What a figure a run lacks shows as."""


class CellCosts(StrictModel):
    """What one system costs on one column (``None``: its runs do not say)."""

    context_tokens: float | None = None
    """Mean tokens of context given to the reader per question (the reader's tokenizer)."""
    search_p50_ms: float | None = None
    """Median search latency (ms)."""
    search_p95_ms: float | None = None
    """95th percentile search latency (ms)."""
    answer_p50_ms: float | None = None
    """Median answer latency (ms): the reader's call, or the agent's reply."""
    answer_p95_ms: float | None = None
    """95th percentile answer latency (ms)."""
    ingest_llm_calls: float | None = None
    """LLM calls per memory stored (``None``: the store does not meter them)."""
    ingest_tokens: float | None = None
    """LLM tokens per memory stored."""
    ingest_seconds: float | None = None
    """Seconds per memory stored."""
    usd_per_correct: float | None = None
    """Dollars per correct answer (``None``: unpriced, no run recorded prices, or none
    correct)."""
    unpriced: list[str] = Field(default_factory=list)
    """Models whose tokens had no price (why ``usd_per_correct`` is ``None``)."""


COLUMNS: list[tuple[str, str, str]] = [
    ("context_tokens", "context tokens / question", ".0f"),
    ("search_p50_ms", "search p50 ms", ".1f"),
    ("search_p95_ms", "search p95 ms", ".1f"),
    ("answer_p50_ms", "answer p50 ms", ".1f"),
    ("answer_p95_ms", "answer p95 ms", ".1f"),
    ("ingest_llm_calls", "ingest LLM calls / memory", ".2f"),
    ("ingest_tokens", "ingest tokens / memory", ".0f"),
    ("ingest_seconds", "ingest s / memory", ".3g"),
    ("usd_per_correct", "$ / correct answer", "usd"),
]
"""Field, heading and format of each figure, in the order they show."""


def _metric(s: Summary, names: tuple[str, ...], percentile: float | None) -> float | None:
    for name in names:
        for m in s.overall:
            if m.name == name and m.k is None and m.percentile == percentile:
                return m.value
    return None


def _ingest(s: Summary) -> dict[str, Any]:
    for t in s.tables:
        if t.name == "ingest" and t.data:
            return t.data[0]
    return {}


def summary_costs(s: Summary) -> CellCosts:
    """One run's figures, read from its summary."""
    search = ("search_latency", "latency")  # a benchmark's search, or the retrieval suite's
    ingest = _ingest(s)
    cost = s.cost
    return CellCosts(
        context_tokens=_metric(s, ("context_tokens",), None),
        search_p50_ms=_metric(s, search, 50.0),
        search_p95_ms=_metric(s, search, 95.0),
        answer_p50_ms=_metric(s, ("answer_latency",), 50.0),
        answer_p95_ms=_metric(s, ("answer_latency",), 95.0),
        ingest_llm_calls=ingest.get("llm_calls_per_memory"),
        ingest_tokens=ingest.get("tokens_per_memory"),
        ingest_seconds=ingest.get("seconds_per_memory"),
        usd_per_correct=cost.per_correct if cost is not None else None,
        unpriced=list(cost.unpriced) if cost is not None else [],
    )


def cell_costs(summaries: list[Summary]) -> CellCosts:
    """The figures of a system's runs on one column: each the mean over the runs that have it.

    Dollars are the exception: a run whose tokens had no price leaves the cell's
    ``usd_per_correct`` ``None`` (a mean of the priced repeats alone would look complete).
    """
    each = [summary_costs(s) for s in summaries]
    out: dict[str, Any] = {}
    for name, _, _ in COLUMNS:
        vals = [v for c in each if (v := getattr(c, name)) is not None]
        out[name] = sum(vals) / len(vals) if vals else None
    out["unpriced"] = sorted({m for c in each for m in c.unpriced})
    if out["unpriced"]:
        out["usd_per_correct"] = None
    return CellCosts(**out)


def figure(value: float | None, fmt: str) -> str:
    """A figure as shown, ``–`` when there is none."""
    if value is None:
        return NONE
    if fmt == "usd":
        from mnemometer.scoring.cost import usd

        return usd(value)
    return format(value, fmt)


def decision_rows(
    board: Any, cell_label: Callable[[Any], str]
) -> tuple[list[str], list[tuple[list[str], Any, CellCosts]]]:
    """Headings and, per system and column with a cell, its label cells, the cell, its figures.

    ``cell_label(cell)`` gives the headline cell's text (value, interval, n).
    """
    many = len(board.columns) > 1
    head = ["system", *(["column"] if many else []), "headline [95% CI]"]
    head += [label for _, label, _ in COLUMNS]
    rows: list[tuple[list[str], Any, CellCosts]] = []
    for r in board.rows:
        for c in board.columns:
            cell = r.cells.get(c.key)
            if cell is None:
                continue
            costs = cell.costs or CellCosts()
            lead = [r.system, *([c.label] if many else []), cell_label(cell) or NONE]
            rows.append((lead, cell, costs))
    return head, rows


def decision_lines(board: Any, cell_label: Callable[[Any], str]) -> list[list[str]]:
    """The decision table as rows of display strings (its first row the headings)."""
    head, rows = decision_rows(board, cell_label)
    return [head] + [
        lead + [figure(getattr(costs, name), fmt) for name, _, fmt in COLUMNS]
        for lead, _, costs in rows
    ]


TITLE = "What each system costs (– : its runs do not say)"


def decision_text(board: Any, cell_label: Callable[[Any], str]) -> list[str]:
    """The decision table for a terminal: a title and aligned columns."""
    rows = decision_lines(board, cell_label)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    aligned = ["  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)) for r in rows]
    return ["", f"{TITLE}:", *aligned]


def decision_markdown(board: Any, cell_label: Callable[[Any], str]) -> list[str]:
    """The decision table as a Markdown table under its title."""
    rows = decision_lines(board, cell_label)
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    return ["", f"{TITLE}:", "", lines[0], "|" + "---|" * len(rows[0]), *lines[1:]]


def unpriced_notes(board: Any) -> list[str]:
    """One note per model with no price, naming the fix."""
    from mnemometer.llm._prices import no_price

    models = sorted(
        {
            m
            for r in board.rows
            for cell in r.cells.values()
            if cell.costs is not None
            for m in cell.costs.unpriced
        }
    )
    return [f"$ / correct answer: {no_price(m)}" for m in models]


__all__ = [
    "COLUMNS",
    "CellCosts",
    "cell_costs",
    "decision_lines",
    "decision_markdown",
    "decision_rows",
    "decision_text",
    "figure",
    "summary_costs",
    "unpriced_notes",
]
