"""``mnemometer log schema``: the run-log and dataset JSON Schemas."""

from __future__ import annotations

import json

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
