"""A leaderboard across runs: systems × suites/datasets, with 95% intervals.

Built from run directories alone. A column is everything a number depends on but the
system: one suite (version, options) on one dataset content hash, one reader, the same
judges and the same scoring; runs that differ in any of it never share a column (nor a
cell). By default a cell is the run's declared headline: each item's headline value
averaged over its repeats, its interval by the one interval policy (cluster-robust where
items cluster), so a cell equals the run's own summary. Beside it, every cell carries what
the system costs there (:mod:`mnemometer.report._decision`): context tokens, latency,
storing cost per memory and dollars per correct answer.
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

from mnemometer.comparison._pairs import components
from mnemometer.config import StrictModel
from mnemometer.errors import MnemometerError
from mnemometer.log._reader import RunLog, read_log
from mnemometer.log._schema import HEADER_FILE, RunHeader
from mnemometer.report import _figures as fig
from mnemometer.report._board_labels import disambiguate
from mnemometer.report._decision import COLUMNS as COST_COLUMNS
from mnemometer.report._decision import (
    CellCosts,
    cell_costs,
    decision_markdown,
    decision_text,
    unpriced_notes,
)
from mnemometer.scoring.aggregate import run_summary
from mnemometer.scoring.headline import spec_of, values
from mnemometer.scoring.intervals import interval

LEADERBOARD_SCHEMA_VERSION = 2
HEADLINE = "headline"
"""The metric name that asks for each run's declared headline (what ``auto`` means)."""


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
    costs: CellCosts | None = None
    """What the system costs on this column: tokens, latency, storing, dollars."""


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
    """The metric its cells show: the runs' headline label (``hit@20``, ``accuracy
    (lenient judge)``), or the metric asked for."""
    label: str
    """Heading for people."""
    setup: dict[str, Any] = Field(default_factory=dict)
    """Reader, judges and scoring of its runs (columns that differ only here are told
    apart by them)."""


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
    # Everything but the system: runs judged, read or scored differently never share a cell.
    parts = {k: v for k, v in components(h).items() if k != "system"}
    return f"{h.suite}/v{h.suite_version}/{h.dataset.content_hash[:16]}/" + json.dumps(
        parts, sort_keys=True, default=str
    )


def _cell(runs: list[RunLog], metric: str) -> BoardCell:
    if metric == HEADLINE:
        return _headline_cell(runs)
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
    return _summary_cell(
        runs,
        lambda s: next(
            (m for m in s.overall if fig.label(m.name, m.k) == metric and m.unit is None), None
        ),
    )


def _headline_cell(runs: list[RunLog]) -> BoardCell:
    """The runs' declared headline: items averaged over repeats, the one interval policy."""
    spec = spec_of(runs[0].header)
    if spec.composite:
        return _summary_cell(runs, lambda s: s.headline)
    per_item: dict[tuple[str, str], list[float]] = defaultdict(list)
    cluster: dict[tuple[str, str], str] = {}
    for r in runs:
        vals, clusters, keys = values(r.items, spec_of(r.header))
        for v, c, k in zip(vals, clusters, keys, strict=True):
            per_item[k].append(v)
            cluster[k] = c
    if not per_item:
        return BoardCell(value=None)
    means = [sum(v) / len(v) for v in per_item.values()]
    labels = [cluster[k] for k in per_item]
    iv = interval(means, labels, binary=spec.binary and len(runs) == 1)
    method = iv.method if iv is not None else ""
    if len(runs) > 1:
        method += f", items averaged over {len(runs)} runs"
    return BoardCell(
        value=sum(means) / len(means),
        low=iv.low if iv is not None else None,
        high=iv.high if iv is not None else None,
        n=len(means),
        method=method,
    )


def _summary_cell(runs: list[RunLog], pick: Callable[[Any], Any]) -> BoardCell:
    """A run-level number read from each run's summary; over repeats, a t interval."""
    found = []
    for r in runs:
        m = pick(run_summary(r.path))
        if m is not None and m.value is not None:
            found.append(m)
    if len(found) == 1:
        m = found[0]
        iv = m.interval
        return BoardCell(
            value=m.value,
            low=iv.low if iv else None,
            high=iv.high if iv else None,
            n=m.n or 0,
            method=iv.method if iv else "",
        )
    if found:  # a run-level number over repeats: mean and t interval across runs
        e = fig.estimate("", [m.value for m in found])
        return BoardCell(value=e.value, low=e.low, high=e.high, n=e.n, method="t over runs")
    return BoardCell(value=None)


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
        metric: ``auto`` (each run's declared headline: what its summary leads with), or a
            metric such as ``recall@10`` or ``success``.
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
        m = HEADLINE if metric in ("auto", HEADLINE) else metric
        columns.append(
            BoardColumn(
                key=key,
                suite=h.suite,
                suite_version=h.suite_version,
                options=h.suite_options,
                dataset=h.dataset.name,
                dataset_version=h.dataset.version,
                dataset_hash=h.dataset.content_hash,
                metric=spec_of(h).label if m == HEADLINE else m,
                setup={k: v for k, v in components(h).items() if k in _SETUP},
                label=f"{h.suite} · {h.dataset.name} v{h.dataset.version}",
            )
        )
        for system, rs in systems.items():
            cell = _cell(rs, m)
            cell.costs = cell_costs([run_summary(r.path) for r in rs])
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
    disambiguate(columns)
    first = columns[0].key
    rows = [BoardRow(system=s, kind=kinds[s], cells=c) for s, c in cells.items()]

    def rank(r: BoardRow) -> tuple[int, float, str]:
        cell = r.cells.get(first)
        if cell is None or cell.value is None:
            return 1, 0.0, r.system
        return 0, -cell.value, r.system

    rows.sort(key=rank)
    board = Leaderboard(
        created_at=datetime.now(UTC), metric=metric, columns=columns, rows=rows, notes=notes
    )
    board.notes += unpriced_notes(board)
    return board


def _dataset_of(systems: dict[str, list[RunLog]]) -> tuple[str, str]:
    h = next(iter(systems.values()))[0].header
    return h.dataset.name, h.dataset.content_hash


_SETUP = ("reader", "judge", "scoring")


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
    lines += decision_text(b, cell_text)
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
    out += decision_markdown(b, cell_text)
    out += [
        "",
        "Each cell is the run's declared headline (the metric beside the column name); 95% "
        "intervals by the one policy: cluster-robust where items cluster, Wilson for rates, "
        "Student t for other means.",
    ]
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
            *(name for name, _, _ in COST_COLUMNS),
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
                    *(
                        "" if cell.costs is None else getattr(cell.costs, name)
                        for name, _, _ in COST_COLUMNS
                    ),
                ]
            )
    return buf.getvalue()


def leaderboard_json(b: Leaderboard) -> str:
    """The whole leaderboard."""
    return b.model_dump_json(indent=1)
