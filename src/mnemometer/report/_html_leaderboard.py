"""The HTML leaderboard: a sortable table and one interval chart per column."""

from __future__ import annotations

from mnemometer.report import _charts as charts
from mnemometer.report._decision import COLUMNS, TITLE, decision_rows, figure
from mnemometer.report._html import esc, interval, notes, num, page, table, when
from mnemometer.report._leaderboard import BoardCell, Leaderboard, cell_text


def _cell(cell: BoardCell | None) -> tuple[str, float | None, bool]:
    if cell is None or cell.value is None:
        return "", None, True
    ci = interval(cell.low, cell.high)
    text = f'<b>{num(cell.value)}</b><br><span class="ci">{ci} n={cell.n}</span>'.replace(
        "> n=", ">n="
    )
    links = [r for r in cell.runs if r.report]
    if links:
        first, rest = links[0], links[1:]
        text = f'<a href="{esc(first.report)}" title="{esc(first.path)}">{text}</a>'
        text += "".join(
            f' <a class="ci" href="{esc(r.report)}" title="{esc(r.path)}">#{i}</a>'
            for i, r in enumerate(rest, start=2)
        )
    elif cell.runs:
        text = f'<span title="{esc(", ".join(r.path for r in cell.runs))}">{text}</span>'
    return text, cell.value, True


def leaderboard_html(b: Leaderboard) -> str:
    """A sortable table with a chart per column; each cell links to its run's report."""
    charts.require()
    head = ["system", "kind"]
    for c in b.columns:
        head.append(f"{c.suite} · {c.metric}")
    # Columns come grouped by dataset content hash; the upper row names each dataset.
    spans: list[tuple[str, int]] = [("", 2)]
    for c in b.columns:
        label = f"{c.dataset} v{c.dataset_version} · sha256 {c.dataset_hash[:8]}"
        if len(spans) > 1 and spans[-1][0] == label:
            spans[-1] = (label, spans[-1][1] + 1)
        else:
            spans.append((label, 1))
    rows = [[r.system, r.kind, *(_cell(r.cells.get(c.key)) for c in b.columns)] for r in b.rows]
    legend = "".join(
        f"<tr><td>{esc(c.label)}</td><td>{esc(c.suite)} v{esc(c.suite_version)}</td>"
        f"<td>{esc(c.dataset)} v{esc(c.dataset_version)}</td>"
        f'<td class="mono" title="{esc(c.dataset_hash)}">{esc(c.dataset_hash[:16])}…</td>'
        f"<td>{esc(', '.join(f'{k}={v}' for k, v in c.options.items()))}</td>"
        f"<td>{esc(c.metric)}</td></tr>"
        for c in b.columns
    )
    plots = []
    for c in b.columns:
        pts = [
            {
                "group": r.system,
                "metric": f"{c.label} · {c.metric}",
                "value": cell.value,
                "low": cell.low,
                "high": cell.high,
                "n": cell.n,
            }
            for r in b.rows
            if (cell := r.cells.get(c.key)) is not None and cell.value is not None
        ]
        if pts:
            plots.append(charts.dot_ci(pts, y_title="system", columns=1))
    runs = sum(len(cell.runs) for r in b.rows for cell in r.cells.values())
    body = [
        "<h1>Leaderboard</h1>",
        f'<p class="sub">{len(b.rows)} systems × {len(b.columns)} suite/dataset columns from '
        f"{runs} runs · {esc(when(b.created_at))}. A column is one suite on one dataset "
        "content hash: runs over different data never share one. Click a heading to sort; "
        "a cell links to its run's report.</p>",
        notes(b.notes, "Notes"),
        '<section id="board"><h2>Systems × suites and datasets (95% CI)</h2>',
        table(head, rows, numeric=range(2, len(head)), cls="board", spans=spans),
        '<p class="sub">Intervals: Wilson for rates, Student t for other means. Runs of one '
        "system on one column share a cell: each item is averaged over them first, so n counts "
        "items; #2, #3 link the other runs.</p></section>",
        _decision(b),
        '<section id="columns"><h2>Columns</h2><div class="scroll"><table><thead><tr>'
        "<th>column</th><th>suite</th><th>dataset</th><th>dataset sha256</th><th>options</th>"
        f"<th>metric</th></tr></thead><tbody>{legend}</tbody></table></div></section>",
        f'<section id="charts"><h2>By column</h2><div class="row">{"".join(plots)}</div></section>'
        if plots
        else "",
    ]
    return page("Leaderboard — mnemometer", "".join(body), generator="mnemometer leaderboard")


def _decision(b: Leaderboard) -> str:
    """The decision table: every figure sorts by its value; a missing one shows ``–``."""
    head, rows = decision_rows(b, cell_text)
    lead = len(head) - len(COLUMNS)
    body = []
    for cells, cell, costs in rows:
        row: list = [*cells[:-1], (cells[-1], cell.value)]
        row += [(figure(getattr(costs, n), fmt), getattr(costs, n)) for n, _, fmt in COLUMNS]
        body.append(row)
    return (
        f'<section id="decision"><h2>{esc(TITLE)}</h2>'
        + table(head, body, numeric=range(lead - 1, len(head)), cls="board")
        + '<p class="sub">Per question: context tokens (the reader model\'s tokenizer, or the '
        "estimate of 4 characters per token, as each run says), search and answer latency. "
        "Per memory stored: LLM calls, tokens and seconds (– where the store does not meter its "
        "LLM calls). Dollars: billed tokens times the price map each run pinned. Click a "
        "heading to sort.</p></section>"
    )
