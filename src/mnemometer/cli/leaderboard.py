"""``mnemometer leaderboard RUNS...``: systems × suites/datasets with 95% intervals."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from mnemometer.cli._common import format_of, format_option, out_option, write_output
from mnemometer.cli._progress import PhaseProgress


@click.command("leaderboard")
@click.argument("runs", nargs=-1, required=True)
@click.option(
    "--metric",
    default="auto",
    show_default=True,
    help="What each cell shows: success, a metric such as accuracy or hit@10, or auto "
    "(each run's declared headline, with its interval).",
)
@format_option(
    "leaderboard",
    "text, md, csv, json or html (default: from --out's suffix, else text).",
    default=None,
)
@out_option("Write here instead of printing.")
@click.option(
    "--run-reports/--no-run-reports",
    default=True,
    show_default=True,
    help="With an HTML or Markdown file, also write each run's HTML report beside it "
    "(FILE_runs/RUN_ID.html), so every cell links to its run.",
)
def leaderboard_cmd(
    runs: tuple[str, ...], metric: str, fmt: str | None, out: Path | None, run_reports: bool
) -> None:
    """Rank systems across RUNS (run directories or directories of them).

    Columns are suites on datasets, keyed by the dataset's content hash, so runs over
    different data never share a column; rows are systems (store or agent, condition,
    options); repeats pool into one cell.

    Example: mnemometer leaderboard runs/ --format html -o leaderboard.html
    """
    from mnemometer.report import leaderboard, render, report

    fmt = fmt or format_of(out, "leaderboard") or "text"
    link_dir = None
    if out is not None and run_reports and fmt in ("html", "md"):
        link_dir = out.parent / f"{out.stem}_runs"
    links: dict[Path, Path] = {}

    def link(path: Path, header: Any) -> str | None:
        if link_dir is None or out is None:
            return None
        target = link_dir / f"{header.run_id}.html"
        links[path] = target
        return Path(os.path.relpath(target, out.parent)).as_posix()

    with PhaseProgress("leaderboard") as progress:
        board = leaderboard(
            runs,
            metric=metric,
            report_link=link,
            progress=lambda done, total: progress("runs", done, total),
        )
        for i, (path, target) in enumerate(links.items()):
            progress("run reports", i, len(links))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(report(path, "html"), "utf-8")
        if links:
            progress("run reports", len(links), len(links))
    text = render(board, fmt)
    if out is None:
        click.echo(text)
    else:
        write_output(out, text, "leaderboard")
        if links:
            click.echo(f"run reports: {link_dir}/ ({len(links)})", err=True)
