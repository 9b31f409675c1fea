"""``mnemometer archive SUITE RUNS... --out FILE.tar.gz``: a citable experiment bundle."""

from __future__ import annotations

from pathlib import Path

import click

from mnemometer.cli._common import out_option, path_option


@click.command("archive")
@click.argument("suite", required=False, type=click.Path(path_type=Path))
@click.argument("runs", nargs=-1, type=click.Path(path_type=Path))
@out_option("The tar.gz to write.")
@path_option("--verify", help="Check an existing archive against its SHA-256 manifest instead.")
def archive_cmd(
    suite: Path | None, runs: tuple[Path, ...], out: Path | None, verify: Path | None
) -> None:
    """Bundle SUITE and RUNS (run directories, or directories of them) as a tar.gz.

    The archive holds suite/, runs/ and manifest.json (every file's SHA-256 and size).

    Examples: mnemometer archive examples/suites/team-memory runs/team -o team.tar.gz;
    mnemometer archive --verify team.tar.gz
    """
    from mnemometer.errors import MnemometerError
    from mnemometer.workflows._reproduce import archive, verify_archive

    if verify is not None:
        m = verify_archive(verify)
        click.echo(
            f"ok: {len(m.files)} files match {verify} ({m.suite_name}, "
            f"suite {m.suite_checksum[:12]}, {m.runs} runs)"
        )
        return
    if suite is None or not runs or out is None:
        raise MnemometerError("archive needs SUITE, at least one run directory and --out FILE")
    m = archive(suite, list(runs), out)
    click.echo(f"{out}: {len(m.files)} files, {m.runs} runs, suite {m.suite_checksum[:12]}")
