"""``mnemometer doctor [SUITE]``: is this machine (and this suite) ready to run?"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mnemometer.cli._common import conditions_options, format_option, path_option


@click.command("doctor")
@click.argument("suite", required=False, type=click.Path(path_type=Path))
@path_option("--memories", help="Seed memories overriding the manifest's.")
@conditions_options(
    "Condition to check (repeatable; default: the manifest's).",
    "TOML file mapping condition names to stores.",
)
@format_option("doctor", "Output format.")
def doctor_cmd(
    suite: Path | None,
    memories: Path | None,
    conditions: tuple[str, ...],
    conditions_file: Path | None,
    fmt: str,
) -> None:
    """Check the environment and, when given, a SUITE directory: one line per check.

    Exit code: 0 when nothing failed (warnings allowed), 1 when a check failed, 2 for bad
    input (SUITE is not a suite directory).

    Example: mnemometer doctor examples/suites/team-memory
    """
    from mnemometer.report import render
    from mnemometer.workflows import doctor

    checks = doctor(
        suite,
        memories=memories,
        conditions=list(conditions) or None,
        conditions_file=conditions_file,
    )
    click.echo(render(checks, fmt))
    if not checks.ok:
        sys.exit(1)
