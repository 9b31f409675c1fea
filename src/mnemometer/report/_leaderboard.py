"""A leaderboard across runs: systems × suites/datasets, with 95% intervals.

Built from run directories alone. Runs over different data never share a column: a column
is one suite (and version and options) on one dataset content hash. Repeats of one system
in one column share one cell: each item is averaged over its repeats, so the interval's
unit is the item.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from mnemometer.config import StrictModel
from mnemometer.errors import MnemometerError
from mnemometer.log._reader import RunLog, read_log
from mnemometer.log._schema import HEADER_FILE, RunHeader
from mnemometer.report import _figures as fig

LEADERBOARD_SCHEMA_VERSION = 1
AUTO_METRICS = ("overall", "accuracy")
"""With ``metric="auto"`` a column shows the first of these its runs report, else success."""


class BoardRun(StrictModel):
    """One run behind a cell."""

    path: str
    """Run directory."""
    run_id: str
    """Run id."""
    repeat: int = 0
    """Repeat index."""
    report: str | None = None
    """Link to the run's HTML report, when one was written."""


class BoardCell(StrictModel):
    """One system on one column."""

    value: float | None
    """The metric (pooled over repeats)."""
    low: float | None = None
    """Lower bound of the 95% interval."""
    high: float | None = None
    """Upper bound."""
    n: int = 0
    """Items (each averaged over its repeats), or runs for run-level metrics."""
    method: str = ""
    """``wilson``, ``t``, or the suite's method."""
    runs: list[BoardRun] = Field(default_factory=list)
    """The runs."""


class BoardColumn(StrictModel):
    """One suite on one dataset (content hash), with one set of suite options."""

    key: str
    """Stable key: suite, version, dataset hash, options."""
    suite: str
    """Suite name."""
    suite_version: str
    """Suite version."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Suite options that determine what is measured."""
    dataset: str
    """Dataset name."""
    dataset_version: str
    """Dataset version."""
    dataset_hash: str
    """Dataset content hash."""
    metric: str
    """The metric its cells show (``success``, ``accuracy``, ``hit@10``, ...)."""
    label: str
    """Heading for people."""


class BoardRow(StrictModel):
    """One system under test."""

    system: str
    """Label: name, condition, options."""
    kind: str
    """``store`` or ``agent``."""
    cells: dict[str, BoardCell] = Field(default_factory=dict)
    """Column key → cell."""


class Leaderboard(StrictModel):
    """Systems × suites/datasets."""

    schema_version: int = LEADERBOARD_SCHEMA_VERSION
    """Leaderboard schema version (always first)."""
    kind: Literal["mnemometer-leaderboard"] = "mnemometer-leaderboard"
    """File kind."""
    created_at: datetime
    """When it was built (UTC)."""
    metric: str
    """The metric asked for (``auto`` picks one per column)."""
    columns: list[BoardColumn]
    """Columns, by suite then dataset."""
    rows: list[BoardRow]
    """Rows, best first on the first column."""
    notes: list[str] = Field(default_factory=list)
    """Caveats."""


def _systems(logs: list[RunLog]) -> list[str]:
    """Row labels: name and condition, plus the options that differ between runs of it.

    Options every run of a system shares (a default ``tie_seed``, a model path) say nothing
    a reader can choose between, so they stay in the run's header, not in the row name.
    """
    base = [
        h.system.name
        + (f" ({h.system.condition})" if h.system.condition not in (None, h.system.name) else "")
        for h in (r.header for r in logs)
    ]
    varying: dict[str, set[str]] = defaultdict(set)
    seen: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for b, r in zip(base, logs, strict=True):
        opts = {k: v for k, v in r.header.system.options.items() if not isinstance(v, dict)}
        for k in set(opts) | set(seen[b]):
            seen[b][k].add(json.dumps(opts.get(k), sort_keys=True, default=str))
    for b, keys in seen.items():
        varying[b] = {k for k, values in keys.items() if len(values) > 1}
    labels = []
    for b, r in zip(base, logs, strict=True):
        opts = r.header.system.options
        shown = ", ".join(f"{k}={opts.get(k)}" for k in sorted(varying[b]))
        labels.append(b + (f" [{shown}]" if shown else ""))
    return labels


def _column_key(h: RunHeader) -> str:
    opts = json.dumps(h.suite_options, sort_keys=True, default=str)
    return f"{h.suite}/v{h.suite_version}/{h.dataset.content_hash[:16]}/{opts}"


def _cell(runs: list[RunLog], metric: str) -> BoardCell:
    name, _, k = metric.partition("@")
    key = (name, int(k) if k.isdigit() else None)
    # Repeats are not independent items: average each item over its repeats first, so the
    # interval's unit is the item and n counts items.
    per_item: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in runs:
        for item in r.items:
            v = fig.item_score(item).get(key)
            if v is not None:
                per_item[(item.item_id, item.step or "")].append(v)
    if per_item:
        e = fig.estimate(metric, [sum(v) / len(v) for v in per_item.values()])
        method = e.method + (f", items averaged over {len(runs)} runs" if len(runs) > 1 else "")
        return BoardCell(value=e.value, low=e.low, high=e.high, n=e.n, method=method)
    from mnemometer.scoring.aggregate import run_summary

    found = []
    for r in runs:
        s = run_summary(r.path)
        m = next(
            (m for m in s.overall if fig.label(m.name, m.k) == metric and m.unit is None), None
        )
        if m is not None and m.value is not None:
            found.append(fig.from_metric(m, metric))
    if len(found) == 1:
        e = found[0]
        return BoardCell(value=e.value, low=e.low, high=e.high, n=e.n, method=e.method)
    if found:  # a run-level metric over repeats: mean and t interval across runs
        e = fig.estimate(metric, [x.value for x in found if x.value is not None])
        return BoardCell(value=e.value, low=e.low, high=e.high, n=e.n, method="t over runs")
    return BoardCell(value=None)


def _auto_metric(runs: list[RunLog]) -> str:
    from mnemometer.scoring.aggregate import run_summary

    names = {m.name for r in runs for m in run_summary(r.path).overall if m.unit is None}
    return next((n for n in AUTO_METRICS if n in names), "success")


def find_runs(paths: Sequence[str | Path]) -> list[Path]:
    """Run directories named by ``paths``, or found anywhere below them, in order.

    Raises:
        MnemometerError: a path that does not exist or holds no run directory.
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / HEADER_FILE).is_file():
            out.append(p)
        elif p.is_dir():
            found = sorted(h.parent for h in p.rglob(HEADER_FILE))
            if not found:
                raise MnemometerError(f"{p}: not a run directory and holds none")
            out += found
        else:
            raise MnemometerError(f"{p}: no such run directory")
    return list(dict.fromkeys(out))


def leaderboard(
    paths: Sequence[str | Path],
    *,
    metric: str = "auto",
    report_link: Callable[[Path, RunHeader], str | None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Leaderboard:
    """Build a leaderboard from run directories (or directories of them).

    Args:
        paths: run directories, or directories with run directories anywhere below.
        metric: ``success``, a metric such as ``accuracy`` or ``hit@10``, or ``auto``
            (per column: memtest's ``overall``, else ``accuracy``, else success).
        report_link: gives the link to a run's HTML report (or ``None``).
        progress: called with ``(runs read, runs)``.

    Raises:
        MnemometerError: no runs, or a path that is not a run directory.
    """
    found = find_runs(paths)
    if not found:
        raise MnemometerError("no run directories given")
    logs: list[RunLog] = []
    for i, p in enumerate(found):
        logs.append(read_log(p))
        if progress:
            progress(i + 1, len(found))
    by_col: dict[str, dict[str, list[RunLog]]] = defaultdict(lambda: defaultdict(list))
    kinds: dict[str, str] = {}
    for r, system in zip(logs, _systems(logs), strict=True):
        by_col[_column_key(r.header)][system].append(r)
        kinds[system] = r.header.system.kind
    columns: list[BoardColumn] = []
    cells: dict[str, dict[str, BoardCell]] = defaultdict(dict)
    notes: list[str] = []
    # Columns grouped by dataset (name, then content hash), then suite and options.
    order = sorted(by_col, key=lambda k: (_dataset_of(by_col[k]), k))
    for key, systems in ((k, by_col[k]) for k in order):
        runs = [r for rs in systems.values() for r in rs]
        h = runs[0].header
        m = _auto_metric(runs) if metric == "auto" else metric
        columns.append(
            BoardColumn(
                key=key,
                suite=h.suite,
                suite_version=h.suite_version,
                options=h.suite_options,
                dataset=h.dataset.name,
                dataset_version=h.dataset.version,
                dataset_hash=h.dataset.content_hash,
                metric=m,
                label=f"{h.suite} · {h.dataset.name} v{h.dataset.version}",
            )
        )
        for system, rs in systems.items():
            cell = _cell(rs, m)
            cell.runs = [
                BoardRun(
                    path=str(r.path),
                    run_id=r.header.run_id,
                    repeat=r.header.repeat,
                    report=report_link(r.path, r.header) if report_link else None,
                )
                for r in sorted(rs, key=lambda r: r.header.repeat)
            ]
            cells[system][key] = cell
            if any(r.header.status != "finished" for r in rs):
                notes.append(f"{system} on {columns[-1].label}: a run did not finish")
    _disambiguate(columns)
    first = columns[0].key
    rows = [BoardRow(system=s, kind=kinds[s], cells=c) for s, c in cells.items()]

    def rank(r: BoardRow) -> tuple[int, float, str]:
        cell = r.cells.get(first)
        if cell is None or cell.value is None:
            return 1, 0.0, r.system
        return 0, -cell.value, r.system

    rows.sort(key=rank)
    return Leaderboard(
        created_at=datetime.now(UTC), metric=metric, columns=columns, rows=rows, notes=notes
    )


def _dataset_of(systems: dict[str, list[RunLog]]) -> tuple[str, str]:
    h = next(iter(systems.values()))[0].header
    return h.dataset.name, h.dataset.content_hash


def _disambiguate(columns: list[BoardColumn]) -> None:
    """Columns sharing a label get the dataset hash, then the options that differ."""
    for same in _shared_labels(columns):
        for c in same:
            c.label += f" ({c.dataset_hash[:8]})"
        for group in _shared_labels(same):
            keys = sorted({k for c in group for k in c.options})
            for c in group:
                diff = [k for k in keys if len({json.dumps(g.options.get(k)) for g in group}) > 1]
                c.label += " " + ", ".join(f"{k}={c.options.get(k)}" for k in diff)


def _shared_labels(columns: list[BoardColumn]) -> list[list[BoardColumn]]:
    """The groups of two or more columns with one label, in first-seen order."""
    by_label: dict[str, list[BoardColumn]] = defaultdict(list)
    for c in columns:
        by_label[c.label].append(c)
    return [same for same in by_label.values() if len(same) > 1]


def cell_text(cell: BoardCell | None, digits: int = 3) -> str:
    """``0.812 [0.74, 0.87] n=200``, or empty."""
    if cell is None or cell.value is None:
        return ""
    ci = (
        ""
        if cell.low is None or cell.high is None
        else f" [{cell.low:.{digits}f}, {cell.high:.{digits}f}]"
    )
    return f"{cell.value:.{digits}f}{ci} n={cell.n}"


def leaderboard_text(b: Leaderboard) -> str:
    """For people at a terminal."""
    cols = ["system", *(f"{c.label} · {c.metric}" for c in b.columns)]
    rows = [[r.system, *(cell_text(r.cells.get(c.key)) for c in b.columns)] for r in b.rows]
    widths = [max(len(x[i]) for x in [cols, *rows]) for i in range(len(cols))]
    lines = [
        "  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)) for row in [cols, *rows]
    ]
    return "\n".join([*lines, *(f"note: {n}" for n in b.notes)])


def leaderboard_markdown(b: Leaderboard) -> str:
    """For documents: one table, cells link to run reports when they were written."""
    head = ["system", *(f"{c.label} · {c.metric} (sha256 {c.dataset_hash[:8]})" for c in b.columns)]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in b.rows:
        cells = []
        for c in b.columns:
            cell = r.cells.get(c.key)
            text = cell_text(cell)
            link = cell.runs[0].report if cell and cell.runs else None
            cells.append(f"[{text}]({link})" if text and link else text)
        out.append("| " + " | ".join([r.system, *cells]) + " |")
    out += ["", "95% intervals: Wilson for rates, Student t for other means."]
    out += [f"- {n}" for n in b.notes]
    return "\n".join(out) + "\n"


def leaderboard_csv(b: Leaderboard) -> str:
    """One line per cell, for spreadsheets."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "system",
            "kind",
            "suite",
            "suite_version",
            "dataset",
            "dataset_version",
            "dataset_hash",
            "metric",
            "value",
            "ci_low",
            "ci_high",
            "n",
            "method",
            "runs",
        ]
    )
    cols = {c.key: c for c in b.columns}
    for r in b.rows:
        for key, cell in r.cells.items():
            c = cols[key]
            w.writerow(
                [
                    r.system,
                    r.kind,
                    c.suite,
                    c.suite_version,
                    c.dataset,
                    c.dataset_version,
                    c.dataset_hash,
                    c.metric,
                    cell.value,
                    cell.low,
                    cell.high,
                    cell.n,
                    cell.method,
                    " ".join(x.path for x in cell.runs),
                ]
            )
    return buf.getvalue()


def leaderboard_json(b: Leaderboard) -> str:
    """The whole leaderboard."""
    return b.model_dump_json(indent=1)
