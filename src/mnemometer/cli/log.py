"""``mnemometer log``: the run-log and dataset JSON Schemas, and recomputing a summary."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.group("log")
def log_group() -> None:
    """Inspect the run-log format."""


@log_group.command("schema")
@click.option("--dataset", is_flag=True, help="Print the native dataset schema instead.")
def schema_cmd(dataset: bool) -> None:
    """Print the JSON Schema of run logs (header and item line)."""
    if dataset:
        from mnemometer.datasets import dataset_json_schema

        click.echo(json.dumps(dataset_json_schema(), indent=1))
        return
    from mnemometer.log import log_json_schema

    click.echo(json.dumps(log_json_schema(), indent=1))


@log_group.command("summarize")
@click.argument("run_dir", type=click.Path(path_type=Path))
def summarize_cmd(run_dir: Path) -> None:
    """Recompute RUN_DIR's summary.json with the scorers its header records.

    No suite and no system are needed; a run written before scoring was a stage is
    summarised by its suite (then it needs the suite's inputs and extras).

    Reports never need this: they read summary.json, or summarise the items generically.
    Use it after resuming by hand, or to upgrade a run written by an older mnemometer.
    """
    from mnemometer.runner import resummarize

    summary = resummarize(run_dir)
    click.echo(f"{run_dir}/summary.json: {summary.results} results, source {summary.source}")
