"""``mnemometer report RUN_DIR``: render a run (wraps :func:`mnemometer.report`)."""

from __future__ import annotations

from pathlib import Path

import click

from mnemometer.cli._common import format_of, format_option, out_option, write_output


@click.command("report")
@click.argument("run_dir", type=click.Path(path_type=Path))
@format_option(
    "run",
    "text for people, md for documents, json for machines, html for a page to open "
    "(default: from --out's suffix, else text).",
    default=None,
)
@out_option("Write the report to this file instead of printing it.")
@click.option(
    "--group-by",
    "group_by",
    multiple=True,
    metavar="FIELD",
    help="Break every metric down by this item metadata field too (e.g. novel, book); repeatable.",
)
def report_cmd(run_dir: Path, fmt: str | None, out: Path | None, group_by: tuple[str, ...]) -> None:
    """Show the results of RUN_DIR: every aggregated metric, by group, with counts.

    Reads the run directory only. The HTML page is one file with everything inline (charts,
    styles, every item, searchable); it opens from disk and loads nothing from the network.

    Example: mnemometer report runs/demo/demo-en-bm25 --format html -o report.html
    """
    from mnemometer.report import report

    fmt = fmt or format_of(out, "run") or "text"
    text = report(run_dir, fmt, group_by)
    if out is None:
        click.echo(text)
    else:
        write_output(out, text, "report")
