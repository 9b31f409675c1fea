"""``mnemometer export RUN_DIR --format hypotheses -o FILE`` (wraps the report export)."""

from __future__ import annotations

from pathlib import Path

import click

from mnemometer.cli._common import out_option


@click.command("export")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["hypotheses"]),
    default="hypotheses",
    show_default=True,
    help="hypotheses: LongMemEval's JSONL (question_id, question, hypothesis[, category]).",
)
@out_option("File to write.", required=True)
def export_cmd(run_dir: Path, fmt: str, out: Path) -> None:
    """Write RUN_DIR's answers, one JSON line per question."""
    from mnemometer.report import export_run

    n = export_run(run_dir, out, fmt)
    click.echo(f"{n} questions -> {out}", err=True)
