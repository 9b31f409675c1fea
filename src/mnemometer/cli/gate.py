"""``mnemometer gate COMPARISON --policy FILE``: the verdict is the exit code."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mnemometer.cli._common import format_option, path_option


@click.command("gate")
@click.argument("comparison", type=click.Path(path_type=Path))
@path_option("--policy", "-p", required=True, help="TOML gate policy.")
@format_option("gate", "Output format.")
def gate_cmd(comparison: Path, policy: Path, fmt: str) -> None:
    """Check a COMPARISON JSON (from `mnemometer compare -o`) against a gate policy.

    Exit code: 0 pass, 1 fail, 2 bad input (malformed comparison or policy, unknown keys).

    Example: mnemometer gate cmp.json --policy gates/release.toml
    """
    from mnemometer.comparison import gate
    from mnemometer.report import render

    result = gate(comparison, policy)
    click.echo(render(result, fmt))
    if not result.passed:
        sys.exit(1)
