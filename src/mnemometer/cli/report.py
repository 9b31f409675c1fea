"""``mnemometer report RUN_DIR``: render a run (wraps :func:`mnemometer.report`)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("report")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "md", "json"]),
    default="text",
    show_default=True,
    help="text for people, md for documents, json for machines.",
)
def report_cmd(run_dir: Path, fmt: str) -> None:
    """Show the results of RUN_DIR: every aggregated metric, by group, with counts."""
    from mnemometer.report import report

    click.echo(report(run_dir, fmt))  # type: ignore[arg-type]
